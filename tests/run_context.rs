//! Run context: typed values a caller gives to a run (`Agent::with_context`) reach every hook
//! and tool of it; they never go into a checkpoint, saved values do and come back on resume.
//! Each test is named after its rule.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use hookchain::prelude::*;
use hookchain::{Checkpoint, Content, EndReason, RunContext, RunOutput, Tool, ToolError, ToolSpec};
use hookchain::{middleware, tool};
use serde_json::{Value, json};

use support::{Log, events, new_log, push};

/// Who a run is for: a typed value of the run context.
#[derive(Debug)]
struct Tenant(&'static str);

/// A fake database handle: what the `#[tool]` writes to.
#[derive(Debug, Clone, Default)]
struct Db(Arc<Mutex<Vec<String>>>);

impl Db {
    fn rows(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// The tenant a context holds, or `-`.
fn tenant(cx: &Context) -> &'static str {
    cx.get::<Tenant>().map_or("-", |tenant| tenant.0)
}

/// Records, in every kind of hook, the tenant it read.
#[derive(Clone)]
struct Witness {
    log: Log,
}

#[middleware]
impl Witness {
    #[hook(before_agent)]
    fn start(&self, cx: &mut Context) {
        push(&self.log, format!("before_agent:{}", tenant(cx)));
    }

    #[hook(before_model)]
    fn before(&self, cx: &mut Context) {
        push(&self.log, format!("before_model:{}", tenant(cx)));
    }

    #[hook(wrap_model_call)]
    async fn around_model(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        push(&self.log, format!("wrap_model_call:{}", tenant(cx)));
        next.call(cx, request).await
    }

    #[hook(after_model)]
    fn after(&self, cx: &mut Context) {
        push(&self.log, format!("after_model:{}", tenant(cx)));
    }

    #[hook(wrap_tool_call)]
    async fn around_tool(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        push(&self.log, format!("wrap_tool_call:{}", tenant(&cx)));
        Ok(next.call(cx, call).await)
    }

    #[hook(after_agent)]
    fn end(&self, cx: &mut Context) {
        push(&self.log, format!("after_agent:{}", tenant(cx)));
    }
}

/// Writes a note to the tenant's database.
#[tool]
async fn save_note(cx: ToolContext<'_>, note: String) -> Result<String, ToolError> {
    let db = cx
        .get::<Db>()
        .ok_or_else(|| ToolError::for_model("save_note", "no database"))?;
    db.0.lock().unwrap().push(format!("{}:{note}", tenant(&cx)));
    Ok("saved".to_owned())
}

/// A hand-written tool that records the tenant and the saved locale it read; on its first
/// call of a step it pauses the run when `asks` is set.
struct WhoAmI {
    log: Log,
    asks: bool,
}

impl Tool for WhoAmI {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "whoami",
            "Says who the run is for.",
            json!({ "type": "object" }),
        )
    }

    async fn call(&self, cx: ToolContext<'_>, _arguments: Value) -> Result<Content, ToolError> {
        if self.asks && cx.resume_value().is_none() {
            return Err(ToolError::Interrupt {
                payload: json!("may I?"),
            });
        }
        let locale = cx
            .run_context()
            .saved::<String>("locale")
            .transpose()
            .map_err(|error| ToolError::failed("whoami", error))?;
        push(
            &self.log,
            format!(
                "whoami:{}:{}:{}",
                cx.call_id(),
                tenant(&cx),
                locale.as_deref().unwrap_or("-")
            ),
        );
        Ok(tenant(&cx).to_owned().into())
    }
}

/// A step calling both tools, then a final answer.
fn model() -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "save_note", json!({ "note": "hi" })),
            ToolCall::new("c2", "whoami", json!({})),
        ]),
        ModelResponse::text("done"),
    ])
}

fn agent(log: &Log, asks: bool) -> Agent<ScriptedModel, Witness> {
    Agent::builder(model())
        .tool(save_note)
        .tool(WhoAmI {
            log: log.clone(),
            asks,
        })
        .chain(Witness { log: log.clone() })
        .build()
        .unwrap()
}

/// The one interrupt of a paused run, answered with `value`.
#[track_caller]
fn one_answer(output: &RunOutput, value: Value) -> Vec<(hookchain::InterruptId, Value)> {
    assert_eq!(output.end, EndReason::Interrupted, "{output:#?}");
    assert_eq!(output.interrupts().len(), 1);
    vec![(output.interrupts()[0].id.clone(), value)]
}

#[tokio::test]
async fn every_hook_and_tool_reads_the_run_context() {
    let log = new_log();
    let db = Db::default();
    let agent = agent(&log, false);
    let context = RunContext::new().with(Tenant("acme")).with(db.clone());

    let output = agent.with_context(context).run("hi").await.unwrap();

    assert_eq!(output.text().as_deref(), Some("done"));
    assert!(output.tool_failures.is_empty(), "{output:#?}");
    assert_eq!(db.rows(), ["acme:hi"]);
    let events = events(&log);
    for hook in [
        "before_agent",
        "before_model",
        "wrap_model_call",
        "after_model",
        "wrap_tool_call",
        "after_agent",
    ] {
        assert!(
            events.contains(&format!("{hook}:acme")),
            "{hook} did not read the tenant: {events:?}"
        );
    }
    assert!(
        events.contains(&"whoami:c2:acme:-".to_owned()),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|event| event.ends_with(":-") && !event.starts_with("whoami"))
    );
}

#[tokio::test]
async fn a_plain_run_has_an_empty_run_context() {
    let log = new_log();
    let agent = agent(&log, false);

    let output = agent.run("hi").await.unwrap();

    assert_eq!(output.text().as_deref(), Some("done"));
    // The `#[tool]` found no database, and said so to the model.
    assert_eq!(output.tool_failures.len(), 1, "{output:#?}");
    assert_eq!(output.tool_failures[0].tool(), "save_note");
    let events = events(&log);
    assert!(events.contains(&"before_model:-".to_owned()), "{events:?}");
    assert!(events.contains(&"whoami:c2:-:-".to_owned()), "{events:?}");
}

#[tokio::test]
async fn a_run_in_a_thread_reads_the_run_context() {
    let log = new_log();
    let db = Db::default();
    let agent = agent(&log, false);
    let mut thread = agent.thread();
    let context = RunContext::new().with(Tenant("acme")).with(db.clone());

    let with = agent.with_context(context);
    with.run_in(&mut thread, "hi").await.unwrap();

    assert_eq!(db.rows(), ["acme:hi"]);
    assert_eq!(with.run_context().len(), 2);
}

/// A run of the asking agent, paused in `whoami`, with a tenant and a saved locale.
async fn paused(agent: &Agent<ScriptedModel, Witness>) -> RunOutput {
    let context = RunContext::new()
        .with(Tenant("acme"))
        .with(Db::default())
        .with_saved("locale", "de-CH")
        .unwrap();
    let output = agent.with_context(context).run("hi").await.unwrap();
    assert_eq!(output.end, EndReason::Interrupted);
    output
}

#[tokio::test]
async fn a_checkpoint_holds_saved_values_and_no_typed_ones() {
    let log = new_log();
    let agent = agent(&log, true);
    let output = paused(&agent).await;

    let json = output.checkpoint.as_ref().unwrap().to_json().unwrap();

    let value: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["run_context"], json!({ "locale": "de-CH" }));
    assert!(!json.contains("acme"), "a typed value was written: {json}");
    assert!(
        !json.contains("Tenant"),
        "a typed value was written: {json}"
    );
}

#[tokio::test]
async fn a_resume_gets_saved_values_back_and_typed_ones_only_when_given_again() {
    let log = new_log();
    let agent = agent(&log, true);
    let output = paused(&agent).await;
    let answers = one_answer(&output, json!("yes"));
    // Through JSON, as in another process.
    let json = output.checkpoint.unwrap().to_json().unwrap();

    let resumed = agent
        .resume(Checkpoint::from_json(&json).unwrap(), answers.clone())
        .await
        .unwrap();
    assert_eq!(resumed.text().as_deref(), Some("done"));
    assert!(
        events(&log).contains(&"whoami:c2:-:de-CH".to_owned()),
        "{:?}",
        events(&log)
    );

    // Given again: the typed values are there, and a given saved value wins over the
    // checkpoint's. (A fresh agent: the first one's scripted model is spent.)
    let agent = self::agent(&log, true);
    let context = RunContext::new()
        .with(Tenant("globex"))
        .with_saved("locale", "fr-CH")
        .unwrap();
    agent
        .with_context(context)
        .resume(Checkpoint::from_json(&json).unwrap(), answers)
        .await
        .unwrap();
    assert!(
        events(&log).contains(&"whoami:c2:globex:fr-CH".to_owned()),
        "{:?}",
        events(&log)
    );
}

#[tokio::test]
async fn a_checkpoint_written_before_run_context_existed_still_loads() {
    let log = new_log();
    let agent = agent(&log, true);
    let output = paused(&agent).await;
    let answers = one_answer(&output, json!("yes"));
    let mut old: Value = serde_json::to_value(output.checkpoint.unwrap()).unwrap();
    // What a format 2 checkpoint written before the field existed looks like.
    old.as_object_mut().unwrap().remove("run_context").unwrap();

    let checkpoint = Checkpoint::from_json(&old.to_string()).unwrap();
    let resumed = agent.resume(checkpoint, answers).await.unwrap();

    assert_eq!(resumed.text().as_deref(), Some("done"));
    assert!(events(&log).contains(&"whoami:c2:-:-".to_owned()));
}

/// A middleware published by another crate: it reads request metadata that the application's
/// server puts in the run context (as ADR 0032's request metadata), tags every answer of the
/// model with the request's trace id and tells the model whom it answers. The agent's own code
/// never mentions `RequestMetadata`.
mod plugin {
    use std::collections::BTreeMap;

    use hookchain::middleware;
    use hookchain::prelude::*;

    /// The metadata of the request a run serves.
    #[derive(Debug, Clone)]
    pub(crate) struct RequestMetadata {
        /// The tenant the request is for.
        pub(crate) tenant: String,
        /// The request's trace id.
        pub(crate) trace_id: String,
        /// The request's headers.
        pub(crate) headers: BTreeMap<String, String>,
    }

    /// Tags answers with the request's metadata; does nothing for a run without it.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct RequestTagging;

    #[middleware]
    impl RequestTagging {
        #[hook(before_model)]
        fn note(&self, cx: &mut Context, request: &mut ModelRequest) {
            if let Some(metadata) = cx.get::<RequestMetadata>() {
                let locale = metadata.headers.get("accept-language");
                request.system_prompt = Some(format!(
                    "You answer for {} (language: {}).",
                    metadata.tenant,
                    locale.map_or("any", String::as_str)
                ));
            }
        }

        #[hook(after_model)]
        fn tag(&self, cx: &mut Context, response: &mut ModelResponse) {
            if let Some(metadata) = cx.get::<RequestMetadata>() {
                response
                    .message
                    .metadata
                    .insert("trace_id".to_owned(), metadata.trace_id.clone().into());
            }
        }
    }
}

/// The application's agent: a model and the plugin, nothing about requests.
fn application_agent() -> Agent<ScriptedModel, plugin::RequestTagging> {
    Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(plugin::RequestTagging)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_plugin_middleware_reads_request_metadata_the_agent_never_mentions() {
    let agent = application_agent();
    // Only the server code that handles the request knows its metadata.
    let metadata = plugin::RequestMetadata {
        tenant: "acme".to_owned(),
        trace_id: "trace-42".to_owned(),
        headers: BTreeMap::from([("accept-language".to_owned(), "de-CH".to_owned())]),
    };

    let output = agent
        .with_context(RunContext::new().with(metadata))
        .run("hi")
        .await
        .unwrap();

    let answer = output.final_message().unwrap();
    assert_eq!(answer.metadata.get("trace_id"), Some(&json!("trace-42")));
    let requests = agent.model().requests();
    assert_eq!(
        requests[0].system_prompt.as_deref(),
        Some("You answer for acme (language: de-CH).")
    );
}

#[tokio::test]
async fn without_request_metadata_the_plugin_does_nothing() {
    let agent = application_agent();

    let output = agent.run("hi").await.unwrap();

    assert!(output.final_message().unwrap().metadata.is_empty());
    assert_eq!(agent.model().requests()[0].system_prompt, None);
}

#[test]
fn a_run_context_holds_one_value_per_type_and_lists_them() {
    let mut context = RunContext::new().with(Tenant("acme"));
    assert!(context.contains::<Tenant>());
    assert!(!context.contains::<Db>());

    let replaced = context.insert(Tenant("globex"));
    assert_eq!(replaced.map(|tenant| tenant.0), Some("acme"));
    assert_eq!(
        context.get::<Tenant>().map(|tenant| tenant.0),
        Some("globex")
    );
    assert_eq!(context.len(), 1);

    let clone = context.clone().with_saved("n", 3).unwrap();
    // A clone written to does not change the original.
    assert_eq!(context.len(), 1);
    assert_eq!(clone.len(), 2);
    assert_eq!(clone.saved::<u32>("n").unwrap().unwrap(), 3);
    assert!(clone.saved::<String>("n").unwrap().is_err());
    assert!(clone.saved::<u32>("m").is_none());

    let debug = format!("{clone:?}");
    assert!(debug.contains("Tenant"), "{debug}");
    assert!(debug.contains("\"n\""), "{debug}");
    assert!(RunContext::new().is_empty());
}

#[test]
fn a_value_that_cannot_be_json_is_refused_with_its_key() {
    // A map with non-string keys cannot be a JSON object.
    let map = BTreeMap::from([((1, 2), "x")]);

    let error = RunContext::new().with_saved("pairs", map).unwrap_err();

    assert_eq!(error.key(), "pairs");
    assert!(std::error::Error::source(&error).is_some());
}
