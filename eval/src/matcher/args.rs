//! How the arguments of two tool calls are compared (agentevals' `tool_args_match_mode` and
//! `tool_args_match_overrides`).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json_eq::json_eq;

/// How two calls' arguments must compare for the calls to match.
///
/// The comparison is called as agentevals calls it, `(left, right)`: in `strict`, `superset`
/// and the first pass of `unordered`, left is the actual call's arguments and right the
/// expected one's; in `subset` and the second pass of `unordered` (where agentevals asks
/// whether the expected calls are a superset of the actual ones) the two are swapped. So
/// `Subset` in `subset` mode asks that the *expected* arguments be within the actual ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ArgsMatch {
    /// Equal (as Python's `==`: `1` equals `1.0`).
    #[default]
    Exact,
    /// Not compared: the names decide.
    Ignore,
    /// Every key of left is in right, with an equal value.
    Subset,
    /// Every key of right is in left, with an equal value.
    Superset,
}

impl ArgsMatch {
    pub(crate) fn compare(self, left: &Value, right: &Value) -> bool {
        match self {
            ArgsMatch::Exact => json_eq(left, right),
            ArgsMatch::Ignore => true,
            ArgsMatch::Subset => within(left, right),
            ArgsMatch::Superset => within(right, left),
        }
    }

    /// Its name in agentevals.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ArgsMatch::Exact => "exact",
            ArgsMatch::Ignore => "ignore",
            ArgsMatch::Subset => "subset",
            ArgsMatch::Superset => "superset",
        }
    }
}

/// Every key of `part` is in `whole` with an equal value. Arguments that are not objects
/// (agentevals would fail on them) are compared whole.
fn within(part: &Value, whole: &Value) -> bool {
    match (part, whole) {
        (Value::Object(part), Value::Object(whole)) => part
            .iter()
            .all(|(key, value)| whole.get(key).is_some_and(|w| json_eq(value, w))),
        _ => json_eq(part, whole),
    }
}

impl fmt::Display for ArgsMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ArgsMatch {
    type Err = super::UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "exact" => Ok(ArgsMatch::Exact),
            "ignore" => Ok(ArgsMatch::Ignore),
            "subset" => Ok(ArgsMatch::Subset),
            "superset" => Ok(ArgsMatch::Superset),
            other => Err(super::UnknownMode::new(
                other,
                "`exact`, `ignore`, `subset` or `superset`",
            )),
        }
    }
}

/// How one tool's arguments are compared, instead of the matcher's [`ArgsMatch`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ArgsOverride {
    /// Another mode.
    Mode(ArgsMatch),
    /// Only these keys, each a dotted path into nested objects (`"time.start"`); a path
    /// missing on both sides matches. An empty list overrides nothing (as in agentevals).
    Keys(Vec<String>),
    /// A function of yours, called `(left, right)` as [`ArgsMatch`] says.
    Custom(ArgsComparator),
}

impl ArgsOverride {
    /// `None` when this override stands for nothing and the matcher's mode applies.
    pub(crate) fn compare(&self, left: &Value, right: &Value) -> Option<bool> {
        match self {
            ArgsOverride::Mode(mode) => Some(mode.compare(left, right)),
            ArgsOverride::Keys(keys) if keys.is_empty() => None,
            ArgsOverride::Keys(keys) => {
                Some(
                    keys.iter()
                        .all(|key| match (nested(left, key), nested(right, key)) {
                            (Some(l), Some(r)) => json_eq(l, r),
                            (l, r) => l.is_none() && r.is_none(),
                        }),
                )
            }
            ArgsOverride::Custom(comparator) => Some((comparator.0)(left, right)),
        }
    }
}

/// The value at a dotted path; `None` where a part is missing, is `null`, or its parent is not
/// an object (agentevals reads all three as Python's `None`).
fn nested<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |current, part| {
        current.as_object()?.get(part).filter(|v| !v.is_null())
    })
}

/// A comparison of two calls' arguments written by the application
/// ([`ArgsOverride::Custom`]).
#[derive(Clone)]
pub struct ArgsComparator(Arc<Compare>);

type Compare = dyn Fn(&Value, &Value) -> bool + Send + Sync;

impl ArgsComparator {
    /// The comparison `f(left, right)`.
    pub fn new(f: impl Fn(&Value, &Value) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }
}

impl fmt::Debug for ArgsComparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ArgsComparator(..)")
    }
}
