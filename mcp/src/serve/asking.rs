//! What a served call's interrupt asks the client's user, as an MCP elicitation form, and the
//! user's answer back as the interrupt's answer.
//!
//! Three kinds of interrupt can be asked:
//! - a [`HumanInTheLoop`] approval of one call ([`ApprovalRequest`]): a yes/no form with a
//!   reason; yes approves, no (or a declined or cancelled form) rejects, with the reason;
//! - an interrupt whose payload is an MCP form, `{"message": …, "requestedSchema": {…}}` (a
//!   tool written to be served, a proxied server's elicitation): asked as it is, and answered
//!   with the client's `ElicitResult` as it came (`{"action": …, "content": {…}}`);
//! - an interrupt whose payload is MCP input requests, `{"inputRequests": {"<key>": {"method":
//!   "elicitation/create" | "sampling/createMessage" | "roots/list", "params": …}, …}}` (a
//!   tool written for MCP 2026-07-28): the requests the client can answer (by its
//!   capabilities) asked as they are, and answered with the client's responses by key
//!   (`{"<key>": <result>, …}`; keys not asked dropped).
//!
//! Any other interrupt, or one the client has no capability to answer, is not asked: its call
//! ends with an error result saying that it needs an answer this server cannot ask for.
//!
//! [`HumanInTheLoop`]: hookchain_core::builtin::HumanInTheLoop

use hookchain_core::Interrupt;
use hookchain_core::builtin::human_in_the_loop::{ApprovalRequest, ApprovalResponse, Decision};
use rmcp::model::{ClientCapabilities, InputRequest, InputRequests, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::limits::cut;

/// The key of the one input request of an approval or a form.
pub(super) const INPUT_KEY: &str = "answer";

/// The longest rendering of a gated call's arguments in an approval's message, in bytes.
const MAX_ARGUMENTS_SHOWN: usize = 2048;

/// How an interrupt is asked, and read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Asking {
    /// A `HumanInTheLoop` approval of one call.
    Approval,
    /// A payload that is an MCP form.
    Form,
    /// A payload that is MCP input requests.
    Requests,
}

/// Why the client's responses are not an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotAnswered {
    /// A request asked has no response: ask again.
    Missing,
    /// A response is not one (no `action`, not an object): refuse.
    Invalid(&'static str),
}

impl Asking {
    /// How `interrupt` is asked, if it can be.
    pub(super) fn of(interrupt: &Interrupt) -> Option<Asking> {
        let payload = &interrupt.payload;
        if payload.get("inputRequests").is_some() {
            return requests_of(payload).map(|_| Asking::Requests);
        }
        if is_form(payload) {
            return Some(Asking::Form);
        }
        let request = serde_json::from_value::<ApprovalRequest>(payload.clone()).ok()?;
        (request.actions.len() == 1).then_some(Asking::Approval)
    }

    /// The requests that ask `interrupt` of a client with `capabilities`; `None` when it can
    /// answer none of them.
    pub(super) fn input_requests(
        self,
        interrupt: &Interrupt,
        capabilities: &ClientCapabilities,
    ) -> Option<InputRequests> {
        let requests: InputRequests = match self {
            Asking::Requests => requests_of(&interrupt.payload)?
                .into_iter()
                .filter(|(_, request)| can_answer(capabilities, request))
                .collect(),
            Asking::Form | Asking::Approval => {
                let params = match self {
                    Asking::Approval => approval_form(interrupt)?,
                    _ => interrupt.payload.clone(),
                };
                let request = elicitation(params)?;
                if !can_answer(capabilities, &request) {
                    return None;
                }
                [(INPUT_KEY.to_owned(), request)].into_iter().collect()
            }
        };
        (!requests.is_empty()).then_some(requests)
    }

    /// What a client must declare to be asked `interrupt`: each kind of request it holds.
    pub(super) fn required_capabilities(self, interrupt: &Interrupt) -> ClientCapabilities {
        let mut required = ClientCapabilities::default();
        let requests = match self {
            Asking::Requests => requests_of(&interrupt.payload).unwrap_or_default(),
            Asking::Form | Asking::Approval => {
                required.elicitation = Some(Default::default());
                return required;
            }
        };
        for request in requests.values() {
            match request {
                InputRequest::Elicitation(_) => required.elicitation = Some(Default::default()),
                InputRequest::CreateMessage(_) => required.sampling = Some(Default::default()),
                InputRequest::ListRoots(_) => required.roots = Some(Default::default()),
                _ => {}
            }
        }
        required
    }

    /// The interrupt's answer made of the client's `responses` to `asked`.
    pub(super) fn answer(
        self,
        asked: &InputRequests,
        responses: &InputResponses,
    ) -> Result<Value, NotAnswered> {
        let mut answers = serde_json::Map::new();
        for (key, request) in asked {
            let response = responses.get(key).ok_or(NotAnswered::Missing)?;
            if !response.is_object() {
                return Err(NotAnswered::Invalid("an input response is an object"));
            }
            if matches!(request, InputRequest::Elicitation(_)) {
                check_action(response)?;
            }
            answers.insert(key.clone(), response.clone());
        }
        let Some(response) = answers.get(INPUT_KEY).filter(|_| self != Asking::Requests) else {
            return Ok(Value::Object(answers));
        };
        match self {
            Asking::Approval => Ok(approval_answer(response)),
            _ => Ok(response.clone()),
        }
    }
}

/// The input requests of a payload that holds them, each one MCP knows.
fn requests_of(payload: &Value) -> Option<InputRequests> {
    let requests = payload.get("inputRequests")?.as_object()?;
    let mut known = InputRequests::new();
    for (key, request) in requests {
        known.insert(key.clone(), serde_json::from_value(request.clone()).ok()?);
    }
    (!known.is_empty()).then_some(known)
}

/// An elicitation (form mode) of `params`.
fn elicitation(mut params: Value) -> Option<InputRequest> {
    params["mode"] = json!("form");
    serde_json::from_value(json!({ "method": "elicitation/create", "params": params })).ok()
}

/// Whether a client with `capabilities` answers `request`.
fn can_answer(capabilities: &ClientCapabilities, request: &InputRequest) -> bool {
    match request {
        // An empty `elicitation` is forms (the revision that added URLs kept it so).
        InputRequest::Elicitation(_) => capabilities
            .elicitation
            .as_ref()
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none()),
        InputRequest::CreateMessage(_) => capabilities.sampling.is_some(),
        InputRequest::ListRoots(_) => capabilities.roots.is_some(),
        _ => false,
    }
}

/// Checks that an elicitation's response has an action MCP knows.
fn check_action(response: &Value) -> Result<(), NotAnswered> {
    match response.get("action").and_then(Value::as_str) {
        Some("accept" | "decline" | "cancel") => Ok(()),
        _ => Err(NotAnswered::Invalid(
            "an elicitation's response has an `action`: `accept`, `decline` or `cancel`",
        )),
    }
}

/// The approval's answer made of its form's response: yes approves; no, a declined or a
/// cancelled form rejects, with the reason given.
fn approval_answer(response: &Value) -> Value {
    let action = response["action"].as_str().unwrap_or("cancel");
    let content = response.get("content");
    let approved = action == "accept"
        && content
            .and_then(|content| content.get("approve"))
            .and_then(Value::as_bool)
            == Some(true);
    let decision = if approved {
        Decision::Approve
    } else {
        let reason = content
            .and_then(|content| content.get("reason"))
            .and_then(Value::as_str)
            .filter(|reason| !reason.trim().is_empty())
            .map(|reason| cut(reason, 1024));
        Decision::Reject {
            message: Some(reason.unwrap_or_else(|| match action {
                "accept" => "not approved".to_owned(),
                _ => format!("the form was {action}d"),
            })),
        }
    };
    serde_json::to_value(ApprovalResponse::new([decision])).unwrap_or(Value::Null)
}

/// Whether `payload` is an MCP form: a message and an object schema.
fn is_form(payload: &Value) -> bool {
    payload.get("message").is_some_and(Value::is_string)
        && payload
            .get("requestedSchema")
            .is_some_and(|schema| schema.get("type") == Some(&json!("object")))
}

/// The form of an approval: the call, its arguments, what it does; yes or no, and why not.
fn approval_form(interrupt: &Interrupt) -> Option<Value> {
    let request = serde_json::from_value::<ApprovalRequest>(interrupt.payload.clone()).ok()?;
    let action = request.actions.first()?;
    let arguments = serde_json::to_string(&action.arguments).ok()?;
    let mut message = format!(
        "Approve this call of `{}`?\nArguments: {}",
        action.name,
        cut(&arguments, MAX_ARGUMENTS_SHOWN)
    );
    if let Some(description) = &action.description {
        message.push('\n');
        message.push_str(description);
    }
    Some(json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": format!("Let `{}` run with these arguments", action.name),
                },
                "reason": {
                    "type": "string",
                    "title": "Reason",
                    "description": "Why not, if you do not approve",
                },
            },
            "required": ["approve"],
        },
    }))
}

#[cfg(test)]
mod tests {
    use hookchain_core::InterruptId;

    use super::*;

    fn interrupt(payload: Value) -> Interrupt {
        serde_json::from_value(json!({
            "id": "0/1:after_model:0:HumanInTheLoop",
            "source": "HumanInTheLoop",
            "hook": "after_model",
            "step": 1,
            "tool_call_id": "c1",
            "payload": payload,
        }))
        .unwrap()
    }

    fn approval() -> Interrupt {
        interrupt(json!({ "actions": [{
            "call_id": "c1", "name": "charge", "arguments": { "cents": 300 },
            "description": "Charges a card", "allowed_decisions": ["approve", "reject"],
        }]}))
    }

    fn capabilities(json: Value) -> ClientCapabilities {
        serde_json::from_value(json).unwrap()
    }

    fn responses(json: Value) -> InputResponses {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn an_approval_is_a_yes_or_no_form_and_its_answer_a_decision() {
        let asked = approval();
        assert_eq!(
            asked.id,
            InterruptId::new("0/1:after_model:0:HumanInTheLoop")
        );
        let asking = Asking::of(&asked).unwrap();
        assert_eq!(asking, Asking::Approval);
        let forms = capabilities(json!({ "elicitation": {} }));
        let requests = asking.input_requests(&asked, &forms).unwrap();
        let request = serde_json::to_value(&requests[INPUT_KEY]).unwrap();
        assert_eq!(request["method"], "elicitation/create");
        let message = request["params"]["message"].as_str().unwrap();
        assert!(message.contains("`charge`") && message.contains(r#"{"cents":300}"#));
        assert!(message.contains("Charges a card"), "{message}");
        assert_eq!(
            request["params"]["requestedSchema"]["required"],
            json!(["approve"])
        );

        let answer =
            |response: Value| asking.answer(&requests, &responses(json!({ "answer": response })));
        let yes = json!({ "action": "accept", "content": { "approve": true } });
        assert_eq!(
            answer(yes).unwrap(),
            json!({ "decisions": [{ "type": "approve" }] })
        );
        let no = json!({ "action": "accept", "content": { "approve": false, "reason": "no" } });
        assert_eq!(
            answer(no).unwrap(),
            json!({ "decisions": [{ "type": "reject", "message": "no" }] })
        );
        let declined = answer(json!({ "action": "decline" })).unwrap();
        assert_eq!(declined["decisions"][0]["message"], "the form was declined");
        assert!(matches!(
            answer(json!({ "action": "maybe" })),
            Err(NotAnswered::Invalid(_))
        ));
        assert!(matches!(answer(json!("yes")), Err(NotAnswered::Invalid(_))));
        let none = asking.answer(&requests, &responses(json!({ "other": {} })));
        assert_eq!(none, Err(NotAnswered::Missing));
        // A client without forms is not asked.
        assert!(
            asking
                .input_requests(&asked, &capabilities(json!({})))
                .is_none()
        );
        let urls_only = capabilities(json!({ "elicitation": { "url": {} } }));
        assert!(asking.input_requests(&asked, &urls_only).is_none());
    }

    #[test]
    fn a_form_is_asked_as_it_is_and_answered_with_the_clients_result() {
        let asked = interrupt(json!({
            "message": "Your name?",
            "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } },
        }));
        let asking = Asking::of(&asked).unwrap();
        assert_eq!(asking, Asking::Form);
        let forms = capabilities(json!({ "elicitation": { "form": {} } }));
        let requests = asking.input_requests(&asked, &forms).unwrap();
        let request = serde_json::to_value(&requests[INPUT_KEY]).unwrap();
        assert_eq!(request["params"]["message"], "Your name?");
        let answer = json!({ "action": "accept", "content": { "name": "Ada" } });
        let given = responses(json!({ "answer": answer, "extra": 1 }));
        assert_eq!(asking.answer(&requests, &given).unwrap(), answer);
    }

    #[test]
    fn input_requests_are_asked_as_the_client_can_answer_them() {
        let asked = interrupt(json!({ "inputRequests": {
            "name": { "method": "elicitation/create", "params": {
                "mode": "form", "message": "Name?",
                "requestedSchema": { "type": "object", "properties": { "n": { "type": "string" } } },
            }},
            "roots": { "method": "roots/list" },
        }}));
        let asking = Asking::of(&asked).unwrap();
        assert_eq!(asking, Asking::Requests);
        let all = capabilities(json!({ "elicitation": {}, "roots": {} }));
        let requests = asking.input_requests(&asked, &all).unwrap();
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["name", "roots"]);
        // Only what the client declared it answers.
        let roots_only = capabilities(json!({ "roots": {} }));
        let requests_roots = asking.input_requests(&asked, &roots_only).unwrap();
        assert_eq!(requests_roots.keys().collect::<Vec<_>>(), ["roots"]);
        assert!(
            asking
                .input_requests(&asked, &capabilities(json!({})))
                .is_none()
        );
        // Answered by key; keys not asked dropped; one missing asks again.
        let given = responses(json!({
            "name": { "action": "accept", "content": { "n": "Ada" } },
            "roots": { "roots": [] },
            "extra": true,
        }));
        assert_eq!(
            asking.answer(&requests, &given).unwrap(),
            json!({ "name": { "action": "accept", "content": { "n": "Ada" } }, "roots": { "roots": [] } })
        );
        let partial = responses(json!({ "roots": { "roots": [] } }));
        assert_eq!(
            asking.answer(&requests, &partial),
            Err(NotAnswered::Missing)
        );
        // A request MCP does not know: not asked at all.
        let unknown = interrupt(json!({ "inputRequests": { "x": { "method": "ping" } } }));
        assert_eq!(Asking::of(&unknown), None);
    }

    #[test]
    fn other_interrupts_are_not_asked() {
        assert_eq!(Asking::of(&interrupt(json!({ "ask": "anything" }))), None);
        // An approval of several calls (not one a served call makes).
        let two = json!({ "actions": [
            { "call_id": "a", "name": "x", "arguments": {}, "allowed_decisions": [] },
            { "call_id": "b", "name": "y", "arguments": {}, "allowed_decisions": [] },
        ]});
        assert_eq!(Asking::of(&interrupt(two)), None);
    }
}
