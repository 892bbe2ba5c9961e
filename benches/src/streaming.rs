//! Streamed runs: [`EVENTS`] text deltas from a model through `Agent::stream` to a consumer,
//! with the empty chain and with 10 members that each have a per-event hook — beside a
//! hand-written stream adapter doing the same work (the 10 counts, the assembled answer, each
//! event handed to the consumer).

use std::hint::black_box;
use std::pin::pin;

use futures::stream::{self, Stream, StreamExt};
use hookchain::middleware::{Emit, False, HookSet, phase};
use hookchain::model::{ModelEvent, ResponseAssembler};
use hookchain::prelude::*;
use hookchain::{Model, ModelError, StopReason};

/// Text deltas per streamed answer.
pub const EVENTS: usize = 1000;

/// A model that streams [`EVENTS`] text deltas of `"tok"`, then finishes. Each event carries
/// its own text, as a provider's do: the same allocation in every variant.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tokens;

impl Model for Tokens {
    async fn invoke(&self, _: ModelRequest) -> Result<ModelResponse, ModelError> {
        Err(ModelError::invalid_request("this model only streams"))
    }

    fn stream(&self, _: ModelRequest) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        let deltas = (0..EVENTS).map(|_| {
            Ok(ModelEvent::TextDelta {
                index: 0,
                text: String::from("tok"),
            })
        });
        let finish = ModelEvent::Finish {
            stop_reason: StopReason::EndTurn,
        };
        stream::iter(deltas.chain([Ok(finish)]))
    }
}

/// A member with a per-event hook: counts the text it lets through.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally;

impl Middleware for Tally {
    type State = ();
    type ThreadState = ();
    type StreamState = usize;
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Tally";
    const HOOKS: HookSet = HookSet::of(Hook::OnModelEvent);

    #[inline]
    fn on_model_event<E: Emit>(
        &self,
        seen: &mut usize,
        event: ModelEvent,
        out: &mut E,
    ) -> Result<(), Error> {
        if let ModelEvent::TextDelta { text, .. } = &event {
            *seen += text.len();
        }
        out.emit(event)
    }
}

/// An agent with `chain` around [`Tokens`].
pub fn agent<C: Middleware>(chain: C) -> Agent<Tokens, C> {
    Agent::builder(Tokens).chain(chain).build().unwrap()
}

/// One streamed run, drained; returns the events received (the output included).
pub async fn stream_run<C: Middleware>(agent: &Agent<Tokens, C>) -> usize {
    let mut events = pin!(agent.stream("hi"));
    let mut received = 0;
    while let Some(event) = events.next().await {
        black_box(event.expect("the run succeeds"));
        received += 1;
    }
    received
}

/// The same work by hand: the model's stream, each event counted 10 times, assembled into the
/// answer, and handed to the consumer; returns the events handed over.
pub async fn hand_10(model: &Tokens) -> usize {
    let mut counts = [0_usize; 10];
    let mut assembler = ResponseAssembler::new();
    let mut events = pin!(model.stream(ModelRequest::default()));
    let mut received = 0;
    while let Some(event) = events.next().await {
        let event = event.expect("the model streams");
        if let ModelEvent::TextDelta { text, .. } = &event {
            for count in &mut counts {
                *count += black_box(text.len());
            }
        }
        assembler.push(&event).expect("a valid answer");
        black_box(event);
        received += 1;
    }
    black_box(assembler.finish().expect("a complete answer"));
    black_box(counts);
    received
}
