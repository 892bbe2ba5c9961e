//! What a served call's interrupt asks the client's user, as an MCP elicitation form, and the
//! user's answer back as the interrupt's answer.
//!
//! Two kinds of interrupt have a form:
//! - a [`HumanInTheLoop`] approval of one call ([`ApprovalRequest`]): a yes/no with a reason;
//!   yes approves, no (or a declined or cancelled form) rejects, with the reason;
//! - an interrupt whose payload is already an MCP form, `{"message": …, "requestedSchema":
//!   {…}}` (a tool written to be served, a proxied server's elicitation): asked as it is, and
//!   answered with the client's `ElicitResult` as it came (`{"action": …, "content": {…}}`).
//!
//! Any other interrupt has none: its call ends with an error result saying that it needs an
//! answer this server cannot ask for.
//!
//! [`HumanInTheLoop`]: hookchain_core::builtin::HumanInTheLoop

use hookchain_core::Interrupt;
use hookchain_core::builtin::human_in_the_loop::{ApprovalRequest, ApprovalResponse, Decision};
use rmcp::model::InputRequest;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::limits::cut;

/// The key of the one input request a served call's input-required result holds.
pub(super) const INPUT_KEY: &str = "answer";

/// The longest rendering of a gated call's arguments in an approval's message, in bytes.
const MAX_ARGUMENTS_SHOWN: usize = 2048;

/// How an interrupt is asked, and read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Asking {
    /// A `HumanInTheLoop` approval of one call.
    Approval,
    /// A payload that is an MCP form already.
    Form,
}

impl Asking {
    /// How `interrupt` is asked, if it has a form.
    pub(super) fn of(interrupt: &Interrupt) -> Option<Asking> {
        if is_form(&interrupt.payload) {
            return Some(Asking::Form);
        }
        let request = serde_json::from_value::<ApprovalRequest>(interrupt.payload.clone()).ok()?;
        (request.actions.len() == 1).then_some(Asking::Approval)
    }

    /// The elicitation that asks `interrupt` (one this module said it has a form for).
    pub(super) fn input_request(self, interrupt: &Interrupt) -> Option<InputRequest> {
        let params = match self {
            Asking::Form => {
                let mut params = interrupt.payload.clone();
                params["mode"] = json!("form");
                params
            }
            Asking::Approval => approval_form(interrupt)?,
        };
        serde_json::from_value(json!({ "method": "elicitation/create", "params": params })).ok()
    }

    /// The interrupt's answer made of the client's `ElicitResult` (`{"action", "content"}`),
    /// or why it is not one.
    pub(super) fn answer(self, response: &Value) -> Result<Value, &'static str> {
        let action = response
            .get("action")
            .and_then(Value::as_str)
            .ok_or("an elicitation's answer has an `action`")?;
        if !matches!(action, "accept" | "decline" | "cancel") {
            return Err("an elicitation's `action` is `accept`, `decline` or `cancel`");
        }
        match self {
            Asking::Form => Ok(response.clone()),
            Asking::Approval => {
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
                serde_json::to_value(ApprovalResponse::new([decision]))
                    .map_err(|_| "the approval's answer could not be made")
            }
        }
    }
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

    #[test]
    fn an_approval_is_a_yes_or_no_form_and_its_answer_a_decision() {
        let asked = approval();
        assert_eq!(
            asked.id,
            InterruptId::new("0/1:after_model:0:HumanInTheLoop")
        );
        let asking = Asking::of(&asked).unwrap();
        assert_eq!(asking, Asking::Approval);
        let request = serde_json::to_value(asking.input_request(&asked).unwrap()).unwrap();
        assert_eq!(request["method"], "elicitation/create");
        let message = request["params"]["message"].as_str().unwrap();
        assert!(message.contains("`charge`") && message.contains(r#"{"cents":300}"#));
        assert!(message.contains("Charges a card"), "{message}");
        assert_eq!(
            request["params"]["requestedSchema"]["required"],
            json!(["approve"])
        );

        let yes = json!({ "action": "accept", "content": { "approve": true } });
        assert_eq!(
            asking.answer(&yes).unwrap(),
            json!({ "decisions": [{ "type": "approve" }] })
        );
        let no = json!({ "action": "accept", "content": { "approve": false, "reason": "no" } });
        assert_eq!(
            asking.answer(&no).unwrap(),
            json!({ "decisions": [{ "type": "reject", "message": "no" }] })
        );
        let declined = json!({ "action": "decline" });
        assert_eq!(
            asking.answer(&declined).unwrap()["decisions"][0]["message"],
            "the form was declined"
        );
        assert!(asking.answer(&json!({ "action": "maybe" })).is_err());
        assert!(asking.answer(&json!("yes")).is_err());
    }

    #[test]
    fn a_form_is_asked_as_it_is_and_answered_with_the_clients_result() {
        let asked = interrupt(json!({
            "message": "Your name?",
            "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } },
        }));
        let asking = Asking::of(&asked).unwrap();
        assert_eq!(asking, Asking::Form);
        let request = serde_json::to_value(asking.input_request(&asked).unwrap()).unwrap();
        assert_eq!(request["params"]["message"], "Your name?");
        let answer = json!({ "action": "accept", "content": { "name": "Ada" } });
        assert_eq!(asking.answer(&answer).unwrap(), answer);
    }

    #[test]
    fn other_interrupts_have_no_form() {
        assert_eq!(Asking::of(&interrupt(json!({ "ask": "anything" }))), None);
        // An approval of several calls (not one a served call makes).
        let two = json!({ "actions": [
            { "call_id": "a", "name": "x", "arguments": {}, "allowed_decisions": [] },
            { "call_id": "b", "name": "y", "arguments": {}, "allowed_decisions": [] },
        ]});
        assert_eq!(Asking::of(&interrupt(two)), None);
    }
}
