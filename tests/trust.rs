//! What a run reports and what it reveals: the model reads no internal error text, errors print
//! each cause once, usage counts the model calls that happened, and a panic in any hook has a
//! documented outcome. Each test is named after its rule.

mod support;

use std::io;

use hookchain::error::Report;
use hookchain::prelude::*;
use hookchain::tool::{ToolError, ToolFailureKind};
use hookchain::{FnTool, Usage, chain, hook, middleware};
use serde_json::json;

use support::{TextArgs, assert_no_dangling, echo_call, new_log, push, take_events};

const SECRET: &str = "postgres://admin:hunter2@db.internal:5432/billing";

/// A `billing` tool that fails with an error holding a connection string.
fn leaky_tool() -> impl hookchain::Tool {
    FnTool::new("billing", "Looks up an invoice.", |_: TextArgs| async {
        Err::<String, _>(io::Error::other(format!("connect to {SECRET} refused")))
    })
}

/// Everything the runtime logs on this thread while `f` runs, as text.
///
/// One global subscriber for the whole test binary, writing each thread's events to that
/// thread's buffer: scoped (thread-local) subscribers race with the callsite cache when tests
/// run in parallel.
fn logged<T>(f: impl FnOnce() -> T) -> (T, String) {
    thread_local! {
        static CAPTURED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    struct ThreadBuffer;
    impl io::Write for ThreadBuffer {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            CAPTURED.with(|captured| captured.borrow_mut().extend_from_slice(bytes));
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(|| ThreadBuffer)
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
    });
    CAPTURED.with(|captured| captured.borrow_mut().clear());
    let value = f();
    let text = CAPTURED.with(|captured| String::from_utf8_lossy(&captured.borrow()).into_owned());
    (value, text)
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    futures::executor::block_on(future)
}

/// "Nothing internal reaches the model": a secret in a tool's error never appears in a request
/// the model receives; the model reads which tool failed; the full error reaches `tracing` and
/// the run's output.
#[test]
fn a_secret_in_a_tool_error_reaches_tracing_and_the_output_but_never_the_model() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "billing", json!({ "text": "42" }))]),
        ModelResponse::text("sorry"),
    ]);
    let agent = Agent::builder(model).tool(leaky_tool()).build().unwrap();
    let (output, logs) = logged(|| block_on(agent.run("invoice 42?")).unwrap());

    for request in agent.model().requests() {
        let text = serde_json::to_string(&request.messages).unwrap();
        assert!(
            !text.contains("hunter2"),
            "the model read the secret: {text}"
        );
    }
    let read = &agent.model().requests()[1].messages[2];
    assert!(read.is_error);
    assert_eq!(read.content, "tool `billing` failed");

    assert!(
        logs.contains("hunter2"),
        "the operator sees the full error: {logs}"
    );
    assert!(logs.contains("tool call failed"), "{logs}");
    let failure = &output.tool_failures[0];
    assert_eq!(failure.tool(), "billing");
    assert_eq!(failure.kind(), ToolFailureKind::Failed);
    assert!(Report(failure.error()).to_string().contains("hunter2"));
}

/// A hook's error on the tool path is no more visible to the model than a tool's.
#[hook(wrap_tool_call)]
async fn leaky_audit(call: ToolCall) -> Result<ToolResult, Error> {
    let _ = call;
    Err(Error::hook(io::Error::other(format!(
        "audit log {SECRET} is full"
    ))))
}

#[test]
fn a_secret_in_a_wrap_tool_call_error_never_reaches_the_model() {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("ok"),
    ]);
    let agent = Agent::builder(model)
        .tool(support::echo_tool(&new_log()))
        .chain(chain![leaky_audit])
        .build()
        .unwrap();
    let (output, logs) = logged(|| block_on(agent.run("go")).unwrap());
    let read = &agent.model().requests()[1].messages[2];
    assert_eq!(read.content, "tool call `echo` failed");
    assert!(!read.text().contains("hunter2"));
    assert!(
        logs.contains("hunter2") && logs.contains("leaky_audit"),
        "{logs}"
    );
    assert_eq!(output.tool_failures[0].kind(), ToolFailureKind::Middleware);
}

/// "Tools mark errors meant for the model, and the agent's policy decides what the model reads":
/// a `ToolError::for_model` message reaches the model as written; a policy rewrites the rest.
#[test]
fn errors_meant_for_the_model_and_the_agents_policy() {
    let strict = FnTool::new("book", "Books a room.", |args: TextArgs| async move {
        if args.text.is_empty() {
            return Err::<String, _>(ToolError::for_model(
                "book",
                "give a room number, e.g. \"12\"",
            ));
        }
        Err(ToolError::failed("book", io::Error::other(SECRET)))
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([
            ToolCall::new("c1", "book", json!({ "text": "" })),
            ToolCall::new("c2", "book", json!({ "text": "7" })),
            ToolCall::new("c3", "book", json!({ "wrong": 1 })),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(strict)
        .tool_error_message(|failure| match failure.kind() {
            ToolFailureKind::ForModel | ToolFailureKind::InvalidArguments => {
                failure.message().to_owned()
            }
            _ => format!("`{}` is down; tell the user", failure.tool()),
        })
        .build()
        .unwrap();
    let output = block_on(agent.run("book")).unwrap();
    let read: Vec<String> = agent.model().requests()[1].messages[2..5]
        .iter()
        .map(|m| m.text().into_owned())
        .collect();
    assert_eq!(read[0], "give a room number, e.g. \"12\"");
    assert_eq!(read[1], "`book` is down; tell the user");
    assert!(
        read[2].starts_with("invalid arguments for tool `book`: missing field `text`"),
        "{}",
        read[2]
    );
    assert_eq!(output.tool_failures.len(), 3);
}

/// "Errors print each cause once": Display says what failed, `source()` says why, so a report
/// of a nested error names each cause once.
#[test]
fn a_nested_error_prints_each_cause_once() {
    let error = Error::middleware(
        "Audit",
        Hook::AfterAgent,
        Wrapped(io::Error::other("disk full")),
    );
    let report = Report(&error).to_string();
    assert_eq!(
        report,
        "middleware `Audit` failed in `after_agent`: could not write the audit log: disk full"
    );
    assert_eq!(report.matches("disk full").count(), 1);
    assert_eq!(
        error.to_string(),
        "middleware `Audit` failed in `after_agent`"
    );
}

/// An error with a cause, written the conventional way.
#[derive(Debug)]
struct Wrapped(io::Error);

impl std::fmt::Display for Wrapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("could not write the audit log")
    }
}

impl std::error::Error for Wrapped {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Stops the run with the application's error (which has a cause of its own).
#[hook(before_model)]
fn refuse() -> Result<Flow, Error> {
    Err(Error::application(Wrapped(io::Error::other("disk full"))))
}

/// Wraps the model call and stops it with the application's error.
#[hook(wrap_model_call)]
async fn refuse_call(_request: ModelRequest) -> Result<ModelResponse, Error> {
    Err(Error::application(Wrapped(io::Error::other("disk full"))))
}

/// "A hook ends the run with the application's error": the run's error is
/// `Error::Application`, named after the member that raised it (in a nested chain too) and
/// its hook; the report prints where, then the error and its causes, each once; and
/// `downcast_ref` finds the error, and its cause, by type.
#[tokio::test]
async fn an_application_error_ends_the_run_with_its_causes_and_is_found_by_type() {
    let log = new_log();
    let sequential = Agent::builder(ScriptedModel::new([ModelResponse::text("never")]))
        .chain(chain![support::Recorder::new("a", &log), chain![refuse]])
        .build()
        .unwrap();
    let wrapping = Agent::builder(ScriptedModel::new([ModelResponse::text("never")]))
        .chain(chain![refuse_call])
        .build()
        .unwrap();
    for (middleware, hook, error) in [
        (
            "refuse",
            Hook::BeforeModel,
            sequential.run("hi").await.unwrap_err(),
        ),
        (
            "refuse_call",
            Hook::WrapModelCall,
            wrapping.run("hi").await.unwrap_err(),
        ),
    ] {
        let Error::Application(application) = &error else {
            panic!("not the application's error: {error:?}");
        };
        assert_eq!(application.middleware(), Some(middleware));
        assert_eq!(application.hook(), Some(hook));
        let report = Report(&error).to_string();
        assert_eq!(
            report,
            format!(
                "middleware `{middleware}` failed in `{hook}`: could not write the audit log: \
                 disk full"
            )
        );
        assert_eq!(report.matches("disk full").count(), 1);
        assert!(error.downcast_ref::<Wrapped>().is_some());
        let cause = error.downcast_ref::<io::Error>().map(ToString::to_string);
        assert_eq!(cause.as_deref(), Some("disk full"));
        assert!(error.downcast_ref::<std::fmt::Error>().is_none());
    }
    assert_eq!(sequential.model().calls(), 0);
}

/// The application's error raised outside a chain names no middleware; wrapping it again as
/// a hook's error keeps it as it is; and a hook's own error is found by type as well.
#[test]
fn an_application_error_outside_a_chain_and_a_hooks_error_are_found_by_type() {
    let error = Error::application(Wrapped(io::Error::other("disk full")));
    assert_eq!(
        Report(&error).to_string(),
        "the application failed: could not write the audit log: disk full"
    );
    let again = Error::hook(error);
    assert!(matches!(again, Error::Application(_)), "{again:?}");
    let Error::Application(application) = again else {
        unreachable!()
    };
    let inner = application.into_inner().downcast::<Wrapped>().unwrap();
    assert_eq!(inner.0.to_string(), "disk full");

    let hooks = Error::middleware("Audit", Hook::AfterAgent, Wrapped(io::Error::other("x")));
    assert!(hooks.downcast_ref::<Wrapped>().is_some());
    assert!(hooks.downcast_ref::<io::Error>().is_some());
}

/// Calls the model twice (a retry that discards the first answer).
#[hook(wrap_model_call)]
async fn retry_always(
    cx: &mut Context,
    request: ModelRequest,
    mut next: impl ModelNext,
) -> Result<ModelResponse, Error> {
    let _discarded = next.call(cx, request.clone()).await?;
    next.call(cx, request).await
}

/// "Usage counts every model call that happened": a retried call's discarded answer counts.
#[tokio::test]
async fn a_retried_model_calls_usage_is_counted() {
    let model = ScriptedModel::new([
        ModelResponse::text("first").with_usage(Usage::new(10, 1)),
        ModelResponse::text("second").with_usage(Usage::new(20, 2)),
    ]);
    let agent = Agent::builder(model)
        .chain(chain![retry_always])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("second"));
    assert_eq!(output.model_calls, 2);
    assert_eq!(output.usage, Usage::new(30, 3));
}

/// Answers without the model, claiming a usage that never happened.
#[hook(before_model)]
fn cached() -> Flow {
    Flow::respond(ModelResponse::text("cached").with_usage(Usage::new(500, 50)))
}

/// "…and nothing that did not happen": a response standing in for the model counts no usage.
#[tokio::test]
async fn a_short_circuits_invented_usage_is_not_counted() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(chain![cached])
        .build()
        .unwrap();
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("cached"));
    assert_eq!((output.model_calls, output.usage), (0, Usage::default()));
}

/// Panics in the hook it is told to, and logs its `after_agent`.
#[derive(Clone)]
struct Panics {
    hook: Hook,
    log: support::Log,
}

#[middleware]
impl Panics {
    #[hook(before_agent)]
    fn start(&self) {
        self.maybe(Hook::BeforeAgent);
    }

    #[hook(before_model)]
    async fn before(&self) {
        self.maybe(Hook::BeforeModel);
    }

    #[hook(wrap_model_call)]
    async fn around(
        &self,
        cx: &mut Context,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        self.maybe(Hook::WrapModelCall);
        next.call(cx, request).await
    }

    #[hook(after_model)]
    fn after(&self) {
        self.maybe(Hook::AfterModel);
    }

    #[hook(wrap_tool_call)]
    async fn around_tool(
        &self,
        cx: ToolContext<'_>,
        call: ToolCall,
        mut next: impl ToolNext,
    ) -> Result<ToolResult, Error> {
        self.maybe(Hook::WrapToolCall);
        Ok(next.call(cx, call).await)
    }

    #[hook(after_agent)]
    fn end(&self) {
        push(&self.log, "after_agent");
        self.maybe(Hook::AfterAgent);
    }
}

impl Panics {
    fn maybe(&self, hook: Hook) {
        if hook == self.hook {
            panic!("boom in {hook}");
        }
    }
}

/// A run of a chain that panics in `hook`, with one tool call.
async fn run_panicking_in(hook: Hook, log: &support::Log) -> Result<hookchain::RunOutput, Error> {
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([echo_call("c1", "x")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(support::echo_tool(log))
        .chain(chain![
            support::Recorder::new("r", log),
            Panics {
                hook,
                log: log.clone()
            }
        ])
        .build()
        .unwrap();
    agent.run("go").await
}

/// "One panic policy": a panic in a model-path hook ends the run with an error naming the hook
/// (and the middleware, for the sequential hooks); every `after_agent` still runs. A panic in a
/// `wrap_tool_call` hook is an error result the model reads, and the run goes on.
#[tokio::test]
async fn a_panicking_hook_is_an_error_naming_it_and_after_agent_still_runs() {
    for hook in [
        Hook::BeforeAgent,
        Hook::BeforeModel,
        Hook::WrapModelCall,
        Hook::AfterModel,
        Hook::AfterAgent,
    ] {
        let log = new_log();
        let error = match run_panicking_in(hook, &log).await {
            Err(Error::Middleware(error)) => error,
            other => panic!("{hook}: expected a middleware error, got {other:?}"),
        };
        assert_eq!(error.hook(), Some(hook), "{hook}");
        if hook != Hook::WrapModelCall {
            assert_eq!(error.middleware(), Some("Panics"), "{hook}");
        }
        assert!(
            Report(&*error)
                .to_string()
                .contains(&format!("boom in {hook}")),
            "{hook}: {}",
            Report(&*error)
        );
        let events = take_events(&log);
        assert!(
            events.contains(&"after_agent".to_owned()),
            "{hook}: {events:?}"
        );
        assert!(
            events.contains(&"r:after_agent".to_owned()),
            "{hook}: {events:?}"
        );
    }

    let log = new_log();
    let output = run_panicking_in(Hook::WrapToolCall, &log).await.unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(output.tool_failures[0].kind(), ToolFailureKind::Middleware);
    assert!(
        Report(output.tool_failures[0].error())
            .to_string()
            .contains("boom")
    );
    assert_no_dangling(&output.messages);
}

/// A tool that panics is an error result (the run goes on); a model that panics fails the
/// call with a model error (and `after_agent` runs).
#[tokio::test]
async fn a_panicking_tool_or_model_has_its_outcome() {
    let tool = FnTool::new("explode", "Panics.", |_: TextArgs| async {
        panic!("tool boom");
        #[allow(unreachable_code)]
        Ok::<String, std::convert::Infallible>(String::new())
    });
    let model = ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "explode", json!({ "text": "" }))]),
        ModelResponse::text("survived"),
    ]);
    let agent = Agent::builder(model).tool(tool).build().unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("survived"));
    assert_eq!(output.tool_failures[0].kind(), ToolFailureKind::Panicked);

    let log = new_log();
    let model = ScriptedModel::from_rule(|_| panic!("model boom"));
    let agent = Agent::builder(model)
        .chain(chain![support::Recorder::new("r", &log)])
        .build()
        .unwrap();
    let error = agent.run("go").await.unwrap_err();
    assert!(matches!(error, Error::Model(_)), "{error:?}");
    assert!(
        Report(&error).to_string().contains("model boom"),
        "{}",
        Report(&error)
    );
    assert!(take_events(&log).contains(&"r:after_agent".to_owned()));
}
