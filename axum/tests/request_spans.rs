//! A request and its run in spans: the request's (`http_request`, with its id) and the run's
//! (`agui_run`, with the thread's, the run's and the request's ids).
//!
//! A binary of its own: its subscriber is the test's thread's default (`set_default`), and
//! `tracing` caches whether a span's callsite is wanted when the callsite is first hit — by
//! another test's run, on another thread with no subscriber, it could be cached as never
//! wanted, and the span missed here (it happened in CI).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use hookchain::prelude::*;
use hookchain::thread_store::InMemoryThreadStore;
use hookchain_axum::AgentServer;
use serde_json::json;
use tower::ServiceExt;

/// Records the name and fields of every span created while it is the default subscriber.
#[derive(Clone, Default)]
struct Spans(Arc<std::sync::Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(
        &self,
        attributes: &tracing::span::Attributes<'_>,
        _id: &tracing::span::Id,
        _context: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!(" {}={value:?}", field.name()));
            }
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                self.0.push_str(&format!(" {}={value}", field.name()));
            }
        }
        let mut fields = Fields(attributes.metadata().name().to_owned());
        attributes.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
}

#[tokio::test]
async fn a_request_and_its_run_are_traced_with_the_request_id() {
    use tracing_subscriber::layer::SubscriberExt;
    let spans = Spans::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hello!")]))
        .build()
        .unwrap();
    let server = AgentServer::builder()
        .allow_anonymous()
        .build(Arc::new(agent), InMemoryThreadStore::new())
        .unwrap();
    let body = json!({"threadId": "t9", "runId": "r9",
                      "messages": [{"id": "m1", "role": "user", "content": "Hi"}]});
    let request = Request::post("/")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-request-id", "req-42")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = server.router().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let seen = spans.0.lock().unwrap().clone();
    assert!(
        seen.iter().any(|span| span.starts_with("http_request")
            && span.contains("request_id=req-42")
            && span.contains("path=/")),
        "{seen:#?}"
    );
    assert!(
        seen.iter().any(|span| span.starts_with("agui_run")
            && span.contains("thread_id=t9")
            && span.contains("run_id=r9")
            && span.contains("request_id=req-42")),
        "{seen:#?}"
    );
}
