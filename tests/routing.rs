//! A request can name its model: a wrap sends a retry to another model through `next`, and the
//! inner middleware run for it as for the first attempt.

mod support;

use hookchain::model::{DynModel, ModelRouter};
use hookchain::prelude::*;
use hookchain::{ModelError, ModelErrorKind, chain, hook};

use support::{Recorder, new_log, take_events};

/// On a failed call, tries the `backup` model (through the inner layers).
#[hook(wrap_model_call)]
async fn fall_back(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    match next.call(cx, request.clone()).await {
        Ok(response) => Ok(response),
        Err(_) => {
            let mut retry = request;
            retry.model = Some("backup".into());
            next.call(cx, retry).await
        }
    }
}

/// "A wrap sends a request to another model through `next`": the main model fails, the
/// fallback names the backup, and the inner recorder wraps both attempts.
#[tokio::test]
async fn a_wrap_routes_a_retry_to_another_model_through_the_inner_middleware() {
    let log = new_log();
    let main = ScriptedModel::new([]).then_fail(ModelError::overloaded("busy"));
    let backup = ScriptedModel::new([ModelResponse::text("from the backup")]);
    let router = ModelRouter::new(main).route("backup", backup);
    let agent = Agent::builder(router)
        .chain(chain![fall_back, Recorder::new("inner", &log)])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("from the backup"));
    assert_eq!(output.model_calls, 2);
    let wraps: Vec<String> = take_events(&log)
        .into_iter()
        .filter(|event| event.contains("wrap_model"))
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

/// A request naming a model the router does not know is an invalid request, naming the routes.
#[tokio::test]
async fn an_unknown_model_name_is_an_invalid_request() {
    let router = ModelRouter::new(ScriptedModel::new([])).route(
        "small",
        Box::new(ScriptedModel::new([])) as Box<dyn DynModel>,
    );
    let mut request = ModelRequest::new(vec![Message::user("hi")]);
    request.model = Some("large".into());
    let error = hookchain::Model::invoke(&router, request)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ModelErrorKind::InvalidRequest);
    assert!(error.to_string().contains("`large`") && error.to_string().contains("small"));
}
