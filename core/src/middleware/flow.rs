//! What a sequential hook tells the agent loop to do next.

use crate::hook::Jump;
use crate::interrupt::Interruption;
use crate::model::ModelResponse;

/// The outcome of a `before_agent`, `before_model` or `after_model` hook.
///
/// | returned from  | `Continue`      | `Respond(r)`                                  | `Jump(..)`              |
/// |----------------|-----------------|-----------------------------------------------|-------------------------|
/// | `before_agent` | next hook       | `r` stands in for the first model call        | see [`Jump`]            |
/// | `before_model` | next hook       | skip later `before_model` hooks and the model; `r` is the response | see [`Jump`] |
/// | `after_model`  | next hook       | replace the response with `r`, go on           | see [`Jump`]            |
///
/// `Interrupt` (from `before_model` and `after_model`) pauses the run; see
/// [`interrupt`](crate::interrupt).
///
/// A response that stands in for the model still passes through every `after_model` hook, so
/// output middleware (redaction, validation) sees it like any model answer.
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a Flow tells the agent loop what to do; return it from the hook"]
#[non_exhaustive]
pub enum Flow {
    /// Go on as normal.
    Continue,
    /// Use this response instead of calling the model (see [`Flow::respond`]). Boxed: a `Flow`
    /// stays two words, cheap to return from every hook.
    Respond(Box<ModelResponse>),
    /// Jump elsewhere in the loop. The middleware must declare the target for the hook that
    /// returns the jump, in [`Middleware::JUMPS`](super::Middleware::JUMPS) (with the macros:
    /// `#[hook(before_model, jumps = [end])]`); else the run fails with
    /// [`Error::UndeclaredJump`](crate::Error::UndeclaredJump).
    Jump(Jump),
    /// Pause the run for outside input (from `before_model` and `after_model`); see
    /// [`interrupt`](crate::interrupt).
    Interrupt(Box<Interruption>),
}

impl Flow {
    /// Whether this is [`Flow::Continue`].
    #[must_use]
    pub fn is_continue(&self) -> bool {
        matches!(self, Flow::Continue)
    }

    /// [`Flow::Jump`] to [`Jump::End`].
    pub const fn end() -> Flow {
        Flow::Jump(Jump::End)
    }

    /// [`Flow::Respond`] with `response`.
    pub fn respond(response: ModelResponse) -> Flow {
        Flow::Respond(Box::new(response))
    }

    /// [`Flow::Interrupt`] with `payload`: the run pauses, and resumes when the interrupt is
    /// answered; the hook then reads the answer with
    /// [`Context::resume_value`](crate::Context::resume_value).
    pub fn interrupt(payload: serde_json::Value) -> Flow {
        Flow::Interrupt(Box::new(Interruption::new(payload)))
    }
}

impl From<()> for Flow {
    fn from((): ()) -> Flow {
        Flow::Continue
    }
}
