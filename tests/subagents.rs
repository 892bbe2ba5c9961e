//! Agents as tools of other agents (`hookchain::subagent`): the scenarios of the bug the peers
//! keep reporting (a sub-agent's approval lost, or its siblings run again on resume — sagents
//! #7, strands PR 3675, deepagents #420 and #554), and what crosses the boundary: usage,
//! stream events, run context, cancellation, depth.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use hookchain::agent::{AgentEvent, SubAgentEvent};
use hookchain::builtin::human_in_the_loop::{
    ApprovalRequest, ApprovalResponse, HumanInTheLoop, ToolPolicy,
};
use hookchain::interrupt::{FileCheckpointer, Interrupt};
use hookchain::prelude::*;
use hookchain::subagent::{AgentTool, SubAgentPause, Task};
use hookchain::{
    Durability, EndReason, FnTool, InterruptId, ResumeFrom, Role, RunContext, Tool, ToolError,
    Usage, chain,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How many times each tool ran.
#[derive(Debug, Default)]
struct Runs {
    lookup: AtomicUsize,
    log: AtomicUsize,
    pay: AtomicUsize,
}

impl Runs {
    fn counts(&self) -> [usize; 3] {
        [&self.lookup, &self.log, &self.pay].map(|count| count.load(Ordering::SeqCst))
    }
}

/// A tool that counts its runs in `count` and says it ran.
fn counting(name: &'static str, runs: &Arc<Runs>, count: fn(&Runs) -> &AtomicUsize) -> impl Tool {
    let runs = Arc::clone(runs);
    FnTool::new(name, "Does its part.", move |arguments: Value| {
        count(&runs).fetch_add(1, Ordering::SeqCst);
        std::future::ready(Ok::<_, ToolError>(format!("{name} done with {arguments}")))
    })
}

/// The text of the last user message of a request.
fn task_of(request: &ModelRequest) -> String {
    request
        .messages
        .iter()
        .rfind(|message| message.role == Role::User)
        .map(|message| message.text().into_owned())
        .unwrap_or_default()
}

/// The child: logs, then pays (`pay` needs approval), then answers with what its tools said.
/// Its model is a rule, so that two runs of it at once answer alike.
fn accountant(runs: &Arc<Runs>) -> Agent<ScriptedModel, (HumanInTheLoop,)> {
    let model = ScriptedModel::from_rule(|request| {
        let results: Vec<String> = support::tool_texts(&request.messages);
        let task = task_of(request);
        let response = match results.len() {
            0 => {
                ModelResponse::tool_calls([ToolCall::new("log-1", "log", json!({ "task": task }))])
            }
            1 => {
                ModelResponse::tool_calls([ToolCall::new("pay-1", "pay", json!({ "task": task }))])
            }
            _ => ModelResponse::text(format!("accountant: {}", results.join(" | "))),
        };
        Ok(response.with_usage(usage(100, 50)))
    });
    Agent::builder(model)
        .name("accountant")
        .tool(counting("log", runs, |runs| &runs.log))
        .tool(counting("pay", runs, |runs| &runs.pay))
        .chain(chain![
            HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always())
        ])
        .build()
        .unwrap()
}

fn usage(input: u64, output: u64) -> Usage {
    let mut usage = Usage::default();
    usage.input_tokens = input;
    usage.output_tokens = output;
    usage
}

/// The parent: in one step, looks something up and delegates `tasks` to the accountant (one
/// call each); then answers with what it read.
fn lead(
    runs: &Arc<Runs>,
    tasks: &[&str],
    store: Option<Arc<FileCheckpointer>>,
) -> Agent<ScriptedModel> {
    let mut calls = vec![ToolCall::new("lookup-1", "lookup", json!({}))];
    calls.extend(tasks.iter().enumerate().map(|(i, task)| {
        ToolCall::new(format!("delegate-{i}"), "accounts", json!({ "task": task }))
    }));
    let model = ScriptedModel::from_rule(move |request| {
        let results: Vec<String> = support::tool_texts(&request.messages);
        Ok(if results.is_empty() {
            ModelResponse::tool_calls(calls.clone()).with_usage(usage(10, 5))
        } else {
            ModelResponse::text(format!("lead: {}", results.join(" || "))).with_usage(usage(10, 5))
        })
    });
    let mut builder = Agent::builder(model)
        .name("lead")
        .tool(counting("lookup", runs, |runs| &runs.lookup))
        .tool(
            accountant(runs)
                .into_tool("accounts", "Handles payments.")
                .unwrap(),
        );
    if let Some(store) = store {
        builder = builder.checkpointer(store, Durability::EveryStep);
    }
    builder.build().unwrap()
}

/// The child's pause in each of the parent's interrupts.
fn child_pauses(interrupts: &[Interrupt]) -> Vec<(InterruptId, SubAgentPause)> {
    interrupts
        .iter()
        .map(|interrupt| {
            let pause = SubAgentPause::from_interrupt(interrupt).expect("a sub-agent's pause");
            (interrupt.id.clone(), pause)
        })
        .collect()
}

/// Resumes `paused` with each child's approvals approved (or rejected, with `reject`).
async fn resume_deciding(
    lead: &Agent<ScriptedModel>,
    paused: &hookchain::RunOutput,
    reject: bool,
) -> hookchain::RunOutput {
    lead.resume(
        paused.checkpoint.clone().unwrap(),
        decide(paused.interrupts(), reject),
    )
    .await
    .unwrap()
}

/// The parent's answers: each child's approvals approved (or rejected, with `reject`).
fn decide(interrupts: &[Interrupt], reject: bool) -> Vec<(InterruptId, Value)> {
    child_pauses(interrupts)
        .into_iter()
        .map(|(id, pause)| {
            let answers = pause.interrupts().iter().map(|asked| {
                let request = ApprovalRequest::from_interrupt(asked).expect("an approval");
                let response = if reject {
                    ApprovalResponse::reject_all(&request, "not this month")
                } else {
                    ApprovalResponse::approve_all(&request)
                };
                response.answer(asked)
            });
            (id, pause.answer(answers))
        })
        .collect()
}

/// sagents #7, strands PR 3675: a child's approval in a parallel batch. The parent's sibling
/// call and the child's own completed call ran once before the pause and never again; the
/// approved call runs once.
#[tokio::test]
async fn a_childs_approval_in_a_parallel_batch_pauses_the_parent_and_nothing_runs_twice() {
    let runs = Arc::new(Runs::default());
    let lead = lead(&runs, &["Pay INV-7."], None);
    let paused = lead.run("Settle the month.").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    // The approval the child asks for is in the parent's pause, not lost.
    let pauses = child_pauses(paused.interrupts());
    assert_eq!(pauses.len(), 1);
    let (_, pause) = &pauses[0];
    assert_eq!(pause.agent, "accountant");
    assert_eq!(pause.tool, "accounts");
    let request = ApprovalRequest::from_interrupt(&pause.interrupts()[0]).unwrap();
    assert_eq!(request.actions[0].name, "pay");
    assert_eq!(runs.counts(), [1, 1, 0], "lookup and log ran, pay waits");

    let answers = decide(paused.interrupts(), false);
    let done = lead
        .resume(paused.checkpoint.clone().unwrap(), answers)
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(runs.counts(), [1, 1, 1], "each ran once");
    let text = done.text().unwrap();
    assert!(text.contains("lookup done"), "{text}");
    assert!(text.contains("accountant: log done"), "{text}");
    assert!(text.contains("pay done"), "{text}");
}

/// deepagents #420: resumed after a restart — new agents, the checkpoint from the store —
/// nothing that completed runs again, and a replayed answer is refused.
#[tokio::test]
async fn resumed_after_a_restart_from_the_store_nothing_runs_twice() {
    let dir = support::temp_dir("subagents", "restart");
    let runs = Arc::new(Runs::default());
    let key = {
        let store = Arc::new(FileCheckpointer::new(dir.join("store")));
        let lead = lead(&runs, &["Pay INV-7."], Some(store));
        let paused = lead.run("Settle the month.").await.unwrap();
        assert_eq!(paused.end, EndReason::Interrupted);
        paused.checkpoint.unwrap().key().to_owned()
    };
    assert_eq!(runs.counts(), [1, 1, 0]);

    // The restarted process: new agents on the same store; the question read from the store.
    let store = Arc::new(FileCheckpointer::new(dir.join("store")));
    let lead = lead(&runs, &["Pay INV-7."], Some(Arc::clone(&store)));
    let stored = match hookchain::interrupt::Checkpointer::get(&*store, &key)
        .await
        .unwrap()
    {
        Some(hookchain::interrupt::Record::Checkpoint(checkpoint)) => checkpoint,
        other => panic!("{other:?}"),
    };
    let answers = decide(stored.interrupts(), false);
    let done = lead
        .resume(ResumeFrom::stored(key.clone()), answers.clone())
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(runs.counts(), [1, 1, 1]);

    let replayed = lead.resume(ResumeFrom::stored(key), answers).await;
    assert!(replayed.is_err(), "{replayed:?}");
    assert_eq!(runs.counts(), [1, 1, 1], "the replay ran nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// deepagents #554: two children paused in one step of the parent are answered together, in
/// one resume; each pays once.
#[tokio::test]
async fn two_children_paused_in_one_step_are_answered_together() {
    let runs = Arc::new(Runs::default());
    let lead = lead(&runs, &["Pay INV-7.", "Pay INV-8."], None);
    let paused = lead.run("Settle the month.").await.unwrap();
    assert_eq!(paused.interrupts().len(), 2, "{:?}", paused.interrupts());
    assert_eq!(runs.counts(), [1, 2, 0]);
    let done = resume_deciding(&lead, &paused, false).await;
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(runs.counts(), [1, 2, 2]);
    let text = done.text().unwrap();
    assert!(text.contains("INV-7") && text.contains("INV-8"), "{text}");
}

/// A rejected child approval: the call is not run, the child reads the rejection and answers,
/// the parent goes on.
#[tokio::test]
async fn a_rejected_child_approval_runs_nothing_and_the_parent_goes_on() {
    let runs = Arc::new(Runs::default());
    let lead = lead(&runs, &["Pay INV-7."], None);
    let paused = lead.run("Settle the month.").await.unwrap();
    let done = resume_deciding(&lead, &paused, true).await;
    assert_eq!(done.end, EndReason::Finished);
    assert_eq!(runs.counts(), [1, 1, 0], "pay never ran");
    let text = done.text().unwrap();
    assert!(text.contains("not this month"), "{text}");
}

/// An answer that is not the child's is refused before anything runs.
#[tokio::test]
async fn an_answer_that_is_not_the_childs_is_refused_before_anything_runs() {
    let runs = Arc::new(Runs::default());
    let lead = lead(&runs, &["Pay INV-7."], None);
    let paused = lead.run("Settle the month.").await.unwrap();
    let checkpoint = paused.checkpoint.clone().unwrap();
    let (id, pause) = child_pauses(paused.interrupts()).remove(0);
    for wrong in [
        json!("approve"),
        pause.answer([(InterruptId::new("no-such-interrupt"), json!({}))]),
    ] {
        let refused = lead
            .resume(checkpoint.clone(), [(id.clone(), wrong.clone())])
            .await;
        assert!(refused.is_err(), "{wrong} was taken");
    }
    assert_eq!(runs.counts(), [1, 1, 0]);
}

/// Every model call counts, the children's included, once — across the pause too.
#[tokio::test]
async fn the_parents_usage_counts_the_childrens_model_calls_once() {
    let runs = Arc::new(Runs::default());
    let lead = lead(&runs, &["Pay INV-7."], None);
    let paused = lead.run("Settle the month.").await.unwrap();
    // The parent's first call and the child's two (`log`, then `pay`, which waits).
    assert_eq!(paused.usage.input_tokens, 10 + 2 * 100);
    let done = resume_deciding(&lead, &paused, false).await;
    // Two calls of the parent, three of the child.
    assert_eq!(done.usage.input_tokens, 2 * 10 + 3 * 100);
    assert_eq!(done.usage.output_tokens, 2 * 5 + 3 * 50);
}

/// A streamed parent's consumer gets the child's events, tagged with the call and the child;
/// the child's output becomes the call's result, not an event of the parent.
#[tokio::test]
async fn a_streamed_parent_forwards_the_childs_events_tagged() {
    let runs = Arc::new(Runs::default());
    let lead = lead(&runs, &["Pay INV-7."], None);
    let events: Vec<AgentEvent> = lead
        .stream("Settle the month.")
        .map(Result::unwrap)
        .collect()
        .await;
    let from_child: Vec<&SubAgentEvent> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::SubAgent(event) => Some(event),
            _ => None,
        })
        .collect();
    assert!(!from_child.is_empty(), "{events:#?}");
    assert!(
        from_child
            .iter()
            .all(|event| event.agent == "accountant" && event.call_id == "delegate-0")
    );
    assert!(
        from_child
            .iter()
            .any(|event| matches!(*event.event, AgentEvent::ToolCallFinished(_))),
        "the child's `log` finished: {from_child:#?}"
    );
    assert!(
        from_child
            .iter()
            .any(|event| matches!(*event.event, AgentEvent::Interrupted(_))),
        "the child paused: {from_child:#?}"
    );
    assert!(
        !from_child
            .iter()
            .any(|event| matches!(*event.event, AgentEvent::Output(_))),
        "{from_child:#?}"
    );
    let Some(AgentEvent::Output(output)) = events.last() else {
        panic!("{events:#?}");
    };
    assert_eq!(output.end, EndReason::Interrupted);
}

/// The tenant the run context names, or "none".
#[derive(Debug)]
struct Tenant(&'static str);

/// Says whose data this is.
#[hookchain::tool]
async fn tenant(cx: ToolContext<'_>) -> String {
    cx.get::<Tenant>()
        .map_or("none", |found| found.0)
        .to_owned()
}

fn tenant_reader() -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        Ok(
            match request.messages.iter().rfind(|m| m.role == Role::Tool) {
                Some(result) => ModelResponse::text(result.text().into_owned()),
                None => ModelResponse::tool_calls([ToolCall::new("t1", "tenant", json!({}))]),
            },
        )
    });
    Agent::builder(model)
        .name("reader")
        .tool(tenant)
        .build()
        .unwrap()
}

fn delegating_to(tool: impl Tool) -> Agent<ScriptedModel> {
    let model = ScriptedModel::from_rule(|request| {
        Ok(
            match request.messages.iter().rfind(|m| m.role == Role::Tool) {
                Some(result) => ModelResponse::text(result.text().into_owned()),
                None => ModelResponse::tool_calls([ToolCall::new(
                    "d1",
                    "delegate",
                    json!({"task": "Whose data is this?"}),
                )]),
            },
        )
    });
    Agent::builder(model).tool(tool).build().unwrap()
}

/// The parent's run context reaches the child, unless the tool isolates it.
#[tokio::test]
async fn run_context_values_reach_the_child_unless_isolated() {
    let context = || RunContext::new().with(Tenant("acme"));
    let inherit = delegating_to(tenant_reader().into_tool("delegate", "Reads.").unwrap());
    let output = inherit.with_context(context()).run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("acme"));

    let isolated = delegating_to(
        tenant_reader()
            .into_tool("delegate", "Reads.")
            .unwrap()
            .isolated_context(),
    );
    let output = isolated.with_context(context()).run("go").await.unwrap();
    assert_eq!(output.text().as_deref(), Some("none"));
}

/// Dropping the parent's run drops the child's, and the child's tool call with it.
#[tokio::test]
async fn cancelling_the_parent_cancels_the_child() {
    struct SetOnDrop(Arc<AtomicBool>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let started = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicBool::new(false));
    let (started_in, dropped_in) = (Arc::clone(&started), Arc::clone(&dropped));
    let hang = FnTool::new("hang", "Waits forever.", move |_: Value| {
        let guard = SetOnDrop(Arc::clone(&dropped_in));
        started_in.store(true, Ordering::SeqCst);
        async move {
            let _guard = guard;
            std::future::pending::<Result<String, ToolError>>().await
        }
    });
    let child = Agent::builder(ScriptedModel::new([ModelResponse::tool_calls([
        ToolCall::new("h1", "hang", json!({})),
    ])]))
    .tool(hang)
    .build()
    .unwrap();
    let parent = delegating_to(child.into_tool("delegate", "Hangs.").unwrap());
    let ran = tokio::time::timeout(Duration::from_millis(200), parent.run("go")).await;
    assert!(ran.is_err(), "the run should still hang: {ran:?}");
    assert!(started.load(Ordering::SeqCst));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the child's call was dropped with the parent"
    );
}

/// Agents calling agents stop at the depth limit: the call past it is refused, the model reads
/// why, and the agent past it never runs.
#[tokio::test]
async fn a_chain_of_agents_stops_at_the_depth_limit() {
    let leaf_calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&leaf_calls);
    let leaf = Agent::builder(ScriptedModel::from_rule(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(ModelResponse::text("leaf answer"))
    }))
    .name("leaf")
    .build()
    .unwrap();
    // top → middle is depth 1; middle → leaf would be depth 2.
    let middle = delegating_to(leaf.into_tool("delegate", "Leaf.").unwrap().max_depth(1));
    let top = delegating_to(middle.into_tool("delegate", "Middle.").unwrap());
    let output = top.run("go").await.unwrap();
    let text = output.text().unwrap();
    assert!(text.contains("past the limit of 1"), "{text}");
    assert_eq!(leaf_calls.load(Ordering::SeqCst), 0);

    // Within the limit, the leaf answers.
    let leaf = Agent::builder(ScriptedModel::new([ModelResponse::text("leaf answer")]))
        .build()
        .unwrap();
    let middle = delegating_to(leaf.into_tool("delegate", "Leaf.").unwrap());
    let top = delegating_to(middle.into_tool("delegate", "Middle.").unwrap());
    assert_eq!(
        top.run("go").await.unwrap().text().as_deref(),
        Some("leaf answer")
    );
}

/// A typed input (its schema is what the parent's model sees) and a typed output (the child's
/// structured answer, given to the parent's model as JSON).
#[tokio::test]
async fn typed_input_and_output() {
    #[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
    struct Invoice {
        /// The invoice's number.
        number: String,
        cents: u64,
    }
    #[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
    struct Verdict {
        approved: bool,
    }
    let child = Agent::builder(ScriptedModel::from_rule(|request| {
        let task = task_of(request);
        let approved = task.contains("\"cents\": 1200");
        Ok(ModelResponse::text(
            json!({ "approved": approved }).to_string(),
        ))
    }))
    .build()
    .unwrap();
    let tool: AgentTool<_, _, Invoice> = child
        .into_tool("review", "Reviews an invoice.")
        .unwrap()
        .input::<Invoice>()
        .output::<Verdict>();
    let spec = tool.spec();
    assert_eq!(spec.parameters["required"], json!(["number", "cents"]));
    let parent = Agent::builder(ScriptedModel::from_rule(|request| {
        Ok(
            match request.messages.iter().rfind(|m| m.role == Role::Tool) {
                Some(result) => ModelResponse::text(result.content.to_text_lossy().into_owned()),
                None => ModelResponse::tool_calls([ToolCall::new(
                    "r1",
                    "review",
                    json!({"number": "INV-7", "cents": 1200}),
                )]),
            },
        )
    }))
    .tool(tool)
    .build()
    .unwrap();
    let output = parent.run("Review INV-7").await.unwrap();
    let verdict: Value = serde_json::from_str(&output.text().unwrap()).unwrap();
    assert_eq!(verdict, json!({"approved": true}));
    let _ = Task::new("unused");
}

/// An agent that keeps its runs cannot be a tool: its runs are kept in its parent's.
#[test]
fn an_agent_with_a_checkpointer_cannot_be_a_tool() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .name("keeper")
        .checkpointer(
            Arc::new(hookchain::interrupt::InMemoryCheckpointer::new()),
            Durability::EveryStep,
        )
        .build()
        .unwrap();
    let error = agent.into_tool("keep", "Keeps.").unwrap_err();
    assert!(error.to_string().contains("keeper"), "{error}");
}

/// The parent's budgets count the children's model calls: a child that spends the budget stops
/// the parent's next model call.
#[tokio::test]
async fn the_parents_budget_counts_what_its_children_spent() {
    use hookchain::builtin::token_budget::{Budget, TokenBudget};
    let child = Agent::builder(ScriptedModel::new([
        ModelResponse::text("a long answer").with_usage(Usage::new(500, 400))
    ]))
    .build()
    .unwrap();
    let parent = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "delegate", json!({"task": "Write."}))])
            .with_usage(Usage::new(10, 5)),
        ModelResponse::text("never sent"),
    ]))
    .tool(child.into_tool("delegate", "Writes.").unwrap())
    .chain(
        TokenBudget::builder()
            .run(Budget::new().output_tokens(100))
            .build()
            .unwrap(),
    )
    .build()
    .unwrap();
    let output = parent.run("Write").await.unwrap();
    assert_eq!(output.end, EndReason::Jumped);
    assert_eq!(output.model_calls, 1);
    assert_eq!(output.usage.output_tokens, 405);
    assert!(
        output
            .text()
            .unwrap()
            .contains("output-token budget of 100"),
        "{:?}",
        output.text()
    );
}

/// The parent's `wrap_tool_call` middleware wrap a delegation as any call: an approval before
/// delegating (the child does not run until it is given), and a limit on delegations.
#[tokio::test]
async fn the_parents_middleware_gate_and_limit_delegations() {
    use hookchain::builtin::ToolCallLimit;
    let child_calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&child_calls);
    let child = Agent::builder(ScriptedModel::from_rule(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        Ok(ModelResponse::text("done"))
    }))
    .build()
    .unwrap();
    let parent = Agent::builder(ScriptedModel::from_rule(|request| {
        Ok(if support::tool_texts(&request.messages).is_empty() {
            ModelResponse::tool_calls([
                ToolCall::new("d1", "delegate", json!({"task": "One."})),
                ToolCall::new("d2", "delegate", json!({"task": "Two."})),
            ])
        } else {
            ModelResponse::text(support::tool_texts(&request.messages).join(" | "))
        })
    }))
    .tool(child.into_tool("delegate", "Does tasks.").unwrap())
    .chain(chain![
        HumanInTheLoop::new().interrupt_on("delegate", ToolPolicy::always()),
        ToolCallLimit::builder()
            .tool("delegate")
            .run_limit(1)
            .build()
            .unwrap()
    ])
    .build()
    .unwrap();
    let paused = parent.run("Go").await.unwrap();
    assert_eq!(paused.end, EndReason::Interrupted);
    assert_eq!(
        child_calls.load(Ordering::SeqCst),
        0,
        "not before the approval"
    );
    let checkpoint = paused.checkpoint.clone().unwrap();
    let answers = support::approve_all(&checkpoint);
    let done = parent.resume(checkpoint, answers).await.unwrap();
    assert_eq!(
        child_calls.load(Ordering::SeqCst),
        1,
        "one delegation, the limit"
    );
    let text = done.text().unwrap();
    assert!(text.starts_with("done | "), "{text}");
}

/// A child that pauses twice in one delegation (two approvals, one after the other): each
/// resume goes on from the child's latest pause — what was approved first runs once.
#[tokio::test]
async fn a_child_that_pauses_twice_goes_on_from_its_latest_pause() {
    let runs = Arc::new(Runs::default());
    let model = ScriptedModel::from_rule(|request| {
        Ok(match support::tool_texts(&request.messages).len() {
            0 => ModelResponse::tool_calls([ToolCall::new("p1", "pay", json!({}))]),
            1 => ModelResponse::tool_calls([ToolCall::new("l1", "log", json!({}))]),
            _ => ModelResponse::text("paid and logged"),
        })
    });
    let child = Agent::builder(model)
        .name("accountant")
        .tool(counting("pay", &runs, |runs| &runs.pay))
        .tool(counting("log", &runs, |runs| &runs.log))
        .chain(chain![
            HumanInTheLoop::new()
                .interrupt_on("pay", ToolPolicy::always())
                .interrupt_on("log", ToolPolicy::always())
        ])
        .build()
        .unwrap();
    let parent = delegating_to(child.into_tool("delegate", "Pays.").unwrap());
    let first = parent.run("go").await.unwrap();
    assert_eq!(first.end, EndReason::Interrupted);
    let second = parent
        .resume(
            first.checkpoint.clone().unwrap(),
            decide(first.interrupts(), false),
        )
        .await
        .unwrap();
    assert_eq!(
        second.end,
        EndReason::Interrupted,
        "the child asks about `log` now"
    );
    assert_eq!(runs.counts(), [0, 0, 1]);
    let pause = SubAgentPause::from_interrupt(&second.interrupts()[0]).unwrap();
    let asked = ApprovalRequest::from_interrupt(&pause.interrupts()[0]).unwrap();
    assert_eq!(asked.actions[0].name, "log");
    let done = parent
        .resume(
            second.checkpoint.clone().unwrap(),
            decide(second.interrupts(), false),
        )
        .await
        .unwrap();
    assert_eq!(done.end, EndReason::Finished, "{done:?}");
    assert_eq!(runs.counts(), [0, 1, 1], "pay once, log once");
    assert_eq!(done.text().as_deref(), Some("paid and logged"));
}

/// A delegation in a task of its own (`ToolExecution::Spawned`) counts the child's usage too:
/// the task's context hands it back when the call ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_delegation_counts_the_childs_usage() {
    let child = Agent::builder(ScriptedModel::new([
        ModelResponse::text("done").with_usage(Usage::new(300, 200))
    ]))
    .build()
    .unwrap();
    let parent = Agent::builder(ScriptedModel::new([
        ModelResponse::tool_calls([ToolCall::new("c1", "delegate", json!({"task": "Do."}))])
            .with_usage(Usage::new(10, 5)),
        ModelResponse::text("ok").with_usage(Usage::new(10, 5)),
    ]))
    .tool(child.into_tool("delegate", "Does.").unwrap())
    .tool_execution(hookchain::tool::ToolExecution::Spawned)
    .build()
    .unwrap();
    let output = parent.run("Go").await.unwrap();
    assert_eq!(output.usage.input_tokens, 320);
    assert_eq!(output.usage.output_tokens, 210);
}
