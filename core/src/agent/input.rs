//! What a run starts from.

use crate::message::Message;

/// The messages a run starts from: a user's text, one message, or a whole history.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInput(pub Vec<Message>);

impl From<&str> for RunInput {
    fn from(text: &str) -> Self {
        RunInput(vec![Message::user(text)])
    }
}

impl From<String> for RunInput {
    fn from(text: String) -> Self {
        RunInput(vec![Message::user(text)])
    }
}

impl From<Message> for RunInput {
    fn from(message: Message) -> Self {
        RunInput(vec![message])
    }
}

impl From<Vec<Message>> for RunInput {
    fn from(messages: Vec<Message>) -> Self {
        RunInput(messages)
    }
}

/// What a run can start from: everything that converts into a [`RunInput`] (a `&str`, a
/// `String`, a [`Message`], a `Vec<Message>`, a [`RunInput`]). The methods that start a run take
/// `impl IntoRunInput`, so that a value that is not an input (a thread passed to `run`, say) is
/// reported with this trait's message, which names `run_in`, rather than as a missing
/// `From` impl of `RunInput`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what a run starts from",
    label = "not a run's input",
    note = "a run starts from a text (`&str`, `String`), a `Message` or a `Vec<Message>`; a run in a \
            thread takes the thread first: `agent.run_in(&mut thread, input)` (`stream_in` for \
            a stream)"
)]
pub trait IntoRunInput {
    /// The input.
    fn into_run_input(self) -> RunInput;
}

// Not recommended: a wrong input is then reported with `IntoRunInput`'s message, not as a
// missing `From` impl.
#[diagnostic::do_not_recommend]
impl<T: Into<RunInput>> IntoRunInput for T {
    fn into_run_input(self) -> RunInput {
        self.into()
    }
}
