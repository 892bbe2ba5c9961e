//! `ModelFallback`, rule by rule (DESIGN §11).

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::ModelFallback;
use hookchain::builtin::fallback::FallbackError;
use hookchain::error::Report;
use hookchain::model::ModelRouter;
use hookchain::prelude::*;
use hookchain::{ModelError, ModelErrorKind, chain, hook};
use serde_json::json;

use support::{Recorder, new_log, take_events};

fn fallback(models: &[&str]) -> ModelFallback {
    models
        .iter()
        .fold(ModelFallback::builder(), |b, m| b.model(*m))
        .build()
        .unwrap()
}

fn failing(error: ModelError) -> ScriptedModel {
    ScriptedModel::new([]).then_fail(error)
}

fn answering(text: &str) -> ScriptedModel {
    ScriptedModel::new([ModelResponse::text(text)])
}

#[tokio::test]
async fn models_are_tried_in_order() {
    let router = ModelRouter::new(failing(ModelError::overloaded("main is busy")))
        .route("second", failing(ModelError::timeout("second is slow")))
        .route("third", answering("from the third"))
        .route("fourth", answering("from the fourth"));
    let agent = Agent::builder(router)
        .chain(chain![fallback(&["second", "third", "fourth"])])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("from the third"));
    assert_eq!(output.model_calls, 3);
}

#[tokio::test]
async fn the_first_model_answering_is_the_only_one_called() {
    let router = ModelRouter::new(answering("from the main model"))
        .route("second", failing(ModelError::other("must not be called")));
    let agent = Agent::builder(router)
        .chain(chain![fallback(&["second"])])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("from the main model"));
    assert_eq!(output.model_calls, 1);
}

#[tokio::test]
async fn each_attempt_passes_through_the_inner_middleware() {
    let log = new_log();
    let router = ModelRouter::new(failing(ModelError::overloaded("busy")))
        .route("backup", answering("from the backup"));
    let agent = Agent::builder(router)
        .chain(chain![
            fallback(&["backup"]),
            Recorder::new("inner", &log).stamp_system("inner")
        ])
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    let wraps: Vec<String> = take_events(&log)
        .into_iter()
        .filter(|e| e.contains("wrap_model"))
        .collect();
    assert_eq!(
        wraps,
        [
            "inner:wrap_model:enter",
            "inner:wrap_model:exit",
            "inner:wrap_model:enter",
            "inner:wrap_model:exit"
        ]
    );
}

#[tokio::test]
async fn when_all_fail_the_error_carries_every_attempt_in_order() {
    let router = ModelRouter::new(failing(ModelError::overloaded("main is busy")))
        .route(
            "second",
            failing(ModelError::invalid_request("second refuses")),
        )
        .route(
            "third",
            failing(
                ModelError::rate_limited("third is limited")
                    .with_retry_after(std::time::Duration::from_secs(4)),
            ),
        );
    let agent = Agent::builder(router)
        .chain(chain![fallback(&["second", "third"])])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    let fallback = FallbackError::find(&error).expect("a FallbackError in the chain");
    let attempts: Vec<_> = fallback
        .attempts()
        .iter()
        .map(|a| (a.model(), a.error().kind()))
        .collect();
    assert_eq!(
        attempts,
        [
            (None, ModelErrorKind::Overloaded),
            (Some("second"), ModelErrorKind::InvalidRequest),
            (Some("third"), ModelErrorKind::RateLimited),
        ]
    );
    assert_eq!(
        fallback.to_string(),
        "3 model attempts failed: the agent's model: main is busy; `second`: second refuses; \
         `third`: third is limited"
    );
    // The model error has the last attempt's kind and Retry-After, for a retry outside.
    let Error::Model(model_error) = &error else {
        panic!("expected a model error, got {error:?}");
    };
    assert_eq!(model_error.kind(), ModelErrorKind::RateLimited);
    assert_eq!(
        model_error.retry_after(),
        Some(std::time::Duration::from_secs(4))
    );
    assert_eq!(
        Report(&error).to_string(),
        "the model call failed: every model failed: 3 model attempts failed: the agent's model: \
         main is busy; `second`: second refuses; `third`: third is limited"
    );
}

/// How many times `interrupting` ran.
static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);

/// An inner wrap that interrupts instead of calling the model.
#[hook(wrap_model_call)]
async fn interrupting(_request: ModelRequest) -> Result<ModelResponse, Error> {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    Err(Error::interrupt(json!({ "ask": "?" })))
}

#[tokio::test]
async fn an_interrupt_is_never_a_failure() {
    let router = ModelRouter::new(answering("main")).route("backup", answering("backup"));
    let agent = Agent::builder(router)
        .chain(chain![fallback(&["backup"]), interrupting])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    assert!(matches!(error, Error::Interrupted(_)), "{error:?}");
    assert_eq!(INTERRUPTS.load(Ordering::SeqCst), 1, "no second attempt");
    assert!(FallbackError::find(&error).is_none());
}

#[tokio::test]
async fn fall_back_on_narrows_the_failures() {
    let router = ModelRouter::new(failing(ModelError::content_filtered("no")))
        .route("backup", answering("from the backup"));
    let only_overload = ModelFallback::builder()
        .model("backup")
        .fall_back_on(|e| e.kind() == ModelErrorKind::Overloaded)
        .build()
        .unwrap();
    let agent = Agent::builder(router)
        .chain(chain![only_overload])
        .build()
        .unwrap();
    let error = agent.run("hi").await.unwrap_err();
    assert!(matches!(&error, Error::Model(e) if e.kind() == ModelErrorKind::ContentFiltered));
    assert!(FallbackError::find(&error).is_none());
}

#[test]
fn bad_settings_are_errors_naming_the_field() {
    assert_eq!(
        ModelFallback::builder().build().unwrap_err().field(),
        "model"
    );
    assert_eq!(
        ModelFallback::builder()
            .model("")
            .build()
            .unwrap_err()
            .field(),
        "model"
    );
    let twice = ModelFallback::builder()
        .model("a")
        .model("a")
        .build()
        .unwrap_err();
    assert_eq!(twice.to_string(), "invalid `model`: `a` is listed twice");
}
