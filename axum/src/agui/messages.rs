//! A conversation's messages in AG-UI's form (`MESSAGES_SNAPSHOT`'s, and the thread endpoint's):
//! ids made of the thread's id and each message's place, so that they stay the same.

use hookchain_core::Message;
use hookchain_core::Role;
use serde_json::{Value, json};

/// `messages` as AG-UI messages; system messages are left out (the client did not write them).
pub fn agui_messages(thread_id: &str, messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .enumerate()
        .filter_map(|(at, message)| {
            let id = format!("{thread_id}:{at}");
            let text = message.text();
            Some(match message.role {
                Role::User => json!({"id": id, "role": "user", "content": text}),
                Role::Assistant => {
                    let mut value = json!({"id": id, "role": "assistant", "content": text});
                    if !message.tool_calls.is_empty() {
                        value["toolCalls"] = message
                            .tool_calls
                            .iter()
                            .map(|call| {
                                json!({
                                    "id": call.id,
                                    "type": "function",
                                    "function": {
                                        "name": call.name,
                                        "arguments": call.arguments.to_string(),
                                    },
                                })
                            })
                            .collect();
                    }
                    value
                }
                Role::Tool => json!({
                    "id": id,
                    "role": "tool",
                    "content": text,
                    "toolCallId": message.tool_call_id.as_deref().unwrap_or_default(),
                }),
                _ => return None,
            })
        })
        .collect()
}
