//! The W3C trace context a request carries in its `_meta` (SEP-414), so that a server's
//! spans join the trace of the agent run that called it.
//!
//! This crate depends on `tracing` only, not on OpenTelemetry: the application, which owns
//! the OpenTelemetry setup (with `tracing-opentelemetry`, say), says what the current trace
//! context is ([`McpServer::trace_context`](crate::McpServer::trace_context)), and the client
//! asks it at each request.

use std::fmt;
use std::sync::Arc;

use rmcp::model::RequestMetaObject;

/// The W3C Trace Context of the work a request is part of: its `traceparent`, and its
/// `tracestate` when there is one. What an
/// [`McpServer::trace_context`](crate::McpServer::trace_context) function returns.
///
/// Made with [`new`](Self::new), which takes only a well-formed `traceparent`
/// (`{version}-{trace-id}-{parent-id}-{flags}` in lowercase hex, neither id all zeros) and
/// drops a `tracestate` that is not printable ASCII of at most 512 bytes: a server reads
/// neither as a trace otherwise (the W3C recommendation tells it to start a new one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

/// The longest `tracestate` sent: W3C asks vendors to pass on at least 512 bytes, and a
/// longer one is cut by them anyway.
const MAX_TRACESTATE_BYTES: usize = 512;

impl TraceContext {
    /// The context of `traceparent` and `tracestate`, or `None` when `traceparent` is not a
    /// W3C `traceparent` (a `tracestate` that is not one is dropped, the context kept).
    ///
    /// ```
    /// use hookchain_mcp::TraceContext;
    ///
    /// let context = TraceContext::new(
    ///     "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    ///     Some("congo=t61rcWkgMzE".to_owned()),
    /// )
    /// .expect("a W3C traceparent");
    /// assert_eq!(context.tracestate(), Some("congo=t61rcWkgMzE"));
    /// assert!(TraceContext::new("not-a-traceparent", None).is_none());
    /// ```
    #[must_use]
    pub fn new(traceparent: impl Into<String>, tracestate: Option<String>) -> Option<Self> {
        let traceparent = traceparent.into();
        if !is_traceparent(&traceparent) {
            return None;
        }
        let tracestate = tracestate.filter(|state| {
            !state.is_empty()
                && state.len() <= MAX_TRACESTATE_BYTES
                && state.bytes().all(|byte| (0x20..=0x7e).contains(&byte))
        });
        Some(TraceContext {
            traceparent,
            tracestate,
        })
    }

    /// The `traceparent`.
    #[must_use]
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate`, if any.
    #[must_use]
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// Puts the context in a request's `_meta`, under SEP-414's keys.
    pub(crate) fn write(&self, meta: &mut RequestMetaObject) {
        meta.set_traceparent(self.traceparent.as_str());
        if let Some(tracestate) = &self.tracestate {
            meta.set_tracestate(tracestate.as_str());
        }
    }
}

/// Whether `value` is a W3C `traceparent`: version `00` exactly as the recommendation gives
/// it; a later version by its first four fields, which every version keeps (W3C Trace Context
/// §3.2.4), followed by nothing or by `-` and more.
fn is_traceparent(value: &str) -> bool {
    let hex = |field: &str, len: usize| {
        field.len() == len
            && field
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
    };
    let not_zeros = |field: &str| field.bytes().any(|byte| byte != b'0');
    let Some(fields) = value.get(..55) else {
        return false;
    };
    let mut parts = fields.split('-');
    let (Some(version), Some(trace_id), Some(parent_id), Some(flags), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let rest = &value[55..];
    hex(version, 2)
        && version != "ff"
        && hex(trace_id, 32)
        && not_zeros(trace_id)
        && hex(parent_id, 16)
        && not_zeros(parent_id)
        && hex(flags, 2)
        && if version == "00" {
            rest.is_empty()
        } else {
            rest.is_empty() || rest.starts_with('-')
        }
}

/// The application's function that says the current trace context.
#[derive(Clone)]
pub(crate) struct TraceContextFn(pub(crate) Arc<dyn Fn() -> Option<TraceContext> + Send + Sync>);

impl TraceContextFn {
    /// Puts the current trace context, if there is one, in `meta`. Called where the request is
    /// made, in its task: a tool call's, under its `execute_tool` span.
    pub(crate) fn write_current(&self, meta: &mut RequestMetaObject) {
        if let Some(context) = (self.0)() {
            context.write(meta);
        }
    }
}

impl fmt::Debug for TraceContextFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TraceContextFn")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_w3c_traceparent_is_taken_and_anything_else_is_not() {
        assert!(TraceContext::new(TRACEPARENT, None).is_some());
        // A later version may add fields after `-`.
        assert!(
            TraceContext::new(
                "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes",
                None
            )
            .is_some()
        );
        for bad in [
            "",
            "00",
            // Upper case, an all-zero trace id or parent id, the forbidden version.
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            // Version 00 with more after it; fields of the wrong length; not ASCII.
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0é",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7é01",
        ] {
            assert!(TraceContext::new(bad, None).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn a_tracestate_that_is_not_one_is_dropped_and_the_context_kept() {
        for bad in ["", "a=b\nc=d", &"a".repeat(MAX_TRACESTATE_BYTES + 1)] {
            let context = TraceContext::new(TRACEPARENT, Some(bad.to_owned())).unwrap();
            assert_eq!(context.tracestate(), None, "{bad:?}");
        }
        let context = TraceContext::new(TRACEPARENT, Some("rojo=00f067aa0ba902b7".to_owned()));
        assert_eq!(context.unwrap().tracestate(), Some("rojo=00f067aa0ba902b7"));
    }

    #[test]
    fn the_context_goes_under_the_keys_of_sep_414() {
        let mut meta = RequestMetaObject::new();
        TraceContext::new(TRACEPARENT, Some("rojo=1".to_owned()))
            .unwrap()
            .write(&mut meta);
        assert_eq!(meta.0.0["traceparent"], TRACEPARENT);
        assert_eq!(meta.0.0["tracestate"], "rojo=1");
        let mut meta = RequestMetaObject::new();
        TraceContext::new(TRACEPARENT, None)
            .unwrap()
            .write(&mut meta);
        assert!(!meta.0.0.contains_key("tracestate"));
    }
}
