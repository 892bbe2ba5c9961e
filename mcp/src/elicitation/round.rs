//! A call answered *input required* (MCP 2026-07-28): the server's questions and its
//! `requestState`, kept in the run's checkpoint while a person answers, and the answers sent
//! back with the state when the call is made again.

use std::collections::BTreeMap;

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult,
    InputResponses,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::routes::result_of;
use super::{
    ElicitationAnswer, ElicitationHandler, ElicitationRequest, MAX_ELICITATIONS_PER_CALL,
    MAX_MESSAGE_BYTES, MAX_SCHEMA_BYTES,
};
use crate::limits;

/// The largest `requestState` kept in a checkpoint: a larger one fails the call (it is stored
/// with the run, and sent back whole).
pub(crate) const MAX_REQUEST_STATE_BYTES: usize = 64 * 1024;

/// One round of a call's input requests: what the server asked at once, and the state it gave
/// with them. Carried in an [`Elicitation`](super::Elicitation)'s payload (so in the run's
/// checkpoint) until every question of the round is answered; then the call is made again
/// with the answers and the state, by whichever process resumes the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRound {
    /// The server's `requestState`, echoed byte for byte (`None`: it gave none, and none is
    /// sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_state: Option<String>,
    /// The round's elicitations a person answers, in the order of their keys.
    questions: Vec<Question>,
    /// The answers the client gave itself, by key: requests it cannot put to a person (a URL
    /// to open, a form too large to keep) declined, the roots it has (none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    given: BTreeMap<String, Value>,
}

/// One question of a round: the server's key for it, and what it asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Question {
    pub(crate) key: String,
    pub(crate) message: String,
    pub(crate) requested_schema: Value,
}

/// Why a round cannot be answered by this client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RoundError {
    /// The server asked for something this client does not do (sampling a model).
    #[error("the server asked the client to {0}, which hookchain-mcp does not do")]
    Unsupported(&'static str),
    /// Past a bound of this client.
    #[error("the server's input request is too large: {0}")]
    TooLarge(&'static str),
    /// Neither questions nor state: nothing to call again with.
    #[error("the server answered input required with neither requests nor state")]
    Empty,
    /// The server kept asking for what this client answers itself.
    #[error("the server still asked for input after {0} rounds")]
    TooManyRounds(usize),
}

impl InputRound {
    /// The round of `result`, its questions bounded; the requests no person answers answered
    /// here, and those `asker`'s handler answers.
    pub(crate) fn read(result: InputRequiredResult, asker: &Asker<'_>) -> Result<Self, RoundError> {
        if let Some(state) = &result.request_state
            && state.len() > MAX_REQUEST_STATE_BYTES
        {
            return Err(RoundError::TooLarge("its requestState"));
        }
        let requests = result.input_requests.unwrap_or_default();
        if requests.is_empty() && result.request_state.is_none() {
            return Err(RoundError::Empty);
        }
        let mut round = InputRound {
            request_state: result.request_state,
            questions: Vec::new(),
            given: BTreeMap::new(),
        };
        // A BTreeMap: the questions come in the order of their keys, the same in every process.
        for (key, request) in requests {
            let declined = || to_json(ElicitResult::new(ElicitationAction::Decline));
            match request {
                InputRequest::Elicitation(elicit) => match elicit.params {
                    ElicitRequestParams::FormElicitationParams {
                        message,
                        requested_schema,
                        ..
                    } => {
                        let requested_schema =
                            serde_json::to_value(&requested_schema).unwrap_or_default();
                        if requested_schema.to_string().len() > MAX_SCHEMA_BYTES {
                            round.given.insert(key, declined());
                            continue;
                        }
                        if let Some(answer) = asker.answer(&message, &requested_schema) {
                            round.given.insert(key, to_json(result_of(answer)));
                            continue;
                        }
                        if round.questions.len() == MAX_ELICITATIONS_PER_CALL {
                            return Err(RoundError::TooLarge("too many elicitations at once"));
                        }
                        round.questions.push(Question {
                            key,
                            message: limits::cut(&message, MAX_MESSAGE_BYTES),
                            requested_schema,
                        });
                    }
                    // Only forms are declared.
                    _ => {
                        round.given.insert(key, declined());
                    }
                },
                InputRequest::ListRoots(_) => {
                    round.given.insert(key, json!({ "roots": [] }));
                }
                InputRequest::CreateMessage(_) => {
                    return Err(RoundError::Unsupported("sample a model"));
                }
                _ => {
                    return Err(RoundError::Unsupported(
                        "answer a request of an unknown kind",
                    ));
                }
            }
        }
        Ok(round)
    }

    /// The question a person answers after `answered` answers of this round, if any is left.
    pub(crate) fn question(&self, answered: usize) -> Option<&Question> {
        self.questions.get(answered)
    }

    /// The state to send back, and the answers by key: every question's answer in `answers`
    /// (in order; `None` while some are unanswered), with the ones given here.
    pub(crate) fn responses(
        &self,
        answers: &[ElicitationAnswer],
    ) -> Option<(Option<String>, InputResponses)> {
        if answers.len() < self.questions.len() {
            return None;
        }
        let mut responses = self.given.clone();
        for (question, answer) in self.questions.iter().zip(answers) {
            responses.insert(question.key.clone(), to_json(result_of(answer.clone())));
        }
        Some((self.request_state.clone(), responses))
    }
}

/// Who asks a round's questions, and what answers them in the process.
pub(crate) struct Asker<'a> {
    pub(crate) server: &'a str,
    /// The server's own name of the tool called.
    pub(crate) tool: &'a str,
    pub(crate) handler: Option<&'a dyn ElicitationHandler>,
}

impl Asker<'_> {
    /// The handler's answer to a form, its schema's defaults filled in.
    fn answer(&self, message: &str, requested_schema: &Value) -> Option<ElicitationAnswer> {
        let answer = self.handler?.answer(&ElicitationRequest {
            server: self.server,
            tool: self.tool,
            message,
            requested_schema,
        })?;
        Some(answer.with_defaults(requested_schema))
    }
}

/// A client's result as JSON (plain data: serializing it cannot fail).
fn to_json(result: ElicitResult) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOBODY: Asker<'static> = Asker {
        server: "s",
        tool: "t",
        handler: None,
    };

    fn input_required(value: Value) -> InputRequiredResult {
        serde_json::from_value(value).unwrap()
    }

    fn form(message: &str) -> Value {
        json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": message,
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            }
        })
    }

    #[test]
    fn questions_come_in_key_order_and_the_rest_is_answered_here() {
        let round = InputRound::read(
            input_required(json!({
                "resultType": "input_required",
                "inputRequests": {
                    "b": form("second"),
                    "a": form("first"),
                    "roots": {"method": "roots/list"}
                },
                "requestState": "opaque-1"
            })),
            &NOBODY,
        )
        .unwrap();
        assert_eq!(round.question(0).unwrap().key, "a");
        assert_eq!(round.question(1).unwrap().message, "second");
        assert!(round.question(2).is_none());
        assert_eq!(round.responses(&[ElicitationAnswer::Decline]), None);
        let accept = ElicitationAnswer::accept(json!({"ok": true})).unwrap();
        let (state, responses) = round
            .responses(&[accept, ElicitationAnswer::Cancel])
            .unwrap();
        assert_eq!(state.as_deref(), Some("opaque-1"));
        assert_eq!(
            serde_json::to_value(responses).unwrap(),
            json!({
                "a": {"action": "accept", "content": {"ok": true}},
                "b": {"action": "cancel"},
                "roots": {"roots": []}
            })
        );
    }

    #[test]
    fn a_round_reads_back_from_its_checkpoint() {
        let round = InputRound::read(
            input_required(json!({
                "resultType": "input_required",
                "inputRequests": {"confirm": form("Sure?")}
            })),
            &NOBODY,
        )
        .unwrap();
        let stored = serde_json::to_value(&round).unwrap();
        assert!(
            stored.get("request_state").is_none(),
            "none given, none kept"
        );
        assert_eq!(serde_json::from_value::<InputRound>(stored).unwrap(), round);
    }

    #[test]
    fn sampling_and_an_oversized_state_are_refused() {
        let sampling = InputRound::read(
            input_required(json!({
                "resultType": "input_required",
                "inputRequests": {"s": {
                    "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 10}
                }}
            })),
            &NOBODY,
        );
        assert_eq!(sampling, Err(RoundError::Unsupported("sample a model")));
        let huge = InputRound::read(
            input_required(json!({
                "resultType": "input_required",
                "requestState": "x".repeat(MAX_REQUEST_STATE_BYTES + 1)
            })),
            &NOBODY,
        );
        assert!(matches!(huge, Err(RoundError::TooLarge(_))));
    }

    #[test]
    fn a_url_elicitation_is_declined_here() {
        let round = InputRound::read(
            input_required(json!({
                "resultType": "input_required",
                "inputRequests": {"login": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "url",
                        "message": "Sign in",
                        "url": "https://example.com/login",
                        "elicitationId": "e1"
                    }
                }},
                "requestState": "s"
            })),
            &NOBODY,
        )
        .unwrap();
        assert!(round.question(0).is_none());
        let (_, responses) = round.responses(&[]).unwrap();
        assert_eq!(responses["login"], json!({"action": "decline"}));
    }
}
