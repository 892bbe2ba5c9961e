//! What a piece of code traced: its spans (name, parent, fields) and events (level, message,
//! fields), recorded per thread under one global subscriber (scoped subscribers race with the
//! callsite cache when tests run in parallel).

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One span: its name, the index of its parent among the captured spans, its fields.
#[derive(Debug, Clone)]
pub(crate) struct SpanRecord {
    pub(crate) name: &'static str,
    pub(crate) parent: Option<usize>,
    pub(crate) fields: BTreeMap<String, String>,
}

/// One event: its level, message and other fields, and the span it happened in.
#[derive(Debug, Clone)]
pub(crate) struct EventRecord {
    pub(crate) level: Level,
    pub(crate) message: String,
    pub(crate) span: Option<usize>,
    pub(crate) fields: BTreeMap<String, String>,
}

/// Everything captured, in the order it happened.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub(crate) spans: Vec<SpanRecord>,
    pub(crate) events: Vec<EventRecord>,
    open: HashMap<u64, usize>,
}

thread_local! {
    static CAPTURED: RefCell<Captured> = RefCell::default();
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

struct Capture;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, cx: LayerContext<'_, S>) {
        let parent = match attrs.parent() {
            Some(parent) => Some(parent.clone()),
            None if attrs.is_contextual() => cx.current_span().id().cloned(),
            None => None,
        };
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        CAPTURED.with(|captured| {
            let mut captured = captured.borrow_mut();
            let parent = parent.and_then(|parent| captured.open.get(&parent.into_u64()).copied());
            let index = captured.spans.len();
            captured.spans.push(SpanRecord {
                name: attrs.metadata().name(),
                parent,
                fields,
            });
            captured.open.insert(id.into_u64(), index);
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: LayerContext<'_, S>) {
        CAPTURED.with(|captured| {
            let mut captured = captured.borrow_mut();
            if let Some(&index) = captured.open.get(&id.into_u64()) {
                values.record(&mut Fields(&mut captured.spans[index].fields));
            }
        });
    }

    fn on_event(&self, event: &Event<'_>, cx: LayerContext<'_, S>) {
        let span = match event.parent() {
            Some(parent) => Some(parent.clone()),
            None if event.is_contextual() => cx.current_span().id().cloned(),
            None => None,
        };
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let message = fields.remove("message").unwrap_or_default();
        CAPTURED.with(|captured| {
            let mut captured = captured.borrow_mut();
            let span = span.and_then(|span| captured.open.get(&span.into_u64()).copied());
            captured.events.push(EventRecord {
                level: *event.metadata().level(),
                message,
                span,
                fields,
            });
        });
    }
}

/// Installs the capturing subscriber, once per test binary.
fn install() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let subscriber = tracing_subscriber::registry().with(Capture);
        tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
    });
}

/// What `f` traced on this thread.
pub(crate) fn traced<T>(f: impl FnOnce() -> T) -> (T, Captured) {
    install();
    CAPTURED.with(|captured| *captured.borrow_mut() = Captured::default());
    let value = f();
    (value, CAPTURED.with(RefCell::take))
}

/// What `future` traced on this thread (a current-thread runtime keeps it there).
pub(crate) async fn traced_async<T>(future: impl std::future::Future<Output = T>) -> (T, Captured) {
    install();
    CAPTURED.with(|captured| *captured.borrow_mut() = Captured::default());
    let value = future.await;
    (value, CAPTURED.with(RefCell::take))
}
