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
