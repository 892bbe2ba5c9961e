//! A server's request for input during a tool call, as a durable interrupt of the run.
//!
//! MCP lets a server ask the user for input while it runs a tool: a message and the schema of
//! a form. A run cannot hold a server's call open while it waits for a person (who may answer
//! tomorrow, to another process), so the run pauses instead, with an interrupt whose payload
//! is an [`Elicitation`], and goes on when it is resumed with [`Elicitation::answer`]'s value.
//! How the call goes on depends on the revision the server speaks
//! ([`McpProtocol`](crate::McpProtocol)):
//!
//! **2026-07-28 (input required).** The server answers the call *input required*: its
//! questions, and an opaque `requestState`. The run pauses on the first question, the state
//! kept in the interrupt's payload ([`Elicitation::round`]) and so in the run's checkpoint.
//! Resumed — by any process that has the store, after a restart — with the answer, the run
//! pauses on the round's next question if there is one; once all are answered, the call is
//! made again with the answers and the state, and the server goes on where it asked. A
//! server's tool that asked before it acted acts once. Requests no person answers are answered
//! here: a URL to open is declined (only forms are declared), the client's roots are none;
//! a server that asks to sample a model fails the call (this client does not sample).
//!
//! **2025-11-25 (a session).** The server asks with a request of its own
//! (`elicitation/create`) while the call is open:
//!
//! 1. the server's elicitation is answered `cancel` (the user did not answer *yet*), the
//!    server's result for the call is set aside, and the tool raises the interrupt;
//! 2. the run is resumed with the answer; the tool is called again with the same arguments,
//!    and the server's elicitations in that call are answered, in order, with the answers
//!    given — the first with the first, and so on;
//! 3. an elicitation past the answers given pauses the run again, with the earlier answers in
//!    its [`answered`](Elicitation::answered) (so that [`Elicitation::answer`] carries them
//!    into the next resume).
//!
//! So under 2025-11-25 a server's tool that elicits is called once more per answer, and a
//! server that acted before it elicited acts again (that revision cannot suspend a call
//! across processes). An elicitation is attributed to the call in flight on its session: a
//! server that elicits while two calls of this toolset are in flight on the same session, or
//! between calls, gets `decline` (the revision does not say which request an elicitation
//! belongs to), as does a URL-mode elicitation, and a request past the bounds below.
//!
//! Either way the resume itself is the core's: single-use, refused when replayed or late, from
//! any process that has the store.
//!
//! **Answers at hand.** A question the application can answer without a person — a value it
//! knows, or a form its defaults fill ([`accept_defaults`]) — is answered in the process by
//! an [`ElicitationHandler`] given to [`McpServer::on_elicitation`](crate::McpServer::on_elicitation):
//! its answer goes to the server at once, and only the questions it leaves (`None`) pause the
//! run. An accepted form gets the defaults its schema gives for the properties it left out
//! (from a handler, and in [`Elicitation::answer`]), as a form shows them filled in.

mod handler;
mod round;
pub(crate) mod routes;

pub use handler::{ElicitationHandler, ElicitationRequest, accept_defaults};
pub use round::InputRound;
pub(crate) use round::{Asker, RoundError};

use hookchain_core::interrupt::Interrupt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The most elicitations of one call that pause the run: past it, the server's further
/// elicitations in that call are declined.
pub const MAX_ELICITATIONS_PER_CALL: usize = 16;

/// The largest message of an elicitation kept in the interrupt (longer ones are cut).
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024;

/// The largest requested schema, as JSON: a larger one is declined (it is stored in the
/// checkpoint, and read by whoever renders the form).
pub(crate) const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// What a server asked the user during a tool call: the payload of the interrupt the call
/// raised (see the [module's docs](self)).
///
/// Examples: *A server's questions* in the docs of `hookchain::mcp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Elicitation {
    /// Always [`ElicitationKind::McpElicitation`]: tells this payload from other interrupts'.
    pub kind: ElicitationKind,
    /// The server that asked.
    pub server: String,
    /// The tool whose call asked (the name the model calls it by).
    pub tool: String,
    /// What the server says to the user.
    pub message: String,
    /// The form the answer fills: a JSON schema of an object with primitive properties.
    pub requested_schema: Value,
    /// The answers to the call's earlier elicitations (given in the resumes before this one):
    /// under 2026-07-28, those of this round's earlier questions.
    #[serde(default)]
    pub answered: Vec<ElicitationAnswer>,
    /// Under 2026-07-28, the round of the call's input requests this question is part of: its
    /// other questions and the server's state, which the call is made again with once all are
    /// answered. `None` under 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<InputRound>,
}

/// The kind of an [`Elicitation`] payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ElicitationKind {
    /// `"mcp_elicitation"`.
    #[serde(rename = "mcp_elicitation")]
    McpElicitation,
}

/// The user's answer to one elicitation, as MCP has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitationAnswer {
    /// The user filled the form: `content` is the object the schema describes.
    Accept {
        /// The form's values.
        content: Map<String, Value>,
    },
    /// The user refused to give the information; the server's tool goes on without it.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

impl ElicitationAnswer {
    /// This answer, a form accepted without a property that `schema` gives a default filled
    /// with the default.
    #[must_use]
    pub fn with_defaults(self, schema: &Value) -> Self {
        match self {
            ElicitationAnswer::Accept { mut content } => {
                for (name, default) in handler::defaults(schema) {
                    content.entry(name).or_insert(default);
                }
                ElicitationAnswer::Accept { content }
            }
            other => other,
        }
    }

    /// The form filled with `content`, which must be a JSON object (else it is given back).
    ///
    /// # Errors
    ///
    /// `content` itself when it is not an object.
    pub fn accept(content: Value) -> Result<Self, Value> {
        match content {
            Value::Object(content) => Ok(Self::Accept { content }),
            other => Err(other),
        }
    }
}

/// The value a paused run resumes with: every answer of the call, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ElicitationReply {
    pub(crate) answers: Vec<ElicitationAnswer>,
}

impl Elicitation {
    pub(crate) fn new(
        server: &str,
        tool: &str,
        asked: routes::Asked,
        answered: Vec<ElicitationAnswer>,
    ) -> Self {
        Self {
            kind: ElicitationKind::McpElicitation,
            server: server.to_owned(),
            tool: tool.to_owned(),
            message: asked.message,
            requested_schema: asked.requested_schema,
            answered,
            round: None,
        }
    }

    /// The question of `round` that comes after the `answered` answers of it.
    pub(crate) fn of_round(
        server: &str,
        tool: &str,
        round: InputRound,
        answered: Vec<ElicitationAnswer>,
    ) -> Option<Self> {
        let question = round.question(answered.len())?;
        Some(Self {
            kind: ElicitationKind::McpElicitation,
            server: server.to_owned(),
            tool: tool.to_owned(),
            message: question.message.clone(),
            requested_schema: question.requested_schema.clone(),
            answered,
            round: Some(round),
        })
    }

    /// The elicitation in an interrupt's payload, if it is one.
    #[must_use]
    pub fn from_payload(payload: &Value) -> Option<Self> {
        Self::deserialize(payload).ok()
    }

    /// The elicitation of `interrupt`, if it is one.
    #[must_use]
    pub fn from_interrupt(interrupt: &Interrupt) -> Option<Self> {
        Self::from_payload(&interrupt.payload)
    }

    /// The value to resume the paused run with: the earlier answers of the call and `answer`
    /// — a form accepted without a property that the schema gives a default gets the default
    /// (as a form shows it filled in).
    #[must_use]
    pub fn answer(&self, answer: ElicitationAnswer) -> Value {
        let mut answers = self.answered.clone();
        answers.push(answer.with_defaults(&self.requested_schema));
        // Serializing plain data cannot fail.
        serde_json::to_value(ElicitationReply { answers }).unwrap_or(Value::Null)
    }
}

impl ElicitationReply {
    /// The reply in a resume value, checked: at least one answer, at most
    /// [`MAX_ELICITATIONS_PER_CALL`].
    pub(crate) fn from_resume_value(value: &Value) -> Result<Self, String> {
        let reply = Self::deserialize(value).map_err(|error| {
            format!(
                "the answer to an elicitation must be `Elicitation::answer`'s value \
                 ({{\"answers\": [{{\"action\": \"accept\", \"content\": {{…}}}}, …]}}): {error}"
            )
        })?;
        if reply.answers.is_empty() {
            return Err("the answer to an elicitation has no answers".to_owned());
        }
        if reply.answers.len() > MAX_ELICITATIONS_PER_CALL {
            return Err(format!(
                "the answer to an elicitation has more than {MAX_ELICITATIONS_PER_CALL} answers"
            ));
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn asked() -> Elicitation {
        Elicitation::new(
            "shop",
            "checkout",
            routes::Asked {
                message: "Which address?".to_owned(),
                requested_schema: json!({"type": "object"}),
            },
            vec![ElicitationAnswer::Decline],
        )
    }

    #[test]
    fn an_answer_carries_the_earlier_ones_and_reads_back() {
        let value = asked().answer(ElicitationAnswer::accept(json!({"city": "Lyon"})).unwrap());
        assert_eq!(
            value,
            json!({"answers": [
                {"action": "decline"},
                {"action": "accept", "content": {"city": "Lyon"}}
            ]})
        );
        let reply = ElicitationReply::from_resume_value(&value).unwrap();
        assert_eq!(reply.answers.len(), 2);
    }

    #[test]
    fn the_payload_reads_back_and_other_payloads_are_not_elicitations() {
        let payload = serde_json::to_value(asked()).unwrap();
        assert_eq!(payload["kind"], "mcp_elicitation");
        assert_eq!(Elicitation::from_payload(&payload), Some(asked()));
        assert_eq!(
            Elicitation::from_payload(&json!({"question": "Which city?"})),
            None
        );
        let mut other_kind = payload;
        other_kind["kind"] = json!("approval");
        assert_eq!(Elicitation::from_payload(&other_kind), None);
    }

    #[test]
    fn a_bad_resume_value_is_refused_with_what_is_expected() {
        for bad in [
            json!("Lyon"),
            json!({"answers": []}),
            json!({"answers": [{"action": "accept", "content": "Lyon"}]}),
            json!({"answers": [{"action": "maybe"}]}),
            json!({"answers": vec![json!({"action": "decline"}); MAX_ELICITATIONS_PER_CALL + 1]}),
        ] {
            assert!(
                ElicitationReply::from_resume_value(&bad).is_err(),
                "{bad} was taken"
            );
        }
    }

    #[test]
    fn an_accepted_form_gets_the_defaults_it_left_out() {
        let mut asked = asked();
        asked.requested_schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "country": {"type": "string", "default": "France"}
            }
        });
        let value = asked.answer(ElicitationAnswer::accept(json!({"city": "Lyon"})).unwrap());
        assert_eq!(
            value["answers"][1],
            json!({"action": "accept", "content": {"city": "Lyon", "country": "France"}})
        );
        let given = asked.answer(
            ElicitationAnswer::accept(json!({"city": "Bern", "country": "Switzerland"})).unwrap(),
        );
        assert_eq!(given["answers"][1]["content"]["country"], "Switzerland");
        let declined = asked.answer(ElicitationAnswer::Decline);
        assert_eq!(declined["answers"][1], json!({"action": "decline"}));
    }

    #[test]
    fn accept_takes_only_an_object() {
        assert!(ElicitationAnswer::accept(json!({"a": 1})).is_ok());
        assert_eq!(ElicitationAnswer::accept(json!(3)), Err(json!(3)));
    }
}
