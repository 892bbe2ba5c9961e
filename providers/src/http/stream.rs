//! Driving a streamed answer: events in, [`ModelEvent`]s out, through a provider's decoder.

use std::collections::VecDeque;
use std::future::Future;

use futures::Stream;
use hookchain_core::model::ModelEvent;
use hookchain_core::{ModelError, ModelResponse};

use super::{BodyEvents, Event};

/// What a provider knows about its stream format.
pub(crate) trait Decoder: Send + 'static {
    /// Decodes one event, appending the model events it yields to `out`; `Ok(true)` when
    /// the event closes the stream (`[DONE]`, `message_stop`).
    fn decode(&mut self, event: &Event, out: &mut VecDeque<ModelEvent>)
    -> Result<bool, ModelError>;

    /// The body ended without a closing event: `Ok` if the answer is complete nonetheless.
    fn end_of_body(&self) -> Result<(), ModelError>;

    /// The assembled answer.
    fn finish(self) -> Result<ModelResponse, ModelError>;
}

/// A streamed answer being decoded.
#[derive(Debug)]
pub(crate) struct EventStream<D> {
    sse: BodyEvents,
    decoder: D,
    pending: VecDeque<ModelEvent>,
    done: bool,
}

impl<D: Decoder> EventStream<D> {
    pub(crate) fn new(sse: BodyEvents, decoder: D) -> Self {
        Self {
            sse,
            decoder,
            pending: VecDeque::new(),
            done: false,
        }
    }

    /// The next event; after an error, nothing more.
    pub(crate) async fn next(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            let step = match self.sse.next().await {
                Some(Ok(event)) => self
                    .decoder
                    .decode(&event, &mut self.pending)
                    .map(|closed| self.done = closed),
                Some(Err(error)) => Err(error),
                None => {
                    self.done = true;
                    self.decoder.end_of_body()
                }
            };
            if let Err(error) = step {
                self.done = true;
                self.pending.clear();
                return Some(Err(self.sse.identify(error)));
            }
        }
    }

    /// Reads the whole stream and assembles the answer.
    pub(crate) async fn into_response(mut self) -> Result<ModelResponse, ModelError> {
        while let Some(event) = self.next().await {
            event?;
        }
        let sse = self.sse;
        self.decoder.finish().map_err(|error| sse.identify(error))
    }
}

enum Phase<F, D> {
    Connecting(F),
    // Boxed once per stream: the response it reads is large to move at every event.
    Streaming(Box<EventStream<D>>),
    Over,
}

/// The events of the answer that `connect` opens; a failure to connect is the only item.
pub(crate) fn events<D, F>(connect: F) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send
where
    D: Decoder,
    F: Future<Output = Result<EventStream<D>, ModelError>> + Send + 'static,
{
    futures::stream::unfold(Phase::Connecting(connect), |phase| async move {
        let mut stream = match phase {
            Phase::Connecting(connect) => match connect.await {
                Ok(stream) => Box::new(stream),
                Err(error) => return Some((Err(error), Phase::Over)),
            },
            Phase::Streaming(stream) => stream,
            Phase::Over => return None,
        };
        match stream.next().await? {
            Ok(event) => Some((Ok(event), Phase::Streaming(stream))),
            Err(error) => Some((Err(error), Phase::Over)),
        }
    })
}
