//! What a run starts from.

use crate::message::Message;

/// The messages a run starts from: a user's text, one message, or a whole history.
#[derive(Debug, Clone, PartialEq)]
pub struct Input(pub Vec<Message>);

impl From<&str> for Input {
    fn from(text: &str) -> Self {
        Input(vec![Message::user(text)])
    }
}

impl From<String> for Input {
    fn from(text: String) -> Self {
        Input(vec![Message::user(text)])
    }
}

impl From<Message> for Input {
    fn from(message: Message) -> Self {
        Input(vec![message])
    }
}

impl From<Vec<Message>> for Input {
    fn from(messages: Vec<Message>) -> Self {
        Input(messages)
    }
}
