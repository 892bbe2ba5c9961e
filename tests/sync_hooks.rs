//! Plain-`fn` `before_model` / `after_model` hooks run through their synchronous form
//! (`Middleware::SYNC_HOOKS`): no future is created or awaited for them. These tests pin that the
//! synchronous path is taken where it should be, and that it keeps every rule of the awaited
//! path: order, replacement of the response, jumps, errors, interrupts and resume, in flat,
//! nested and mixed chains.

mod support;

use hookchain::middleware::{False, HookSet, phase};
use hookchain::prelude::*;
use hookchain::{EndReason, InterruptId, chain, hook, middleware};
use serde_json::{Value, json};

use support::{Log, middleware_error, push, take_events as take};

/// Logs its hooks; `before_model` and `after_model` are plain `fn`s (synchronous form).
#[derive(Clone)]
struct Plain(&'static str, Log);

#[middleware]
impl Plain {
    #[hook(before_model)]
    fn before(&self) {
        push(&self.1, format!("{}:before", self.0));
    }

    #[hook(after_model)]
    fn after(&self, response: &mut ModelResponse) {
        push(&self.1, format!("{}:after", self.0));
        response.message.content.push_text(self.0);
    }
}

/// The same hooks as `async fn`s (awaited).
#[derive(Clone)]
struct Awaited(&'static str, Log);

#[middleware]
impl Awaited {
    #[hook(before_model)]
    async fn before(&self) {
        push(&self.1, format!("{}:before", self.0));
    }

    #[hook(after_model)]
    async fn after(&self, response: &mut ModelResponse) {
        push(&self.1, format!("{}:after", self.0));
        response.message.content.push_text(self.0);
    }
}

/// A chain of `Plain` members `"0"` to `"12"` made by `$p`, then `$tail`: more than 12
/// members, so nested.
macro_rules! thirteen_plain_then {
    ($p:expr; $($tail:expr),+ $(,)?) => {
        chain![
            $p("0"), $p("1"), $p("2"), $p("3"), $p("4"), $p("5"), $p("6"), $p("7"), $p("8"),
            $p("9"), $p("10"), $p("11"), $p("12"), $($tail),+
        ]
    };
}

/// `C::SYNC_HOOKS` of a chain whose type is not written out.
fn sync_hooks<C: Middleware>(_: &C) -> HookSet {
    C::SYNC_HOOKS
}

fn agent<C: Middleware>(chain: C) -> Agent<ScriptedModel, C> {
    Agent::builder(ScriptedModel::new([ModelResponse::text(">")]))
        .chain(chain)
        .build()
        .unwrap()
}

#[test]
fn plain_fn_hooks_are_listed_as_synchronous_and_async_ones_are_not() {
    let sync = HookSet::of(Hook::BeforeModel).with(Hook::AfterModel);
    assert_eq!(<Plain as Middleware>::SYNC_HOOKS, sync);
    assert_eq!(<Awaited as Middleware>::SYNC_HOOKS, HookSet::NONE);
    // A chain is synchronous for a hook when every member that has it is.
    assert_eq!(<(Plain, Plain) as Middleware>::SYNC_HOOKS, sync);
    assert_eq!(<(Plain, Awaited) as Middleware>::SYNC_HOOKS, HookSet::NONE);
    assert_eq!(<Option<Plain> as Middleware>::SYNC_HOOKS, sync);
    // A member without the hook does not stop the chain from running it synchronously.
    #[hook(before_agent)]
    fn greet() {}
    assert_eq!(<(Plain, greet) as Middleware>::SYNC_HOOKS, sync);
    let mixed = chain![Plain("a", Log::default()), Awaited("b", Log::default())];
    assert_eq!(sync_hooks(&mixed), HookSet::NONE);
}

#[tokio::test]
async fn synchronous_and_awaited_members_keep_the_order_in_flat_nested_and_mixed_chains() {
    let log: Log = Log::default();
    let (p, a) = (|n| Plain(n, log.clone()), |n| Awaited(n, log.clone()));

    // Flat, all synchronous: the agent calls the chain's synchronous form.
    let output = agent(chain![p("a"), p("b"), p("c")])
        .run("hi")
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some(">cba"));
    assert_eq!(
        take(&log),
        [
            "a:before", "b:before", "c:before", "c:after", "b:after", "a:after"
        ]
    );

    // Mixed: each member through its own form, inside the chain's future.
    let output = agent(chain![p("a"), a("b"), p("c")])
        .run("hi")
        .await
        .unwrap();
    assert_eq!(output.text().as_deref(), Some(">cba"));
    assert_eq!(
        take(&log),
        [
            "a:before", "b:before", "c:before", "c:after", "b:after", "a:after"
        ]
    );

    // Nested (more than 12 members), synchronous and mixed.
    let names = [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13",
    ];
    let before: Vec<String> = names.iter().map(|n| format!("{n}:before")).collect();
    let after: Vec<String> = names.iter().rev().map(|n| format!("{n}:after")).collect();
    let expected: Vec<String> = before.iter().chain(&after).cloned().collect();
    let text = format!(">{}", names.iter().rev().copied().collect::<String>());

    let all_sync = thirteen_plain_then!(p; p("13"));
    assert_eq!(
        sync_hooks(&all_sync),
        HookSet::of(Hook::BeforeModel).with(Hook::AfterModel)
    );
    let output = agent(all_sync).run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some(text.as_str()));
    assert_eq!(take(&log), expected);

    let mixed = thirteen_plain_then!(p; a("13"));
    assert_eq!(sync_hooks(&mixed), HookSet::NONE);
    let output = agent(mixed).run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some(text.as_str()));
    assert_eq!(take(&log), expected);
}

#[tokio::test]
async fn a_plain_fn_hook_called_through_its_future_runs_when_polled() {
    let log: Log = Log::default();
    let plain = Plain("a", log.clone());
    let mut cx = Context::new(Vec::new());
    let mut request = ModelRequest::default();
    let mut state = ();
    let mut thread = ();

    let future = plain.before_model(&mut cx, &mut state, &mut thread, &mut request);
    assert!(
        take(&log).is_empty(),
        "the hook ran before its future was polled"
    );
    assert_eq!(future.await.unwrap(), Flow::Continue);
    assert_eq!(take(&log), ["a:before"]);

    assert_eq!(
        plain
            .before_model_sync(
                &mut cx,
                &mut state,
                &mut (),
                &mut request,
                hookchain::__private::Internal::new(),
            )
            .unwrap(),
        Flow::Continue
    );
    assert_eq!(take(&log), ["a:before"]);
}

/// Replaces the response in `after_model` (a plain `fn`).
#[hook(after_model)]
fn replace() -> Flow {
    Flow::respond(ModelResponse::text("replaced"))
}

/// Ends the run from `before_model` (a plain `fn`).
#[hook(before_model, jumps = [end])]
fn stop() -> Flow {
    Flow::end()
}

/// Fails in `before_model` (a plain `fn`).
#[hook(before_model)]
fn refuse() -> Result<(), std::io::Error> {
    Err(std::io::Error::other("refused"))
}

#[tokio::test]
async fn a_replaced_response_goes_on_through_the_remaining_synchronous_hooks() {
    let log: Log = Log::default();
    let chain = chain![Plain("a", log.clone()), replace, Plain("c", log.clone())];
    let output = agent(chain).run("hi").await.unwrap();
    // `c` runs first and sees the model's response; `replace` replaces it; `a` sees the
    // replacement.
    assert_eq!(output.text().as_deref(), Some("replaceda"));
    assert_eq!(take(&log), ["a:before", "c:before", "c:after", "a:after"]);
}

#[tokio::test]
async fn jumps_and_errors_leave_the_synchronous_path_as_they_leave_the_awaited_one() {
    let log: Log = Log::default();
    let output = agent(chain![
        Plain("a", log.clone()),
        stop,
        Plain("c", log.clone())
    ])
    .run("hi")
    .await
    .unwrap();
    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(take(&log), ["a:before"], "hooks after the jump do not run");

    let error = middleware_error(
        agent(chain![
            Plain("a", log.clone()),
            refuse,
            Plain("c", log.clone())
        ])
        .run("hi")
        .await,
    );
    assert_eq!(error.middleware(), Some("refuse"));
    assert_eq!(error.hook(), Some(Hook::BeforeModel));
    assert_eq!(take(&log), ["a:before"]);
}

/// Pauses in `before_model` (a plain `fn`) until answered; counts its runs.
#[hook(before_model, state = u32)]
fn ask(runs: &mut u32, cx: &mut Context, request: &mut ModelRequest) -> Flow {
    *runs += 1;
    match cx.resume_value() {
        None => Flow::interrupt(json!("may I?")),
        Some(answer) => {
            request.system_prompt = Some(answer.to_string());
            Flow::Continue
        }
    }
}

#[tokio::test]
async fn an_interrupt_deep_in_a_nested_synchronous_chain_resumes_at_its_member() {
    let log: Log = Log::default();
    let p = |n| Plain(n, log.clone());
    // `ask` is member 13 of 15: in the nested tuple of the chain.
    let agent = agent(thirteen_plain_then!(p; ask, p("14")));
    let output = agent.run("hi").await.unwrap();
    assert_eq!(output.end, EndReason::Interrupted);
    let before: Vec<String> = (0..13).map(|n| format!("{n}:before")).collect();
    assert_eq!(take(&log), before);

    let checkpoint = output.checkpoint.clone().unwrap();
    let answers: Vec<(InterruptId, Value)> =
        vec![(output.interrupts()[0].id.clone(), json!("yes"))];
    let output = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(output.end, EndReason::Finished);
    // Members before `ask` do not run again; `ask` runs once more, then the rest.
    let events = take(&log);
    assert_eq!(events[0], "14:before");
    assert_eq!(events.len(), 1 + 14);
}

/// A hand-written middleware that claims a synchronous form it does not have.
struct Liar;

impl Middleware for Liar {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Liar";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);
    const SYNC_HOOKS: HookSet = HookSet::of(Hook::BeforeModel);
}

#[tokio::test]
async fn a_claimed_synchronous_form_that_is_missing_is_an_error_not_a_panic() {
    let error = middleware_error(agent(Liar).run("hi").await);
    assert_eq!(error.middleware(), Some("Liar"));
    assert_eq!(error.hook(), Some(Hook::BeforeModel));
    let report = hookchain::error::Report(&error).to_string();
    assert!(report.contains("synchronous form"), "{report}");
}

#[tokio::test]
async fn a_disabled_option_passes_through_the_synchronous_path() {
    let log: Log = Log::default();
    let off: Option<Plain> = None;
    let chain = chain![Plain("a", log.clone()), off, Plain("c", log.clone())];
    let output = agent(chain).run("hi").await.unwrap();
    assert_eq!(output.text().as_deref(), Some(">ca"));
    assert_eq!(take(&log), ["a:before", "c:before", "c:after", "a:after"]);
}
