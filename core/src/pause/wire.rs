//! A checkpoint as it is written: versioned, compact, and read back from any older format.
//!
//! Format 3 (this version) writes the history once (a request being prepared refers to it
//! unless a hook changed its messages), no tool schema (a request names its tools; the agent
//! that resumes has their specs), the chain's members nested as its state is (so a changed
//! chain can take the state over, see `members`), and no serde attribute that only JSON
//! understands (no `flatten`, no internally tagged enum): any self-describing serde format
//! reads and writes it. Format 2 is migrated when read; a newer format is refused.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{Checkpoint, Interrupt, Members, Position};
use super::{Counters, ToolAnswer};
use crate::ids::ThreadId;
use crate::message::{Message, ToolCall, ToolResult};
use crate::model::ToolSpec;
use crate::model::{
    ModelRequest, ModelResponse, ModelSettings, PromptCache, ResponseFormat, ToolChoice,
};
use crate::shared::Shared;

/// The version of the checkpoint format this crate writes. 3: the history once, tools by
/// name, members nested, counters apart, positions externally tagged.
pub(crate) const FORMAT: u32 = 3;

/// The oldest format this crate reads (and migrates).
pub(crate) const OLDEST: u32 = 2;

/// A checkpoint as written, borrowing from the checkpoint when writing.
#[derive(Serialize, Deserialize)]
struct Wire<'a> {
    format: u32,
    id: Cow<'a, str>,
    run_id: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thread: Option<Cow<'a, ThreadId>>,
    chain: Cow<'a, Members>,
    /// Migrated from format 2, which recorded the members without their nesting: such a
    /// checkpoint resumes only on a chain of the same members.
    #[serde(default, skip_serializing_if = "is_false")]
    flat_chain: bool,
    messages: Cow<'a, Shared<Vec<Message>>>,
    state: Cow<'a, Value>,
    thread_state: Cow<'a, Value>,
    counters: Counters,
    position: WirePosition<'a>,
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    interrupts: Cow<'a, [Interrupt]>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    run_context: Cow<'a, BTreeMap<String, Value>>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_false(value: &bool) -> bool {
    !*value
}

/// [`Position`] as written.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WirePosition<'a> {
    BeforeModel {
        member: usize,
        request: WireRequest<'a>,
    },
    AfterModel {
        member: usize,
        response: Cow<'a, ModelResponse>,
        #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
        answered: Cow<'a, [ToolResult]>,
    },
    Tools {
        calls: Cow<'a, [ToolCall]>,
        results: Cow<'a, [Option<ToolResult>]>,
        #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
        answers: Cow<'a, [ToolAnswer]>,
    },
    Step,
}

/// A request being prepared, as written: its messages only when a hook made them differ from
/// the history, its tools by name.
#[derive(Serialize, Deserialize)]
struct WireRequest<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    messages: Option<Cow<'a, Shared<Vec<Message>>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    system_prompt: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Cow<'a, str>>,
    #[serde(default)]
    tool_choice: Cow<'a, ToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response_format: Option<Cow<'a, ResponseFormat>>,
    #[serde(default)]
    settings: Cow<'a, ModelSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prompt_cache: Option<Cow<'a, PromptCache>>,
}

impl Serialize for Checkpoint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let position = match &self.position {
            Position::BeforeModel { request, member } => WirePosition::BeforeModel {
                member: *member,
                request: WireRequest::of(request, &self.messages),
            },
            Position::AfterModel {
                response,
                member,
                answered,
            } => WirePosition::AfterModel {
                member: *member,
                response: Cow::Borrowed(response),
                answered: Cow::Borrowed(answered),
            },
            Position::Tools {
                calls,
                results,
                answers,
            } => WirePosition::Tools {
                calls: Cow::Borrowed(calls),
                results: Cow::Borrowed(results),
                answers: Cow::Borrowed(answers),
            },
            Position::Step => WirePosition::Step,
        };
        Wire {
            format: FORMAT,
            id: Cow::Borrowed(&self.id),
            run_id: Cow::Borrowed(&self.run_id),
            thread: self.thread.as_ref().map(Cow::Borrowed),
            chain: Cow::Borrowed(&self.chain),
            flat_chain: self.flat_chain,
            messages: Cow::Borrowed(&self.messages),
            state: Cow::Borrowed(&self.state),
            thread_state: Cow::Borrowed(&self.thread_state),
            counters: self.counters,
            position,
            interrupts: Cow::Borrowed(&self.interrupts),
            run_context: Cow::Borrowed(&self.run_context),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Checkpoint {
    /// Reads any format from 2 to the current one (migrating older ones) and refuses the
    /// others: the version is checked on every way in, whatever the serde format.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = Value::deserialize(deserializer)?;
        let value = migrate(value).map_err(D::Error::custom)?;
        let wire = Wire::deserialize(value).map_err(D::Error::custom)?;
        wire.into_checkpoint().map_err(D::Error::custom)
    }
}

impl<'a> WireRequest<'a> {
    fn of(request: &'a ModelRequest, history: &Shared<Vec<Message>>) -> Self {
        let same_history =
            Shared::ptr_eq(&request.messages, history) || request.messages == *history;
        WireRequest {
            model: request.model.as_deref().map(Cow::Borrowed),
            messages: (!same_history).then_some(Cow::Borrowed(&request.messages)),
            system_prompt: request.system_prompt.as_deref().map(Cow::Borrowed),
            tools: request
                .tools
                .iter()
                .map(|spec| Cow::Borrowed(spec.name.as_str()))
                .collect(),
            tool_choice: Cow::Borrowed(&request.tool_choice),
            response_format: request.response_format.as_ref().map(Cow::Borrowed),
            settings: Cow::Borrowed(&request.settings),
            prompt_cache: request.prompt_cache.as_deref().map(Cow::Borrowed),
        }
    }

    fn into_request(self, history: &Shared<Vec<Message>>) -> ModelRequest {
        ModelRequest {
            model: self.model.map(Cow::into_owned),
            messages: self
                .messages
                .map_or_else(|| history.clone(), Cow::into_owned),
            system_prompt: self.system_prompt.map(Cow::into_owned),
            tools: Shared::new(self.tools.into_iter().map(named_spec).collect()),
            tool_choice: self.tool_choice.into_owned(),
            response_format: self.response_format.map(Cow::into_owned),
            settings: self.settings.into_owned(),
            prompt_cache: self.prompt_cache.map(|cache| Box::new(cache.into_owned())),
            padding: crate::model::Padding::default(),
        }
    }
}

/// A tool's spec by name only: the agent that resumes puts its own spec of the tool there.
pub(crate) fn named_spec(name: impl Into<String>) -> ToolSpec {
    ToolSpec::new(name, String::new(), Value::Null)
}

impl Wire<'_> {
    /// The checkpoint, unless its parts contradict each other (it was corrupted, or written
    /// by hand): what would otherwise fail deep in a resume is refused here.
    fn into_checkpoint(self) -> Result<Checkpoint, Unreadable> {
        let messages = self.messages.into_owned();
        let position = match self.position {
            WirePosition::BeforeModel { member, request } => Position::BeforeModel {
                request: request.into_request(&messages),
                member,
            },
            WirePosition::AfterModel {
                member,
                response,
                answered,
            } => Position::AfterModel {
                response: response.into_owned(),
                member,
                answered: answered.into_owned(),
            },
            WirePosition::Tools { calls, results, .. } if results.len() != calls.len() => {
                return Err(Unreadable::Inconsistent(
                    "its tool calls and their results are not as many",
                ));
            }
            WirePosition::Tools {
                calls,
                results,
                answers,
            } => Position::Tools {
                calls: calls.into_owned(),
                results: results.into_owned(),
                answers: answers.into_owned(),
            },
            WirePosition::Step => Position::Step,
        };
        Ok(Checkpoint {
            id: self.id.into_owned(),
            run_id: self.run_id.into_owned(),
            thread: self.thread.map(Cow::into_owned),
            chain: self.chain.into_owned(),
            flat_chain: self.flat_chain,
            messages,
            state: self.state.into_owned(),
            thread_state: self.thread_state.into_owned(),
            counters: self.counters,
            position,
            interrupts: self.interrupts.into_owned(),
            run_context: self.run_context.into_owned(),
        })
    }
}

/// Why a checkpoint's format cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Not a checkpoint at all (no format number).
    NoFormat,
    /// A format this version does not read.
    Format(u32),
    /// A format-2 checkpoint that is not what format 2 wrote.
    Malformed(&'static str),
    /// A checkpoint whose parts contradict each other.
    Inconsistent(&'static str),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::NoFormat => f.write_str("not a checkpoint: it has no format number"),
            Unreadable::Format(found) => write!(
                f,
                "checkpoint format {found} is not supported (this version reads formats \
                 {OLDEST} to {FORMAT})"
            ),
            Unreadable::Malformed(what) => write!(f, "not a format-2 checkpoint: {what}"),
            Unreadable::Inconsistent(what) => write!(f, "an inconsistent checkpoint: {what}"),
        }
    }
}

/// The format of a checkpoint's serialized form, if it says one.
pub(crate) fn format_of(value: &Value) -> Option<u64> {
    value.get("format").and_then(Value::as_u64)
}

/// `value` in the current format: as it is, or migrated from an older one.
pub(crate) fn migrate(value: Value) -> Result<Value, Unreadable> {
    match format_of(&value) {
        None => Err(Unreadable::NoFormat),
        Some(found) if found == u64::from(FORMAT) => Ok(value),
        Some(2) => from_format_2(value),
        Some(found) => Err(Unreadable::Format(u32::try_from(found).unwrap_or(u32::MAX))),
    }
}

/// The counters, which format 2 wrote at the top level.
const COUNTERS: [&str; 7] = [
    "step",
    "model_calls",
    "tool_calls",
    "usage",
    "runs",
    "pauses",
    "run_start",
];

/// Format 2 → 3: the counters moved into `counters`, the members flat (their nesting was not
/// recorded), positions tagged by an `at` field become tagged by name, a request's tool specs
/// become their names and its messages go when they are the history.
fn from_format_2(value: Value) -> Result<Value, Unreadable> {
    let Value::Object(mut checkpoint) = value else {
        return Err(Unreadable::Malformed("not an object"));
    };
    checkpoint.insert("format".to_owned(), json!(FORMAT));
    let counters: Map<String, Value> = COUNTERS
        .iter()
        .filter_map(|&key| Some((key.to_owned(), checkpoint.remove(key)?)))
        .collect();
    checkpoint.insert("counters".to_owned(), Value::Object(counters));
    checkpoint.insert("flat_chain".to_owned(), json!(true));
    let Some(Value::Object(mut position)) = checkpoint.remove("position") else {
        return Err(Unreadable::Malformed("no position"));
    };
    let Some(Value::String(at)) = position.remove("at") else {
        return Err(Unreadable::Malformed("a position without `at`"));
    };
    if at == "before_model"
        && let Some(Value::Object(request)) = position.get_mut("request")
    {
        if let Some(Value::Array(tools)) = request.remove("tools") {
            let names = tools
                .into_iter()
                .filter_map(|tool| tool.get("name").cloned())
                .collect();
            request.insert("tools".to_owned(), Value::Array(names));
        }
        if request.get("messages") == checkpoint.get("messages") {
            request.remove("messages");
        }
    }
    checkpoint.insert("position".to_owned(), json!({ at: position }));
    Ok(Value::Object(checkpoint))
}
