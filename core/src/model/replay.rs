//! A whole response as the events a stream of it would have yielded: the default of
//! [`Model::stream`](super::Model::stream) for models that only answer whole.

use std::future::Future;

use futures::stream::{self, Stream, StreamExt};

use super::ModelError;
use super::{ModelEvent, ModelResponse};
use crate::message::ContentPart;

impl ModelResponse {
    /// The events a stream of this response yields, one block per content part and per tool
    /// call, in order: a [`ResponseAssembler`](super::ResponseAssembler) fed them gives the
    /// response back (images, which no model streams, are left out).
    ///
    /// ```
    /// use hookchain::model::{ModelEvent, ResponseAssembler};
    /// use hookchain::{ModelResponse, ToolCall};
    ///
    /// let response = ModelResponse::tool_calls([ToolCall::new("c1", "search", serde_json::json!({"q": "rust"}))]);
    /// let mut assembler = ResponseAssembler::new();
    /// for event in response.clone().into_events() {
    ///     assembler.push(&event)?;
    /// }
    /// assert_eq!(assembler.finish()?, response);
    /// # Ok::<(), hookchain::ModelError>(())
    /// ```
    #[must_use]
    pub fn into_events(self) -> Vec<ModelEvent> {
        let ModelResponse {
            message,
            usage,
            stop_reason,
        } = self;
        let mut events = Vec::new();
        let mut index = 0;
        for part in message.content.parts() {
            match part {
                ContentPart::Text { text } if text.is_empty() => continue,
                ContentPart::Text { text } => events.push(ModelEvent::TextDelta {
                    index,
                    text: text.clone(),
                }),
                ContentPart::Reasoning(reasoning) => {
                    events.push(ModelEvent::ReasoningDelta {
                        index,
                        text: reasoning.text.clone(),
                    });
                    if let Some(signature) = &reasoning.signature {
                        events.push(ModelEvent::ReasoningSignature {
                            index,
                            signature: signature.clone(),
                        });
                    }
                }
                ContentPart::RedactedReasoning { data } => {
                    events.push(ModelEvent::RedactedReasoning {
                        index,
                        data: data.to_string(),
                    });
                }
                _ => continue,
            }
            index += 1;
        }
        for (key, value) in message.metadata {
            events.push(ModelEvent::Metadata { key, value });
        }
        for call in message.tool_calls {
            events.push(ModelEvent::ToolCallStart {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            events.push(ModelEvent::ToolCallDelta {
                index,
                arguments: call.arguments.to_string(),
            });
            events.push(ModelEvent::ToolCallEnd { index, call });
            index += 1;
        }
        events.push(ModelEvent::Usage(usage));
        events.push(ModelEvent::Finish { stop_reason });
        events
    }
}

/// The stream of the answer `invoke` resolves to: its events, or its error.
pub(crate) fn replay(
    invoke: impl Future<Output = Result<ModelResponse, ModelError>> + Send,
) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
    stream::once(invoke).flat_map(|answer| {
        let events: Vec<Result<ModelEvent, ModelError>> = match answer {
            Ok(response) => response.into_events().into_iter().map(Ok).collect(),
            Err(error) => vec![Err(error)],
        };
        stream::iter(events)
    })
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use serde_json::json;

    use super::*;
    use crate::message::{Content, Message, ToolCall};
    use crate::model::{ResponseAssembler, StopReason, Usage};

    fn assembled(events: &[ModelEvent]) -> ModelResponse {
        let mut assembler = ResponseAssembler::new();
        for event in events {
            assembler.push(event).unwrap();
        }
        assembler.finish().unwrap()
    }

    #[test]
    fn every_kind_of_answer_assembles_back_from_its_events() {
        let content = Content::from(vec![
            ContentPart::signed_reasoning("think", "sig"),
            ContentPart::redacted_reasoning("opaque"),
            ContentPart::text("Checking."),
        ]);
        let answers = [
            ModelResponse::text("plain"),
            ModelResponse::text(""),
            ModelResponse::new(
                Message::assistant_with_tool_calls(
                    content,
                    [
                        ToolCall::new("c1", "a", json!({"x": [1, 2]})),
                        ToolCall::new("c2", "b", json!({})),
                    ],
                ),
                StopReason::ToolUse,
            )
            .with_usage(Usage::new(10, 3).with_cache(4, 0)),
        ];
        for answer in answers {
            let events = answer.clone().into_events();
            assert_eq!(assembled(&events), answer);
        }
    }

    #[test]
    fn the_default_stream_replays_the_answer_or_its_error() {
        let events: Vec<_> =
            block_on(replay(async { Ok(ModelResponse::text("hi")) }).collect::<Vec<_>>());
        assert_eq!(
            events[0].as_ref().unwrap(),
            &ModelEvent::TextDelta {
                index: 0,
                text: "hi".into()
            }
        );
        assert!(matches!(
            events.last(),
            Some(Ok(ModelEvent::Finish {
                stop_reason: StopReason::EndTurn
            }))
        ));

        let failed: Vec<_> =
            block_on(replay(async { Err(ModelError::overloaded("busy")) }).collect::<Vec<_>>());
        assert_eq!(failed.len(), 1);
        assert!(failed[0].is_err());
    }
}
