//! The checkpoint format: written compactly, read back exactly (in JSON and in CBOR), older
//! formats migrated, newer ones refused, checkpoints carried over to a chain that changed
//! since (members matched by name), and signed checkpoints: read back only unchanged and with
//! a key of their id, else refused before anything runs.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::builtin::ToolCallLimit;
use hookchain::builtin::tool_call_limit::ThreadToolCalls;
use hookchain::interrupt::{CheckpointError, Position, ResumeError};
use hookchain::prelude::*;
use hookchain::tool::AskUser;
use hookchain::{Checkpoint, EndReason, Role, Thread, chain, hook, middleware};
use proptest::prelude::*;
use serde_json::{Value, json};
use support::{counting_tool, system_prompts};

/// Counts the model calls of a run (run-scoped state) and says so on the system prompt, so
/// the model's requests show the state.
#[hook(before_model, state = u32)]
fn count_calls(calls: &mut u32, request: &mut ModelRequest) {
    *calls += 1;
    request.system_prompt = Some(format!("call {calls}"));
}

/// Counts the runs of a thread (thread-scoped state).
#[hook(before_agent, thread_state = u32)]
fn count_runs(runs: &mut u32) {
    *runs += 1;
}

/// Asks before the second model call of a run.
#[hook(before_model)]
fn ask_second(cx: &mut Context) -> Flow {
    if cx.step() == 2 && cx.resume_value().is_none() {
        Flow::interrupt(json!("second call?"))
    } else {
        Flow::Continue
    }
}

/// A middleware added later, with a state of its own.
#[hook(before_model, state = Vec<String>)]
fn newcomer(seen: &mut Vec<String>) {
    seen.push("seen".to_owned());
}

/// Asks before every tool call (a wrap: its interrupts are on the tool path).
#[hook(wrap_tool_call)]
async fn confirm_tools(
    cx: ToolContext<'_>,
    call: ToolCall,
    mut next: impl ToolNext,
) -> Result<ToolResult, Error> {
    match cx.resume_value() {
        None => Err(Error::interrupt(json!({ "confirm": call.name }))),
        Some(_) => Ok(next.call(cx, call).await),
    }
}

/// The model: looks something up and asks the user, then answers.
fn model() -> ScriptedModel {
    ScriptedModel::from_rule(|request| {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        Ok(if answered {
            ModelResponse::text("done")
        } else {
            ModelResponse::tool_calls([
                ToolCall::new("call_1", "lookup", json!({ "text": "x" })),
                ToolCall::new("call_2", "ask_user", json!({ "question": "Name?" })),
            ])
        })
    })
}

/// An agent with the model, the tools, and `chain`.
fn agent<C: Middleware>(lookups: &Arc<AtomicUsize>, chain: C) -> Agent<ScriptedModel, C> {
    Agent::builder(model())
        .tool(counting_tool("lookup", lookups))
        .tool(AskUser)
        .chain(chain)
        .build()
        .unwrap()
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// The answers to every pending interrupt of `checkpoint`.
fn answer_all(checkpoint: &Checkpoint, value: Value) -> Vec<(hookchain::InterruptId, Value)> {
    checkpoint
        .pending()
        .map(|id| (id.clone(), value.clone()))
        .collect()
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

// ---------------------------------------------------------------------------------------------
// The format
// ---------------------------------------------------------------------------------------------

/// A checkpoint written by the version that wrote format 2 (a thread's run paused in
/// `before_model`, tool schemas and the history twice in it) is read, migrated, and resumed on
/// its thread by this version: the completed call does not run again, the state goes on.
#[tokio::test]
async fn a_format_2_checkpoint_is_migrated_and_resumes() {
    let checkpoint = Checkpoint::from_json(&fixture("checkpoint-v2-before-model.json")).unwrap();
    assert!(matches!(
        checkpoint.position(),
        Position::BeforeModel { .. }
    ));
    assert_eq!(
        checkpoint.chain(),
        ["count_calls", "count_runs", "ask_second"]
    );
    let mut thread: Thread<((), (u32, ()))> =
        serde_json::from_str(&fixture("thread-v2.json")).unwrap();

    let lookups = counter();
    let agent = agent(
        &lookups,
        chain![count_calls, chain![count_runs, ask_second]],
    );
    let answers = answer_all(&checkpoint, json!("go"));
    let done = agent
        .resume_in(&mut thread, checkpoint, answers)
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(done.text().as_deref(), Some("done"));
    assert_eq!(
        lookups.load(Ordering::SeqCst),
        0,
        "the completed call ran again"
    );
    // The request was prepared before the pause (`call 2`), and the tools are this agent's.
    let requests = agent.model().requests();
    assert_eq!(requests[0].system_prompt.as_deref(), Some("call 2"));
    let tools: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["lookup", "ask_user"]);
    assert_ne!(requests[0].tools[0].parameters, Value::Null);
    assert_eq!(thread.state(), &((), (1, ())));
}

/// A format-2 checkpoint paused on the tool path reads as it was written: the same position,
/// results, interrupts and counters; written again, it is format 3.
#[test]
fn a_format_2_checkpoint_reads_as_written() {
    let v2: Value = serde_json::from_str(&fixture("checkpoint-v2-tools.json")).unwrap();
    let checkpoint = Checkpoint::from_json(&v2.to_string()).unwrap();
    assert_eq!(checkpoint.step(), 1);
    assert_eq!(checkpoint.interrupts().len(), 1);
    let Position::Tools { calls, results, .. } = checkpoint.position() else {
        panic!("{:?}", checkpoint.position());
    };
    assert_eq!(calls.len(), 2);
    assert_eq!(results[0].as_ref().unwrap().content, "ran");
    assert!(results[1].is_none());
    assert_eq!(checkpoint.messages().len(), 2);

    let v3: Value = serde_json::from_str(&checkpoint.to_json().unwrap()).unwrap();
    assert_eq!(v3["format"], 3);
    assert_eq!(v3["counters"]["pauses"], v2["pauses"]);
    assert_eq!(v3["position"]["tools"]["calls"], v2["position"]["calls"]);
    assert_eq!(Checkpoint::from_json(&v3.to_string()).unwrap(), checkpoint);
}

/// What `to_json` writes `from_json` reads back equal, and so does another self-describing
/// serde format (CBOR): nothing in the format is JSON's alone.
#[tokio::test]
async fn checkpoints_round_trip_in_json_and_in_cbor() {
    let lookups = counter();
    let agent = agent(
        &lookups,
        chain![count_calls, chain![count_runs, ask_second]],
    );
    let tools = agent.run("hi").await.unwrap().checkpoint.unwrap();
    let answers = answer_all(&tools, json!("Ada"));
    let before_model = agent.resume(tools.clone(), answers).await.unwrap();
    let before_model = before_model.checkpoint.unwrap();
    assert!(matches!(
        before_model.position(),
        Position::BeforeModel { .. }
    ));
    for checkpoint in [tools, before_model] {
        let json = checkpoint.to_json().unwrap();
        assert_eq!(Checkpoint::from_json(&json).unwrap(), *checkpoint);
        let mut cbor = Vec::new();
        ciborium::into_writer(&checkpoint, &mut cbor).unwrap();
        let back: Checkpoint = ciborium::from_reader(cbor.as_slice()).unwrap();
        assert_eq!(back, *checkpoint);
    }
}

/// A format this version does not read is refused on every way in: `from_json` says which
/// formats it reads, serde (here from a JSON value) refuses it too.
#[tokio::test]
async fn a_format_this_version_does_not_read_is_refused() {
    let lookups = counter();
    let agent = agent(&lookups, chain![count_calls]);
    let checkpoint = agent.run("hi").await.unwrap().checkpoint.unwrap();
    let mut json: Value = serde_json::from_str(&checkpoint.to_json().unwrap()).unwrap();
    for format in [4, 999, 1, 0] {
        json["format"] = json!(format);
        let error = Checkpoint::from_json(&json.to_string()).unwrap_err();
        assert!(
            matches!(error, CheckpointError::Format { found, supported: 3 } if found == format),
            "{error:?}"
        );
        assert!(error.to_string().contains("formats 2 to 3"), "{error}");
        let refused = serde_json::from_value::<Checkpoint>(json.clone()).unwrap_err();
        assert!(refused.to_string().contains("not supported"), "{refused}");
    }
}

/// "The history not stored twice, tool schemas not at all": a run with 50 messages of history
/// paused in `before_model` with a large tool schema writes a checkpoint at most 1.2 times the
/// history's JSON, with each message once and no schema; it resumes with the agent's specs.
#[tokio::test]
async fn a_checkpoint_holds_the_history_once_and_no_schema() {
    let mut history = Vec::new();
    for i in 0..25 {
        history.push(Message::user(format!(
            "question {i}: {}",
            "lorem ipsum ".repeat(80)
        )));
        history.push(Message::assistant(format!(
            "answer {i}: {}",
            "dolor sit ".repeat(80)
        )));
    }
    let history_json = serde_json::to_string(&history).unwrap();
    #[hook(before_model)]
    fn ask(cx: &mut Context) -> Flow {
        match cx.resume_value() {
            None => Flow::interrupt(json!("go?")),
            Some(_) => Flow::Continue,
        }
    }
    let lookups = counter();
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("ok")]))
        .tool(counting_tool("lookup", &lookups))
        .tool(AskUser)
        .chain(chain![count_calls, ask])
        .build()
        .unwrap();
    let checkpoint = agent.run(history).await.unwrap().checkpoint.unwrap();
    let json = checkpoint.to_json().unwrap();
    let ratio = json.len() as f64 / history_json.len() as f64;
    assert!(
        ratio <= 1.2,
        "{} bytes for {} ({ratio:.2})",
        json.len(),
        history_json.len()
    );
    assert_eq!(json.matches("question 7:").count(), 1, "the history twice");
    assert!(!json.contains("parameters"), "a tool schema is stored");

    let answers = answer_all(&checkpoint, json!("go"));
    let resumed = Checkpoint::from_json(&json).unwrap();
    let done = agent.resume(resumed, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("ok"));
    let request = &agent.model().requests()[0];
    assert_eq!(request.messages.len(), 50);
    assert_eq!(request.tools.len(), 2);
    assert_ne!(request.tools[1].parameters, Value::Null);
}

// ---------------------------------------------------------------------------------------------
// Chain evolution
// ---------------------------------------------------------------------------------------------

/// Pauses a run of `chain![count_calls, ask_second]` in `before_model` of its second step.
async fn paused_in_step_2() -> Checkpoint {
    let lookups = counter();
    let agent = agent(&lookups, chain![count_calls, ask_second]);
    let tools = agent.run("hi").await.unwrap().checkpoint.unwrap();
    let answers = answer_all(&tools, json!("Ada"));
    let paused = agent.resume(tools, answers).await.unwrap();
    *paused.checkpoint.unwrap()
}

/// A member added since starts from `Default`; the members matched by name keep their state
/// wherever they now are in the chain.
#[tokio::test]
async fn a_new_member_starts_from_default_and_the_others_keep_their_state() {
    let checkpoint = paused_in_step_2().await;
    let lookups = counter();
    let agent = agent(&lookups, chain![newcomer, ask_second, count_calls]);
    let answers = answer_all(&checkpoint, json!("go"));
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.end, EndReason::Finished);
    // `count_calls` kept its count (2), and, moved after the hook that paused, it runs when the
    // step goes on from there: `call 3`, not `call 1`.
    assert_eq!(system_prompts(&agent), [Some("call 3".to_owned())]);
}

/// A member removed since: its state is dropped, the run goes on.
#[tokio::test]
async fn a_removed_members_state_is_dropped() {
    let checkpoint = paused_in_step_2().await;
    let lookups = counter();
    let agent = agent(&lookups, chain![ask_second]);
    let answers = answer_all(&checkpoint, json!("go"));
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
}

/// The member whose hook paused the step is gone: the step goes on with the members after it
/// (nothing reads the answer), and the model is called.
#[tokio::test]
async fn a_sequential_interrupt_whose_member_is_gone_goes_on_without_it() {
    let checkpoint = paused_in_step_2().await;
    let lookups = counter();
    let agent = agent(&lookups, chain![count_calls, newcomer]);
    let answers = answer_all(&checkpoint, json!("go"));
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    // `count_calls` ran before the pause: not again.
    assert_eq!(system_prompts(&agent), [Some("call 2".to_owned())]);
}

/// A tool call paused by a wrap that is gone gets an error result the model reads (the call
/// does not run behind the back of the check that wanted to see it); the others go on.
#[tokio::test]
async fn a_tool_interrupt_whose_member_is_gone_becomes_an_error_result() {
    let lookups = counter();
    let gated = agent(&lookups, chain![count_calls, confirm_tools]);
    let checkpoint = gated.run("hi").await.unwrap().checkpoint.unwrap();
    assert_eq!(checkpoint.interrupts().len(), 2);

    let ungated = agent(&lookups, chain![count_calls]);
    let answers = answer_all(&checkpoint, json!("yes"));
    let done = ungated.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    assert_eq!(lookups.load(Ordering::SeqCst), 0, "a gated call ran");
    let results: Vec<(&str, bool)> = done
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.content.as_text().unwrap(), m.is_error))
        .collect();
    assert_eq!(results.len(), 2);
    for (content, is_error) in results {
        assert!(is_error, "{content}");
        assert!(
            content.contains("`confirm_tools`, which is no longer"),
            "{content}"
        );
    }
    support::assert_no_dangling(&done.messages);
}

mod changed {
    use super::*;

    /// `count_calls` of a later version: its state is text now.
    #[hook(before_model, state = String)]
    pub(super) fn count_calls(calls: &mut String) {
        calls.push('|');
    }
}

/// A member whose state no longer deserializes (its type changed) is the one thing refused,
/// with an error naming it; nothing runs.
#[tokio::test]
async fn a_state_that_no_longer_deserializes_is_refused_naming_its_member() {
    let checkpoint = paused_in_step_2().await;
    let lookups = counter();
    let agent = agent(&lookups, chain![newcomer, changed::count_calls, ask_second]);
    let answers = answer_all(&checkpoint, json!("go"));
    let error = agent.resume(checkpoint, answers).await.unwrap_err();
    let hookchain::Error::Resume(error) = error else {
        panic!("{error:?}");
    };
    assert!(
        matches!(&*error, ResumeError::State { member, .. } if member == "count_calls"),
        "{error:?}"
    );
    assert!(error.to_string().contains("`count_calls`"), "{error}");
    assert!(agent.model().requests().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Instance names: two members of one middleware
// ---------------------------------------------------------------------------------------------

/// Adds `step` to its run-scoped total before every model call, and writes `<label>=<total>`
/// on the system prompt: two of them in one chain keep two totals.
struct Add {
    label: &'static str,
    step: u32,
}

#[middleware(state = u32)]
impl Add {
    #[hook(before_model)]
    fn add(&self, total: &mut u32, request: &mut ModelRequest) {
        *total += self.step;
        let prompt = request.system_prompt.get_or_insert_with(String::new);
        prompt.push_str(&format!("{}={total};", self.label));
    }
}

const ONES: Add = Add {
    label: "ones",
    step: 1,
};
const TENS: Add = Add {
    label: "tens",
    step: 10,
};

/// Pauses a run of `chain` (`ask_second` first) in `before_model` of its second step, before
/// the members after `ask_second` ran in it.
async fn paused_with(chain: impl Middleware) -> Checkpoint {
    let lookups = counter();
    let agent = agent(&lookups, chain);
    let tools = agent.run("hi").await.unwrap().checkpoint.unwrap();
    let answers = answer_all(&tools, json!("Ada"));
    let paused = agent.resume(tools, answers).await.unwrap();
    *paused.checkpoint.unwrap()
}

/// Two named instances of one middleware, the first removed since the checkpoint: the other
/// keeps its own state (before names, it took the first one's: the k-th of a name got the
/// k-th's state), and the checkpoint lists the members by their names.
#[tokio::test]
async fn a_named_instance_keeps_its_own_state_when_another_of_its_middleware_is_removed() {
    let checkpoint = paused_with(chain![ask_second, ONES.named("ones"), TENS.named("tens")]).await;
    assert_eq!(checkpoint.chain(), ["ask_second", "ones", "tens"]);
    let lookups = counter();
    let agent = agent(&lookups, chain![ask_second, TENS.named("tens")]);
    let answers = answer_all(&checkpoint, json!("go"));
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    assert_eq!(system_prompts(&agent), [Some("tens=20;".to_owned())]);
}

/// The same, through a checkpoint's JSON, with the survivor moved and a member added.
#[tokio::test]
async fn named_instances_are_matched_by_name_wherever_they_moved() {
    let checkpoint = paused_with(chain![ask_second, ONES.named("ones"), TENS.named("tens")]).await;
    let checkpoint = Checkpoint::from_json(&checkpoint.to_json().unwrap()).unwrap();
    let lookups = counter();
    let agent = agent(
        &lookups,
        chain![
            ask_second,
            TENS.named("tens"),
            newcomer,
            ONES.named("ones"),
            Add {
                label: "new",
                step: 100
            }
            .named("hundreds"),
        ],
    );
    let answers = answer_all(&checkpoint, json!("go"));
    agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(
        system_prompts(&agent),
        [Some("tens=20;ones=2;new=100;".to_owned())]
    );
}

/// Two unnamed members of one middleware, one removed since: which one the survivor continues
/// would be a guess, so the resume is refused naming them, and nothing runs.
#[tokio::test]
async fn an_ambiguous_checkpoint_is_refused_naming_the_members() {
    let checkpoint = paused_with(chain![ask_second, ONES, TENS]).await;
    let lookups = counter();
    let agent = agent(&lookups, chain![ask_second, TENS]);
    let answers = answer_all(&checkpoint, json!("go"));
    let error = agent.resume(checkpoint, answers).await.unwrap_err();
    let hookchain::Error::Resume(error) = error else {
        panic!("{error:?}");
    };
    let ResumeError::AmbiguousMember {
        name,
        checkpoint,
        agent: now,
    } = &*error
    else {
        panic!("{error:?}");
    };
    assert_eq!(name, "Add");
    assert_eq!(checkpoint, &["Add", "Add"]);
    assert_eq!(now, &["Add"]);
    let message = error.to_string();
    assert!(message.contains("`Add`"), "{message}");
    assert!(message.contains("name each instance"), "{message}");
    assert!(agent.model().requests().is_empty());
}

/// Writes `stamp;` on the system prompt; keeps no state.
#[hook(before_model)]
fn stamp(request: &mut ModelRequest) {
    let prompt = request.system_prompt.get_or_insert_with(String::new);
    prompt.push_str("stamp;");
}

/// Two unnamed members of a middleware without state, one removed since: whichever goes on,
/// it carries the same (nothing), so that is no guess, and the resume goes on.
#[tokio::test]
async fn stateless_members_of_one_middleware_resume_when_one_is_removed() {
    let checkpoint = paused_with(chain![ask_second, stamp, stamp]).await;
    let lookups = counter();
    let agent = agent(&lookups, chain![ask_second, stamp]);
    let answers = answer_all(&checkpoint, json!("go"));
    let done = agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(done.text().as_deref(), Some("done"));
    assert_eq!(system_prompts(&agent), [Some("stamp;".to_owned())]);
}

/// Two unnamed `ask_second`s (no state), one removed since, the first of them paused: whether
/// the one left is the one that asked would be a guess, so the resume is refused.
#[tokio::test]
async fn a_pause_in_a_member_paired_by_a_guess_is_refused() {
    let checkpoint = paused_with(chain![ask_second, ask_second]).await;
    let lookups = counter();
    let agent = agent(&lookups, chain![ask_second]);
    let answers = answer_all(&checkpoint, json!("go"));
    let error = agent.resume(checkpoint, answers).await.unwrap_err();
    assert!(
        matches!(&error, hookchain::Error::Resume(error) if matches!(&**error, ResumeError::AmbiguousMember { name, .. } if name == "ask_second")),
        "{error:?}"
    );
    assert!(agent.model().requests().is_empty());
}

/// Unnamed members of one middleware that are as many as before resume as they did (in
/// order), and so do members given names since.
#[tokio::test]
async fn unnamed_members_as_many_as_before_resume_in_order() {
    let checkpoint = paused_with(chain![ask_second, ONES, TENS]).await;
    let lookups = counter();
    let agent = agent(&lookups, chain![ask_second, ONES, newcomer, TENS]);
    let answers = answer_all(&checkpoint, json!("go"));
    agent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(system_prompts(&agent), [Some("ones=2;tens=20;".to_owned())]);

    let checkpoint = paused_with(chain![ask_second, ONES, TENS]).await;
    let named = agent_named(&lookups);
    let answers = answer_all(&checkpoint, json!("go"));
    named.resume(checkpoint, answers).await.unwrap();
    assert_eq!(system_prompts(&named), [Some("ones=2;tens=20;".to_owned())]);
}

/// The agent of `chain![ask_second, ONES.named("ones"), TENS.named("tens")]`.
fn agent_named(lookups: &Arc<AtomicUsize>) -> Agent<ScriptedModel, impl Middleware> {
    agent(
        lookups,
        chain![ask_second, ONES.named("ones"), TENS.named("tens")],
    )
}

/// A model that calls `tool` at the start of each run, then answers.
fn calls_at_each_run(tool: &'static str) -> ScriptedModel {
    ScriptedModel::from_rule(move |request| {
        Ok(match request.messages.last() {
            Some(last) if last.role == Role::User => {
                ModelResponse::tool_calls([ToolCall::new("call", tool, json!({ "text": "x" }))])
            }
            _ => ModelResponse::text("done"),
        })
    })
}

/// A limit of one call of `tool` per thread.
fn one_per_thread(tool: &str) -> ToolCallLimit {
    ToolCallLimit::builder()
        .tool(tool)
        .thread_limit(1)
        .build()
        .unwrap()
}

/// An agent with the tools `lookup` and `search` (counted), whose model calls `tool` at the
/// start of each run.
fn limited<C: Middleware>(
    tool: &'static str,
    runs: &Arc<AtomicUsize>,
    chain: C,
) -> Agent<ScriptedModel, C> {
    Agent::builder(calls_at_each_run(tool))
        .tool(counting_tool("lookup", runs))
        .tool(counting_tool("search", runs))
        .chain(chain)
        .build()
        .unwrap()
}

/// A thread of two named `ToolCallLimit`s, the first removed since: the other keeps its own
/// count (none), so `search` runs (before names, it took the removed limit's count of
/// `lookup`, and blocked `search`, which never ran).
#[tokio::test]
async fn a_thread_gives_each_named_limit_its_own_count() {
    let runs = counter();
    let old = limited(
        "lookup",
        &runs,
        chain![
            one_per_thread("lookup").named("lookup"),
            one_per_thread("search").named("search"),
        ],
    );
    let mut thread = old.thread();
    old.run_in(&mut thread, "hi").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let stored: Thread<Value> =
        serde_json::from_str(&serde_json::to_string(&thread).unwrap()).unwrap();

    let new = limited("search", &runs, one_per_thread("search").named("search"));
    let mut adopted = new.adopt_thread(stored).unwrap();
    let output = new.run_in(&mut adopted, "again").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2, "search was blocked");
    assert!(!output.messages.iter().any(|m| m.is_error));
}

/// The same thread with unnamed limits: adopting it on the changed chain is refused naming the
/// limits, and so is running it read as it was stored.
#[tokio::test]
async fn an_ambiguous_thread_is_refused_naming_the_members() {
    let runs = counter();
    let old = limited(
        "lookup",
        &runs,
        chain![one_per_thread("lookup"), one_per_thread("search")],
    );
    let mut thread = old.thread();
    old.run_in(&mut thread, "hi").await.unwrap();
    let stored = serde_json::to_string(&thread).unwrap();

    let new = limited("search", &runs, chain![one_per_thread("search")]);
    let error = new
        .adopt_thread(serde_json::from_str(&stored).unwrap())
        .unwrap_err();
    assert!(
        matches!(
            &error,
            ResumeError::AmbiguousMember { name, checkpoint, agent }
                if name == "ToolCallLimit" && checkpoint.len() == 2 && agent.len() == 1
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("`ToolCallLimit`"), "{error}");

    // Read directly as the state of a chain whose state has the same shape (a limit and a
    // counter of runs): carried over when it runs, and refused there.
    let counted = limited(
        "search",
        &runs,
        chain![one_per_thread("search"), count_runs],
    );
    let mut read: Thread<(ThreadToolCalls, u32)> = serde_json::from_str(&stored).unwrap();
    let error = counted.run_in(&mut read, "again").await.unwrap_err();
    assert!(
        matches!(&error, hookchain::Error::Resume(error) if matches!(**error, ResumeError::AmbiguousMember { .. })),
        "{error:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "a tool ran");
}

// ---------------------------------------------------------------------------------------------
// Threads: versioned and fingerprinted like checkpoints
// ---------------------------------------------------------------------------------------------

/// Counts the runs of a thread too (a second thread-scoped state of the same type).
#[hook(before_agent, thread_state = u32)]
fn count_runs_twice(runs: &mut u32) {
    *runs += 2;
}

/// An agent that answers every request, with `chain`.
fn talker<C: Middleware>(chain: C) -> Agent<ScriptedModel, C> {
    Agent::builder(ScriptedModel::from_rule(|_| Ok(ModelResponse::text("ok"))))
        .chain(chain)
        .build()
        .unwrap()
}

/// A stored thread records its format and the members of its chain (nested as its state).
#[tokio::test]
async fn a_stored_thread_records_its_chain() {
    let agent = talker(chain![count_calls, chain![count_runs]]);
    let mut thread = agent.thread();
    agent.run_in(&mut thread, "hi").await.unwrap();
    let json = serde_json::to_value(&thread).unwrap();
    assert_eq!(json["format"], 3);
    assert_eq!(json["chain"], json!(["count_calls", ["count_runs"]]));
    // No owner recorded: none written.
    assert!(json.get("owner").is_none(), "{json}");
    // An owner recorded is kept across runs, and read back.
    let mut owned = agent.thread().with_owner("alice");
    agent.run_in(&mut owned, "hi").await.unwrap();
    let json = serde_json::to_value(&owned).unwrap();
    assert_eq!(json["owner"], "alice");
    let back: hookchain::Thread<serde_json::Value> = serde_json::from_value(json).unwrap();
    assert_eq!(back.owner(), Some("alice"));
    // A thread of format 2 (before owners) reads as no one's.
    let mut older = serde_json::to_value(&thread).unwrap();
    older["format"] = json!(2);
    let older: hookchain::Thread<serde_json::Value> = serde_json::from_value(older).unwrap();
    assert_eq!(older.owner(), None);
}

/// A thread stored by a chain that changed since is adopted through the agent: each member
/// takes the state of the stored member of its name, a new one starts from `Default`.
#[tokio::test]
async fn a_thread_of_a_changed_chain_is_adopted_by_name() {
    let old = talker(chain![count_runs, count_runs_twice]);
    let mut thread = old.thread();
    old.run_in(&mut thread, "hi").await.unwrap();
    assert_eq!(thread.state(), &(1, 2));
    let stored = serde_json::to_string(&thread).unwrap();

    let new = talker(chain![newcomer, count_runs_twice, chain![count_runs]]);
    let stored: Thread<Value> = serde_json::from_str(&stored).unwrap();
    let mut adopted = new.adopt_thread(stored).unwrap();
    assert_eq!(adopted.state(), &((), 2, (1,)));
    assert_eq!(adopted.messages(), thread.messages());
    new.run_in(&mut adopted, "again").await.unwrap();
    assert_eq!(adopted.state(), &((), 4, (2,)));
}

/// A thread whose members changed order (the state's type is the same) is carried over by
/// name when it runs: the counts stay with their members.
#[tokio::test]
async fn a_thread_whose_members_moved_keeps_each_state_with_its_member() {
    let old = talker(chain![count_runs, count_runs_twice]);
    let mut thread = old.thread();
    old.run_in(&mut thread, "hi").await.unwrap();
    let stored = serde_json::to_string(&thread).unwrap();

    let swapped = talker(chain![count_runs_twice, count_runs]);
    let mut thread: Thread<(u32, u32)> = serde_json::from_str(&stored).unwrap();
    swapped.run_in(&mut thread, "again").await.unwrap();
    assert_eq!(thread.state(), &(4, 2));
}

/// Format 2 did not record how members nest: its checkpoints resume only on the same members
/// (as they did), another chain is refused naming both.
#[tokio::test]
async fn a_format_2_checkpoint_resumes_only_on_its_own_members() {
    let checkpoint = Checkpoint::from_json(&fixture("checkpoint-v2-before-model.json")).unwrap();
    let lookups = counter();
    let agent = agent(&lookups, chain![count_calls, ask_second]);
    // The thread as this chain would have stored it (its paused mark is the fixture's).
    let mut stored: Value = serde_json::from_str(&fixture("thread-v2.json")).unwrap();
    stored["state"] = json!([null, null]);
    let mut thread: Thread<((), ())> = serde_json::from_value(stored).unwrap();
    let answers = answer_all(&checkpoint, json!("Ada"));
    let error = agent
        .resume_in(&mut thread, checkpoint, answers)
        .await
        .unwrap_err();
    let hookchain::Error::Resume(error) = error else {
        panic!("{error:?}");
    };
    match &*error {
        ResumeError::ChainMismatch { checkpoint, agent } => {
            assert_eq!(checkpoint, &["count_calls", "count_runs", "ask_second"]);
            assert_eq!(agent, &["count_calls", "ask_second"]);
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Corrupt checkpoints
// ---------------------------------------------------------------------------------------------

/// A tool step whose results are not as many as its calls (the resume indexed one by the
/// other, and panicked) is refused when read.
#[tokio::test]
async fn a_tool_step_with_a_result_missing_is_refused() {
    let lookups = counter();
    let paused = agent(&lookups, chain![count_calls, confirm_tools])
        .run("hi")
        .await
        .unwrap();
    let mut json: Value =
        serde_json::from_str(&paused.checkpoint.unwrap().to_json().unwrap()).unwrap();
    let results = json["position"]["tools"]["results"].as_array_mut().unwrap();
    assert_eq!(results.len(), 2);
    results.pop();
    let error = Checkpoint::from_json(&json.to_string()).unwrap_err();
    assert!(matches!(error, CheckpointError::Decode(_)), "{error:?}");
    let cause = std::error::Error::source(&error).unwrap().to_string();
    assert!(
        cause.contains("tool calls and their results are not as many"),
        "{cause}"
    );
}

/// One change to a checkpoint's JSON: the node it picks (by its index among all nodes, modulo
/// their number) replaced by a value or by a copy of another node (well-formed parts in the
/// wrong place), or removed.
#[derive(Debug, Clone)]
enum Corruption {
    Replace(usize, Value),
    Copy { from: usize, to: usize },
    Remove(usize),
}

fn any_corruption() -> impl Strategy<Value = Corruption> {
    let value = prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!("")),
        Just(json!("call_1")),
        Just(json!([])),
        Just(json!({})),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(u64::MAX)),
        (0..8_u64).prop_map(Value::from),
    ];
    prop_oneof![
        3 => (any::<usize>(), value).prop_map(|(at, value)| Corruption::Replace(at, value)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Corruption::Copy { from, to }),
        1 => any::<usize>().prop_map(Corruption::Remove),
    ]
}

/// The JSON pointers of every node below the root, parents before children.
fn pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => Vec::new(),
    };
    for (key, child) in children {
        let pointer = format!("{at}/{key}");
        out.push(pointer.clone());
        pointers(child, &pointer, out);
    }
}

fn corrupt(json: &mut Value, corruption: &Corruption) {
    let mut all = Vec::new();
    pointers(json, "", &mut all);
    let (Corruption::Replace(at, _) | Corruption::Copy { to: at, .. } | Corruption::Remove(at)) =
        corruption;
    let pointer = &all[at % all.len()];
    match corruption {
        Corruption::Replace(_, value) => *json.pointer_mut(pointer).unwrap() = value.clone(),
        Corruption::Copy { from, .. } => {
            let copy = json.pointer(&all[from % all.len()]).unwrap().clone();
            *json.pointer_mut(pointer).unwrap() = copy;
        }
        Corruption::Remove(_) => {
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            match json.pointer_mut(parent).unwrap() {
                Value::Object(map) => {
                    map.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Value::Array(items) => {
                    items.remove(key.parse::<usize>().unwrap());
                }
                _ => unreachable!("a parent holds its children"),
            }
        }
    }
}

/// Checkpoints of every kind of pause: in `before_model`, in a wrap around tool calls, and a
/// tool's own interrupt, each as JSON.
fn paused_checkpoints() -> Vec<Value> {
    futures::executor::block_on(async {
        let lookups = counter();
        let asked = agent(&lookups, chain![count_calls, count_runs, ask_second]);
        let in_tools = asked.run("hi").await.unwrap().checkpoint.unwrap();
        let answers = answer_all(&in_tools, json!("Ada"));
        let before_model = asked.resume(in_tools.clone(), answers).await.unwrap();
        let gated = agent(&lookups, chain![count_calls, confirm_tools]);
        let in_wrap = gated.run("hi").await.unwrap().checkpoint.unwrap();
        [in_tools, before_model.checkpoint.unwrap(), in_wrap]
            .iter()
            .map(|checkpoint| serde_json::from_str(&checkpoint.to_json().unwrap()).unwrap())
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// "A corrupt checkpoint is a clear error, never a panic": any checkpoint of any pause, with
    /// a few of its values replaced or removed, is refused or resumes (on its own chain and on
    /// a changed one); what it sends the model is still a valid history (the scripted model
    /// refuses any other), and a run that ends has a valid one.
    #[test]
    fn a_corrupt_checkpoint_is_refused_or_resumed_never_a_panic(
        which in 0..3_usize,
        corruptions in proptest::collection::vec(any_corruption(), 1..4),
        changed_chain in any::<bool>(),
    ) {
        let mut json = paused_checkpoints().swap_remove(which);
        for corruption in &corruptions {
            corrupt(&mut json, corruption);
        }
        let Ok(checkpoint) = Checkpoint::from_json(&json.to_string()) else {
            return Ok(());
        };
        let answers = answer_all(&checkpoint, json!("yes"));
        let lookups = counter();
        let output = futures::executor::block_on(async {
            if changed_chain {
                agent(&lookups, chain![newcomer, count_calls, confirm_tools])
                    .resume(checkpoint, answers)
                    .await
            } else if which == 2 {
                agent(&lookups, chain![count_calls, confirm_tools]).resume(checkpoint, answers).await
            } else {
                agent(&lookups, chain![count_calls, count_runs, ask_second])
                    .resume(checkpoint, answers)
                    .await
            }
        });
        if let Ok(output) = output {
            prop_assert!(
                hookchain::message::validate_history(&output.messages).is_ok()
                    || output.end == EndReason::Interrupted,
                "{:#?}",
                output.messages
            );
        }
    }
}

/// A stored thread after a run, and one paused in its second run with the checkpoint to resume
/// it, each as JSON.
fn stored_threads() -> Vec<(Value, Option<Value>)> {
    futures::executor::block_on(async {
        let idle = talker(chain![count_calls, count_runs, ask_second]);
        let mut thread = idle.thread();
        idle.run_in(&mut thread, "hi").await.unwrap();
        let lookups = counter();
        let asking = agent(&lookups, chain![count_calls, count_runs, ask_second]);
        let mut paused = asking.thread();
        let tools = asking.run_in(&mut paused, "hi").await.unwrap();
        let checkpoint = tools.checkpoint.unwrap();
        vec![
            (serde_json::to_value(&thread).unwrap(), None),
            (
                serde_json::to_value(&paused).unwrap(),
                Some(serde_json::from_str(&checkpoint.to_json().unwrap()).unwrap()),
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// "A corrupt stored thread is a clear error, never a panic": a thread with a few of its
    /// values replaced or removed is refused when read, or takes a new run or its resume.
    #[test]
    fn a_corrupt_thread_is_refused_or_runs_never_a_panic(
        which in 0..2_usize,
        corruptions in proptest::collection::vec(any_corruption(), 1..4),
    ) {
        let (mut json, checkpoint) = stored_threads().swap_remove(which);
        for corruption in &corruptions {
            corrupt(&mut json, corruption);
        }
        let lookups = counter();
        let agent = agent(&lookups, chain![count_calls, count_runs, ask_second]);
        let Ok(mut thread) = serde_json::from_value(json) else {
            return Ok(());
        };
        futures::executor::block_on(async {
            let _ = match checkpoint {
                Some(checkpoint) => {
                    let checkpoint = Checkpoint::from_json(&checkpoint.to_string()).unwrap();
                    let answers = answer_all(&checkpoint, json!("Ada"));
                    agent.resume_in(&mut thread, checkpoint, answers).await
                }
                None => agent.run_in(&mut thread, "again").await,
            };
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Signed checkpoints
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "signing")]
mod signed {
    use std::convert::Infallible;
    use std::sync::Mutex;

    use hookchain::builtin::human_in_the_loop::{
        ApprovalResponse, Decision, HumanInTheLoop, ToolPolicy,
    };
    use hookchain::interrupt::{InMemoryCheckpointer, SignatureError, SigningKey};
    use hookchain::{Durability, FnTool, ResumeFrom, RunOutput};
    use schemars::JsonSchema;
    use serde::Deserialize;

    use super::*;

    /// What the `delete_file` tool deleted, one path per call.
    type Deleted = Arc<Mutex<Vec<String>>>;

    /// Arguments of `delete_file`.
    #[derive(Debug, Deserialize, JsonSchema)]
    struct PathArgs {
        /// The file.
        path: String,
    }

    /// An agent whose model deletes `a.txt`, each deletion approved first.
    fn deleter(deleted: &Deleted) -> Agent<ScriptedModel, (HumanInTheLoop,)> {
        deleter_builder(deleted).build().unwrap()
    }

    /// [`deleter`], not built yet.
    fn deleter_builder(
        deleted: &Deleted,
    ) -> hookchain::AgentBuilder<ScriptedModel, (HumanInTheLoop,)> {
        let deleted = deleted.clone();
        let tool = FnTool::new("delete_file", "Deletes a file.", move |args: PathArgs| {
            deleted.lock().unwrap().push(args.path.clone());
            async move { Ok::<_, Infallible>(format!("deleted {}", args.path)) }
        });
        Agent::builder(ScriptedModel::from_rule(|request| {
            let answered = request.messages.iter().any(|m| m.role == Role::Tool);
            Ok(if answered {
                ModelResponse::text("done")
            } else {
                ModelResponse::tool_calls([ToolCall::new(
                    "c1",
                    "delete_file",
                    json!({ "path": "a.txt" }),
                )])
            })
        }))
        .tool(tool)
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("delete_file", ToolPolicy::always())
        ])
    }

    /// A key of 32 bytes of `byte`.
    fn key(id: &str, byte: u8) -> SigningKey {
        SigningKey::new(id, [byte; 32]).unwrap()
    }

    /// The run paused for the approval of `delete_file`.
    async fn paused(agent: &Agent<ScriptedModel, (HumanInTheLoop,)>) -> Checkpoint {
        let output = agent.run("clean up").await.unwrap();
        assert_eq!(output.end, EndReason::Interrupted);
        *output.checkpoint.unwrap()
    }

    /// Approves every pending interrupt of `checkpoint`.
    fn approve(checkpoint: &Checkpoint) -> Vec<(hookchain::InterruptId, Value)> {
        let approved = serde_json::to_value(ApprovalResponse::new(vec![Decision::Approve]));
        answer_all(checkpoint, approved.unwrap())
    }

    /// What a server does with a signed checkpoint a client sends back: reads it with `keys`,
    /// then resumes it, approved.
    async fn resume_signed(
        agent: &Agent<ScriptedModel, (HumanInTheLoop,)>,
        text: &str,
        keys: &[SigningKey],
    ) -> Result<RunOutput, Error> {
        let checkpoint = Checkpoint::from_signed_json(text, keys)?;
        let answers = approve(&checkpoint);
        agent.resume(checkpoint, answers).await
    }

    /// The signature error of a refused signed checkpoint.
    #[track_caller]
    fn signature_error(result: Result<RunOutput, Error>) -> SignatureError {
        match result {
            Err(Error::Checkpoint(error)) => match *error {
                CheckpointError::Signature(error) => error,
                other => panic!("expected CheckpointError::Signature, got {other:?}"),
            },
            other => panic!("expected Error::Checkpoint, got {other:?}"),
        }
    }

    /// The envelope of a signed checkpoint, as JSON.
    fn envelope(text: &str) -> serde_json::Map<String, Value> {
        serde_json::from_str(text).unwrap()
    }

    /// "A signed checkpoint round-trips and resumes": read back equal to what was signed, and
    /// resumed, the approved call running once as the model made it. The envelope names its key
    /// and holds the checkpoint's JSON as it is, and its MAC is 64 hex digits.
    #[tokio::test]
    async fn a_signed_checkpoint_round_trips_and_resumes() {
        let deleted = Deleted::default();
        let agent = deleter(&deleted);
        let checkpoint = paused(&agent).await;
        let key = key("k1", 1);
        let text = checkpoint.to_signed_json(&key).unwrap();

        let fields = envelope(&text);
        assert_eq!(fields["signed_checkpoint"], json!(1));
        assert_eq!(fields["key"], json!("k1"));
        let mac = fields["hmac_sha256"].as_str().unwrap();
        assert!(mac.len() == 64 && mac.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(fields["checkpoint"], json!(checkpoint.to_json().unwrap()));
        assert_eq!(fields.len(), 4);

        let read = Checkpoint::from_signed_json(&text, &key).unwrap();
        assert_eq!(read, checkpoint);
        let unread = Checkpoint::from_json(&text).unwrap_err();
        assert!(
            hookchain::error::Report(&unread)
                .to_string()
                .contains("from_signed_json"),
            "read as unsigned, a signed checkpoint says how to read it: {unread:?}"
        );
        assert!(deleted.lock().unwrap().is_empty());
        let done = resume_signed(&agent, &text, std::slice::from_ref(&key))
            .await
            .unwrap();
        assert_eq!(done.text().as_deref(), Some("done"));
        assert_eq!(*deleted.lock().unwrap(), ["a.txt"]);
    }

    /// Why signing: without a signature a checkpoint is trusted input, and one whose approval's
    /// arguments a client edited resumes with the edited call. Signed, the same edit is refused
    /// with the signature error, and nothing runs.
    #[tokio::test]
    async fn a_signed_checkpoint_whose_arguments_were_edited_is_refused_and_nothing_runs() {
        let deleted = Deleted::default();
        let agent = deleter(&deleted);
        let checkpoint = paused(&agent).await;

        let unsigned = checkpoint.to_json().unwrap().replace("a.txt", "b.txt");
        let edited = Checkpoint::from_json(&unsigned).unwrap();
        let answers = approve(&edited);
        agent.resume(edited, answers).await.unwrap();
        assert_eq!(*deleted.lock().unwrap(), ["b.txt"], "the edit ran unsigned");
        deleted.lock().unwrap().clear();

        let key = key("k1", 1);
        let signed = checkpoint.to_signed_json(&key).unwrap();
        // One byte: `a.txt` becomes `b.txt` wherever the call's arguments are.
        let tampered = signed.replace("a.txt", "b.txt");
        assert_ne!(tampered, signed);
        let refused = resume_signed(&agent, &tampered, std::slice::from_ref(&key)).await;
        assert_eq!(
            signature_error(refused),
            SignatureError::Mismatch { key: "k1".into() }
        );
        assert!(deleted.lock().unwrap().is_empty(), "nothing ran");
    }

    /// Another key, a truncated or removed signature, a plain checkpoint: each is refused with
    /// the signature error (saying which), and nothing runs.
    #[tokio::test]
    async fn a_signature_of_another_key_truncated_or_removed_is_refused_and_nothing_runs() {
        let deleted = Deleted::default();
        let agent = deleter(&deleted);
        let checkpoint = paused(&agent).await;
        let key = key("k1", 1);
        let signed = checkpoint.to_signed_json(&key).unwrap();
        let with = |change: &dyn Fn(&mut serde_json::Map<String, Value>)| {
            let mut fields = envelope(&signed);
            change(&mut fields);
            serde_json::to_string(&fields).unwrap()
        };

        let cases = [
            (
                "signed with another secret under the same id",
                checkpoint.to_signed_json(&self::key("k1", 2)).unwrap(),
                SignatureError::Mismatch { key: "k1".into() },
            ),
            (
                "signed with a key of another id",
                checkpoint.to_signed_json(&self::key("k2", 1)).unwrap(),
                SignatureError::UnknownKey { key: "k2".into() },
            ),
            (
                "its key id changed",
                with(&|fields| {
                    fields.insert("key".into(), json!("k2"));
                }),
                SignatureError::UnknownKey { key: "k2".into() },
            ),
            (
                "its signature truncated",
                with(&|fields| {
                    let mac = fields["hmac_sha256"].as_str().unwrap()[..63].to_owned();
                    fields.insert("hmac_sha256".into(), json!(mac));
                }),
                SignatureError::Malformed("its signature is not 64 hex digits"),
            ),
            (
                "its signature removed",
                with(&|fields| {
                    fields.remove("hmac_sha256");
                }),
                SignatureError::Unsigned,
            ),
            (
                "the signature of another checkpoint",
                with(&|fields| {
                    let json = checkpoint.to_json().unwrap().replace("clean up", "tidy up");
                    let other = Checkpoint::from_json(&json).unwrap();
                    let theirs = envelope(&other.to_signed_json(&self::key("k1", 1)).unwrap());
                    fields.insert("hmac_sha256".into(), theirs["hmac_sha256"].clone());
                }),
                SignatureError::Mismatch { key: "k1".into() },
            ),
            (
                "never signed",
                checkpoint.to_json().unwrap(),
                SignatureError::Unsigned,
            ),
            (
                "not JSON",
                signed[..signed.len() - 1].to_owned(),
                SignatureError::Malformed("not the JSON of a signed checkpoint"),
            ),
        ];
        for (case, text, expected) in cases {
            let refused = resume_signed(&agent, &text, std::slice::from_ref(&key)).await;
            assert_eq!(signature_error(refused), expected, "{case}");
            assert!(deleted.lock().unwrap().is_empty(), "{case}: nothing ran");
        }
        // The original still resumes.
        resume_signed(&agent, &signed, std::slice::from_ref(&key))
            .await
            .unwrap();
        assert_eq!(*deleted.lock().unwrap(), ["a.txt"]);
    }

    /// Any one byte of a signed checkpoint changed (payload, signature, key id or envelope):
    /// refused with the signature error, never read.
    #[tokio::test]
    async fn any_byte_changed_is_refused() {
        let checkpoint = paused(&deleter(&Deleted::default())).await;
        let key = key("k1", 1);
        let signed = checkpoint.to_signed_json(&key).unwrap().into_bytes();
        for at in 0..signed.len() {
            let mut changed = signed.clone();
            changed[at] ^= 1;
            let text = String::from_utf8(changed).expect("ASCII stays ASCII");
            match Checkpoint::from_signed_json(&text, &key) {
                Err(CheckpointError::Signature(_)) => {}
                other => panic!("byte {at} changed: expected a signature error, got {other:?}"),
            }
        }
    }

    /// "Key rotation": signed with the old key, read with the new and the old ones; without
    /// the old one, refused. Signed with the new key, read with the new one alone.
    #[tokio::test]
    async fn after_a_rotation_the_old_keys_checkpoints_are_read_with_the_old_key_among_the_keys() {
        let deleted = Deleted::default();
        let agent = deleter(&deleted);
        let checkpoint = paused(&agent).await;
        let (old, new) = (key("2026-10", 1), key("2026-11", 2));
        let by_old = checkpoint.to_signed_json(&old).unwrap();
        let by_new = checkpoint.to_signed_json(&new).unwrap();

        assert_eq!(
            Checkpoint::from_signed_json(&by_new, &new).unwrap(),
            checkpoint
        );
        let refused = resume_signed(&agent, &by_old, std::slice::from_ref(&new)).await;
        assert_eq!(
            signature_error(refused),
            SignatureError::UnknownKey {
                key: "2026-10".into()
            }
        );
        assert!(deleted.lock().unwrap().is_empty());

        let rotated = [new, old];
        assert_eq!(
            Checkpoint::from_signed_json(&by_new, &rotated).unwrap(),
            checkpoint
        );
        let done = resume_signed(&agent, &by_old, &rotated).await.unwrap();
        assert_eq!(done.text().as_deref(), Some("done"));
        assert_eq!(*deleted.lock().unwrap(), ["a.txt"]);
    }

    /// An agent with `checkpoint_signing` hands out signed checkpoints and resumes only what
    /// one of its keys signed: the checkpoint given as it is, a changed one, one of another
    /// key are refused with the signature error, and nothing runs; its own, signed by the key
    /// before the rotation, resumes.
    #[tokio::test]
    async fn an_agent_that_signs_resumes_only_checkpoints_its_keys_signed() {
        let deleted = Deleted::default();
        let (old, new) = (key("2026-10", 1), key("2026-11", 2));
        let before = deleter_builder(&deleted)
            .checkpoint_signing(std::slice::from_ref(&old))
            .build()
            .unwrap();
        let agent = deleter_builder(&deleted)
            .checkpoint_signing([new.clone(), old.clone()])
            .build()
            .unwrap();
        let checkpoint = paused(&before).await;
        let signed = before.sign_checkpoint(&checkpoint).unwrap();
        assert_eq!(envelope(&signed)["key"], json!("2026-10"));
        assert_eq!(
            envelope(&agent.sign_checkpoint(&checkpoint).unwrap())["key"],
            json!("2026-11"),
            "the first key signs"
        );
        let answers = approve(&checkpoint);

        let refused = [
            (
                ResumeFrom::from(checkpoint.clone()),
                SignatureError::Unsigned,
            ),
            (
                ResumeFrom::signed(checkpoint.to_json().unwrap()),
                SignatureError::Unsigned,
            ),
            (
                ResumeFrom::signed(signed.replace("a.txt", "b.txt")),
                SignatureError::Mismatch {
                    key: "2026-10".into(),
                },
            ),
            (
                ResumeFrom::signed(checkpoint.to_signed_json(&key("k3", 3)).unwrap()),
                SignatureError::UnknownKey { key: "k3".into() },
            ),
        ];
        for (from, expected) in refused {
            let result = agent.resume(from, answers.clone()).await;
            assert_eq!(signature_error(result), expected);
            assert!(deleted.lock().unwrap().is_empty(), "nothing ran");
        }

        let done = agent
            .resume(ResumeFrom::signed(signed), answers)
            .await
            .unwrap();
        assert_eq!(done.text().as_deref(), Some("done"));
        assert_eq!(*deleted.lock().unwrap(), ["a.txt"]);
    }

    /// In a thread: the thread's pause resumes from its signed checkpoint, not from the
    /// checkpoint given as it is.
    #[tokio::test]
    async fn a_signing_agent_resumes_a_threads_pause_from_its_signed_checkpoint() {
        let deleted = Deleted::default();
        let agent = deleter_builder(&deleted)
            .checkpoint_signing(key("k1", 1))
            .build()
            .unwrap();
        let mut thread = agent.thread();
        let checkpoint = agent
            .run_in(&mut thread, "clean up")
            .await
            .unwrap()
            .checkpoint
            .unwrap();
        let answers = approve(&checkpoint);
        let refused = agent
            .resume_in(&mut thread, checkpoint.clone(), answers.clone())
            .await;
        assert_eq!(signature_error(refused), SignatureError::Unsigned);
        let signed = agent.sign_checkpoint(&checkpoint).unwrap();
        let done = agent
            .resume_in(&mut thread, ResumeFrom::signed(signed), answers)
            .await
            .unwrap();
        assert_eq!(done.text().as_deref(), Some("done"));
        assert_eq!(*deleted.lock().unwrap(), ["a.txt"]);
    }

    /// With a store, a signed checkpoint resumes once: the same one sent again is refused by
    /// the store (its run ended), not by its signature, which still verifies. A stored key
    /// resumes with no signature: the store's copy is the agent's own.
    #[tokio::test]
    async fn a_signing_agent_with_a_store_resumes_a_signed_checkpoint_once() {
        let deleted = Deleted::default();
        let store = Arc::new(InMemoryCheckpointer::new());
        let agent = deleter_builder(&deleted)
            .checkpointer(store.clone(), Durability::Pauses)
            .checkpoint_signing(key("k1", 1))
            .build()
            .unwrap();
        let checkpoint = paused(&agent).await;
        let signed = agent.sign_checkpoint(&checkpoint).unwrap();
        let answers = approve(&checkpoint);
        agent
            .resume(ResumeFrom::signed(signed.clone()), answers.clone())
            .await
            .unwrap();
        let replayed = agent.resume(ResumeFrom::signed(signed), answers).await;
        assert!(
            matches!(replayed, Err(Error::Resume(ref error)) if matches!(**error, ResumeError::Ended { .. })),
            "{replayed:?}"
        );
        assert_eq!(*deleted.lock().unwrap(), ["a.txt"]);

        let checkpoint = paused(&agent).await;
        let answers = approve(&checkpoint);
        agent
            .resume(ResumeFrom::stored(checkpoint.key()), answers)
            .await
            .unwrap();
        assert_eq!(*deleted.lock().unwrap(), ["a.txt", "a.txt"]);
    }

    /// An agent without a key neither signs nor reads a signed checkpoint: it says so.
    #[tokio::test]
    async fn an_agent_without_a_key_says_so() {
        let deleted = Deleted::default();
        let agent = deleter(&deleted);
        let checkpoint = paused(&agent).await;
        assert!(matches!(
            agent.sign_checkpoint(&checkpoint),
            Err(CheckpointError::Signature(SignatureError::NoKey))
        ));
        let signed = checkpoint.to_signed_json(&key("k1", 1)).unwrap();
        let result = agent
            .resume(ResumeFrom::signed(signed), approve(&checkpoint))
            .await;
        assert_eq!(signature_error(result), SignatureError::NoKey);
        assert!(deleted.lock().unwrap().is_empty());
    }

    /// "A short key is refused": a secret under 32 bytes is a configuration error that names
    /// the key, never its secret.
    #[test]
    fn a_short_key_is_refused() {
        let secret = "correct horse battery staple";
        assert!(secret.len() < 32);
        let error = SigningKey::new("k1", secret).unwrap_err();
        assert!(
            matches!(&error, CheckpointError::SigningKey { id, .. } if id == "k1"),
            "{error:?}"
        );
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("32 bytes"), "{shown}");
        assert!(!shown.contains("horse"), "{shown}");
        assert!(SigningKey::new("k1", [0u8; 32]).is_ok());
    }
}
