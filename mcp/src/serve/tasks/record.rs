//! What the store keeps of a served task, and how `tasks/get` shows it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hookchain_core::PausedCall;
use rmcp::model::{
    DetailedTask, InputRequests, InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde::{Deserialize, Serialize};

use super::super::asking::Asking;

/// A served task as the store keeps it: whose it is, when it was made, and where it stands.
/// Who runs it is the store's lease on its key (the slot's holder and expiry).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct TaskRecord {
    /// The principal that made it: no one else reads, answers or cancels it.
    pub(super) principal: Option<String>,
    /// The tool called.
    pub(super) tool: String,
    /// When it was made, in milliseconds since the Unix epoch.
    pub(super) created_at: u64,
    /// When it last changed.
    pub(super) updated_at: u64,
    /// How long it is kept from when it was made.
    pub(super) ttl_ms: u64,
    /// Where it stands.
    pub(super) state: TaskState,
}

/// Where a served task stands.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(super) enum TaskState {
    /// A replica runs its call (the one whose lease the key is under).
    Working,
    /// Its call waits for the client's answers.
    InputRequired {
        /// The call, paused.
        paused: Box<PausedCall>,
        /// How it was asked.
        asking: Asking,
        /// What was asked, by key.
        requests: InputRequests,
        /// The answers given so far (a client may give them one at a time).
        answered: InputResponses,
    },
    /// Its call ended with this `CallToolResult` (an error result too: the tool ran).
    Completed { result: JsonObject },
    /// It failed outside the tool: this JSON-RPC error.
    Failed { error: JsonObject },
    /// The client cancelled it.
    Cancelled,
}

impl TaskState {
    /// Whether it is over.
    pub(super) fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::Completed { .. } | TaskState::Failed { .. } | TaskState::Cancelled
        )
    }

    /// Failed with `error`, as JSON-RPC writes it (`code`, `message`, `data`).
    pub(super) fn failed(error: rmcp::ErrorData) -> TaskState {
        let error = match serde_json::to_value(error) {
            Ok(serde_json::Value::Object(error)) => error,
            // An error object always serializes to an object; kept total all the same.
            _ => JsonObject::from_iter([("code".to_owned(), (-32603).into())]),
        };
        TaskState::Failed { error }
    }
}

impl TaskRecord {
    /// Whether it is kept no longer at `now`.
    pub(super) fn expired(&self, now: u64) -> bool {
        now >= self.created_at.saturating_add(self.ttl_ms)
    }

    /// The task as `tasks/get` shows it: its status and what goes with it — the questions
    /// still unanswered, the result, the error.
    pub(super) fn detailed(&self, id: &str, poll_interval: Duration) -> DetailedTask {
        let payload = match &self.state {
            TaskState::Working => TaskPayload::Working,
            TaskState::InputRequired {
                requests, answered, ..
            } => TaskPayload::InputRequired {
                input_requests: requests
                    .iter()
                    .filter(|(key, _)| !answered.contains_key(*key))
                    .map(|(key, request)| (key.clone(), request.clone()))
                    .collect(),
            },
            TaskState::Completed { result } => TaskPayload::Completed {
                result: result.clone(),
            },
            TaskState::Failed { error } => TaskPayload::Failed {
                error: error.clone(),
            },
            TaskState::Cancelled => TaskPayload::Cancelled,
        };
        DetailedTask::new(self.task(id, TaskStatus::Working, poll_interval), payload)
    }

    /// The task's metadata (`status` as given: a `DetailedTask` sets it from its payload).
    pub(super) fn task(&self, id: &str, status: TaskStatus, poll_interval: Duration) -> Task {
        let poll_ms = u64::try_from(poll_interval.as_millis()).unwrap_or(u64::MAX);
        Task::new(
            id,
            status,
            iso_8601(self.created_at),
            iso_8601(self.updated_at),
        )
        .with_ttl_ms(self.ttl_ms)
        .with_poll_interval_ms(poll_ms)
    }
}

/// Milliseconds since the Unix epoch at `time`.
pub(super) fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

/// `millis` (since the Unix epoch) as ISO 8601 in UTC, to the millisecond:
/// `2026-12-07T21:52:29.123Z`.
pub(super) fn iso_8601(millis: u64) -> String {
    let (secs, ms) = (millis / 1000, millis % 1000);
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`,
/// for days that are not before the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::iso_8601;

    #[test]
    fn times_are_iso_8601_in_utc() {
        assert_eq!(iso_8601(0), "1970-01-01T00:00:00.000Z");
        // 2026-12-07T21:52:29.123Z, and a leap day.
        assert_eq!(iso_8601(1_796_680_349_123), "2026-12-07T21:52:29.123Z");
        assert_eq!(iso_8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
