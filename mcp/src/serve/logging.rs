//! A served call's log lines, to the client that asked for them: at the level a client of
//! 2026-07-28 names on the request (`_meta`'s `io.modelcontextprotocol/logLevel`; none named,
//! none sent), or the level a client of 2025-11-25 set for its session (`logging/setLevel`;
//! none set, none sent).

// MCP 2026-07-28 deprecates logging (SEP-2577) but keeps it; its types say so.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use hookchain_core::{LogLevel, ToolLog};
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;

/// The level a client of 2025-11-25 set for its session: one per session (each session's
/// server is made afresh).
#[derive(Debug, Clone, Default)]
pub(super) struct SessionLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl SessionLevel {
    /// Sets it (`logging/setLevel`).
    pub(super) fn set(&self, level: LoggingLevel) {
        if let Ok(mut set) = self.0.lock() {
            *set = Some(level);
        }
    }

    fn get(&self) -> Option<LoggingLevel> {
        self.0.lock().ok().and_then(|set| *set)
    }
}

/// The least level of the lines the client of `context` gets, if it gets any.
pub(super) fn least_level(
    context: &RequestContext<RoleServer>,
    session: &SessionLevel,
) -> Option<LogLevel> {
    let asked = context.meta.log_level().or_else(|| {
        // Only a session's clients set a level for the session.
        let legacy = context
            .protocol_version()
            .is_none_or(|version| version.has_initialize());
        legacy.then(|| session.get()).flatten()
    })?;
    match asked {
        LoggingLevel::Debug => Some(LogLevel::Debug),
        LoggingLevel::Info => Some(LogLevel::Info),
        LoggingLevel::Notice => Some(LogLevel::Notice),
        LoggingLevel::Warning => Some(LogLevel::Warning),
        LoggingLevel::Error => Some(LogLevel::Error),
        // Above anything a tool logs.
        _ => None,
    }
}

/// The notification of `line`.
pub(super) fn notification(line: ToolLog) -> LoggingMessageNotificationParam {
    let level = match line.level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        _ => LoggingLevel::Error,
    };
    LoggingMessageNotificationParam::new(level, serde_json::Value::String(line.message))
        .with_logger(line.tool)
}
