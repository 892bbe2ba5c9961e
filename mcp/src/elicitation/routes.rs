//! The calls in flight on a session that a server's elicitation can belong to, and how it is
//! answered.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

use super::{
    ElicitationAnswer, ElicitationHandler, ElicitationRequest, MAX_ELICITATIONS_PER_CALL,
    MAX_MESSAGE_BYTES, MAX_SCHEMA_BYTES,
};
use crate::limits;

/// What a server asked during a call that had no answer for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Asked {
    pub(crate) message: String,
    pub(crate) requested_schema: serde_json::Value,
}

/// One call's elicitations: the answers it was resumed with, and what the server asked that
/// they did not answer.
#[derive(Debug, Default)]
struct CallElicitations {
    /// The server's own name of the tool called.
    tool: String,
    answers: VecDeque<ElicitationAnswer>,
    /// Elicitations answered so far (from `answers` or not).
    seen: usize,
    asked: Option<Asked>,
}

type InFlight = Vec<Arc<Mutex<CallElicitations>>>;

/// The calls in flight on one session (every session of a connection shares it).
#[derive(Debug, Clone, Default)]
pub(crate) struct ElicitationRoutes {
    in_flight: Arc<Mutex<InFlight>>,
}

impl ElicitationRoutes {
    /// Registers a call that will answer the server's elicitations with `answers`, in order,
    /// until the returned value is dropped.
    pub(crate) fn enter(&self, tool: &str, answers: Vec<ElicitationAnswer>) -> CallRoute {
        let call = Arc::new(Mutex::new(CallElicitations {
            tool: tool.to_owned(),
            answers: answers.into(),
            ..CallElicitations::default()
        }));
        lock(&self.in_flight).push(call.clone());
        CallRoute {
            call,
            routes: self.clone(),
        }
    }

    /// The answer to a server's `elicitation/create`: from `handler` when it has one, else from
    /// the call in flight's answers; when it has none left, `cancel`, and the request is kept
    /// for the call to pause on.
    pub(crate) fn answer(
        &self,
        server: &str,
        request: ElicitRequestParams,
        handler: Option<&dyn ElicitationHandler>,
    ) -> ElicitResult {
        let decline = |why: &str| {
            tracing::warn!(server, "an elicitation was declined: {why}");
            ElicitResult::new(ElicitationAction::Decline)
        };
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return decline("only form elicitations are supported");
        };
        let call = {
            let in_flight = lock(&self.in_flight);
            match in_flight.as_slice() {
                [call] => call.clone(),
                [] => return decline("no tool call is in flight"),
                _ => {
                    return decline("several tool calls are in flight: which one asked is unknown");
                }
            }
        };
        let mut call = lock(&call);
        if call.seen >= MAX_ELICITATIONS_PER_CALL {
            return decline("too many elicitations in one call");
        }
        call.seen += 1;
        let requested_schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        if let Some(handler) = handler
            && let Some(answer) = handler.answer(&ElicitationRequest {
                server,
                tool: &call.tool,
                message: &message,
                requested_schema: &requested_schema,
            })
        {
            return result_of(answer.with_defaults(&requested_schema));
        }
        if let Some(answer) = call.answers.pop_front() {
            return result_of(answer);
        }
        if call.asked.is_some() {
            // The run pauses on the first unanswered one; the call is asked again after it.
            return ElicitResult::new(ElicitationAction::Cancel);
        }
        if requested_schema.to_string().len() > MAX_SCHEMA_BYTES {
            return decline("its schema is too large");
        }
        call.asked = Some(Asked {
            message: limits::cut(&message, MAX_MESSAGE_BYTES),
            requested_schema,
        });
        ElicitResult::new(ElicitationAction::Cancel)
    }
}

/// A call's registration; it leaves the calls in flight when dropped.
#[derive(Debug)]
pub(crate) struct CallRoute {
    call: Arc<Mutex<CallElicitations>>,
    routes: ElicitationRoutes,
}

impl CallRoute {
    /// What the server asked that the call's answers did not answer, if anything.
    pub(crate) fn unanswered(&self) -> Option<Asked> {
        lock(&self.call).asked.take()
    }
}

impl Drop for CallRoute {
    fn drop(&mut self) {
        lock(&self.routes.in_flight).retain(|call| !Arc::ptr_eq(call, &self.call));
    }
}

pub(super) fn result_of(answer: ElicitationAnswer) -> ElicitResult {
    match answer {
        ElicitationAnswer::Accept { content } => ElicitResult::new(ElicitationAction::Accept)
            .with_content(serde_json::Value::Object(content)),
        ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing panics while holding these locks: a poisoned one is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use rmcp::model::ElicitationSchema;
    use serde_json::json;

    use super::*;

    fn form(message: &str) -> ElicitRequestParams {
        let schema: ElicitationSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }))
        .unwrap();
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.to_owned(),
            requested_schema: schema,
        }
    }

    #[test]
    fn a_call_without_answers_cancels_and_keeps_the_first_request() {
        let routes = ElicitationRoutes::default();
        let call = routes.enter("t", Vec::new());
        assert_eq!(
            routes.answer("s", form("first"), None).action,
            ElicitationAction::Cancel
        );
        assert_eq!(
            routes.answer("s", form("second"), None).action,
            ElicitationAction::Cancel
        );
        let asked = call.unanswered().expect("asked");
        assert_eq!(asked.message, "first");
        assert_eq!(asked.requested_schema["required"], json!(["name"]));
    }

    #[test]
    fn answers_are_given_in_order_then_the_next_request_is_kept() {
        let routes = ElicitationRoutes::default();
        let call = routes.enter(
            "t",
            vec![
                ElicitationAnswer::accept(json!({"name": "Ada"})).unwrap(),
                ElicitationAnswer::Decline,
            ],
        );
        let first = routes.answer("s", form("1"), None);
        assert_eq!(first.action, ElicitationAction::Accept);
        assert_eq!(first.content, Some(json!({"name": "Ada"})));
        assert_eq!(
            routes.answer("s", form("2"), None).action,
            ElicitationAction::Decline
        );
        assert_eq!(call.unanswered(), None);
        assert_eq!(
            routes.answer("s", form("3"), None).action,
            ElicitationAction::Cancel
        );
        assert_eq!(call.unanswered().unwrap().message, "3");
    }

    #[test]
    fn no_call_or_two_calls_in_flight_decline() {
        let routes = ElicitationRoutes::default();
        assert_eq!(
            routes.answer("s", form("x"), None).action,
            ElicitationAction::Decline
        );
        let one = routes.enter("t", Vec::new());
        let two = routes.enter("t", Vec::new());
        assert_eq!(
            routes.answer("s", form("x"), None).action,
            ElicitationAction::Decline
        );
        assert_eq!(one.unanswered(), None);
        drop(two);
        assert_eq!(
            routes.answer("s", form("x"), None).action,
            ElicitationAction::Cancel
        );
        drop(one);
        assert!(lock(&routes.in_flight).is_empty());
    }

    #[test]
    fn a_url_elicitation_and_one_past_the_bound_are_declined() {
        let routes = ElicitationRoutes::default();
        let accept = ElicitationAnswer::Accept {
            content: serde_json::Map::new(),
        };
        let _call = routes.enter("t", vec![accept; MAX_ELICITATIONS_PER_CALL + 4]);
        let url = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: "Sign in".to_owned(),
            url: "https://example.com".to_owned(),
            elicitation_id: "e1".to_owned(),
        };
        assert_eq!(
            routes.answer("s", url, None).action,
            ElicitationAction::Decline
        );
        for _ in 0..MAX_ELICITATIONS_PER_CALL {
            assert_eq!(
                routes.answer("s", form("x"), None).action,
                ElicitationAction::Accept
            );
        }
        let past = routes.answer("s", form("x"), None);
        assert_eq!(past.action, ElicitationAction::Decline);
    }
}
