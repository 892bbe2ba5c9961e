//! The scenarios: each an agent (built anew for each worker), its input, the effects its tools
//! write to the ledger, and what its finished run shows.
//!
//! Every model and every tool yields at least once (`YieldOnce`), so that there are await points
//! inside them; each tool notes `start` before it acts and `done` after, and writes one ledger
//! row when it acts, between two yields:
//!
//! ```text
//! point <tool>:enter · yield · [flaky: fail once] · start · ledger row · point <tool>:acted · yield×n · done · "<effect> done"
//! ```

use hookchain::builtin::human_in_the_loop::{HumanInTheLoop, ToolPolicy};
use hookchain::builtin::retry::Jitter;
use hookchain::builtin::{ModelFallback, ModelRetry, ToolRetry};
use hookchain::model::ModelRouter;
use hookchain::prelude::*;
use hookchain::{Content, Durability, Model, ModelError, Role, Tool, ToolError, ToolSpec, chain};
use serde_json::json;

use super::ledger::{Note, Tag};
use super::schedule::{Effect, Scenario, Worker};
use crate::support::YieldOnce;

/// How many tool results `request` holds: the step a scripted rule is at.
fn results(request: &ModelRequest) -> usize {
    request
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .count()
}

/// A model that yields once (an await point inside the model call), then answers by `rule`.
pub(crate) struct Script<F> {
    tag: Tag,
    name: &'static str,
    rule: F,
}

impl<F> Script<F>
where
    F: Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync,
{
    pub(crate) fn new(tag: &Tag, name: &'static str, rule: F) -> Self {
        Script {
            tag: tag.clone(),
            name,
            rule,
        }
    }
}

impl<F> Model for Script<F>
where
    F: Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync,
{
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.tag
            .point(format!("{}:model@{}", self.name, results(&request)));
        YieldOnce::new().await;
        (self.rule)(&request)
    }
}

/// A tool with an effect: writes `<sid>/<name>` to the ledger under its call's idempotency key,
/// then answers `<sid>/<name> done`. `yields` more yields after it acted (a slow tool);
/// `flaky`: the schedule's first call fails before it acts (a transient error, retried).
pub(crate) struct EffectTool {
    tag: Tag,
    name: &'static str,
    yields: usize,
    flaky: bool,
}

impl EffectTool {
    pub(crate) fn new(tag: &Tag, name: &'static str) -> Self {
        EffectTool {
            tag: tag.clone(),
            name,
            yields: 1,
            flaky: false,
        }
    }

    fn slow(mut self, yields: usize) -> Self {
        self.yields = yields;
        self
    }

    fn flaky(mut self) -> Self {
        self.flaky = true;
        self
    }
}

impl Tool for EffectTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(self.name, "Acts on the world.", json!({ "type": "object" }))
    }

    async fn call(&self, cx: ToolContext<'_>, _: serde_json::Value) -> Result<Content, ToolError> {
        let (key, effect) = (cx.idempotency_key(), self.tag.effect(self.name));
        self.tag.point(format!("{}:enter", self.name));
        YieldOnce::new().await;
        if self.flaky && Tag::once(&self.tag.flaky_once) {
            return Err(ToolError::failed(self.name, "connection reset (transient)"));
        }
        self.tag.journal.note(Note::Start {
            effect: effect.clone(),
            key: key.clone(),
        });
        self.tag.ledger.act(&key, &effect).await;
        self.tag.point(format!("{}:acted", self.name));
        for _ in 0..self.yields {
            YieldOnce::new().await;
        }
        self.tag.journal.note(Note::Done {
            effect: effect.clone(),
            key,
        });
        Ok(format!("{effect} done").into())
    }
}

/// A call of `tool` with id `id`.
fn call(id: &str, tool: &str) -> ToolCall {
    ToolCall::new(id, tool, json!({}))
}

/// (1) Approval then payment: `reserve` (not gated), then `pay` (a person approves it:
/// `HumanInTheLoop`), then `notify`, then the answer. With `Pauses` the run to the pause is not
/// kept, so a crash there starts it over: `reserve` is then outside the promise.
pub(crate) struct Payment {
    pub(crate) durability: Durability,
    pub(crate) streamed: bool,
}

const PAYMENT_EFFECTS_EVERY_STEP: &[Effect] = &[
    Effect::promised("reserve"),
    Effect::promised("pay"),
    Effect::promised("notify"),
];
const PAYMENT_EFFECTS_PAUSES: &[Effect] = &[
    Effect::unpromised("reserve"),
    Effect::promised("pay"),
    Effect::promised("notify"),
];

impl Scenario for Payment {
    type M = Script<fn(&ModelRequest) -> Result<ModelResponse, ModelError>>;
    type C = HumanInTheLoop;

    fn name(&self) -> &'static str {
        match (self.streamed, self.durability) {
            (true, _) => "streamed approval",
            (false, Durability::Pauses) => "approval (Pauses)",
            _ => "approval then payment",
        }
    }

    fn agent(&self, worker: &Worker) -> Agent<Self::M, Self::C> {
        fn rule(request: &ModelRequest) -> Result<ModelResponse, ModelError> {
            Ok(match results(request) {
                0 => ModelResponse::tool_calls([call("c_reserve", "reserve")]),
                1 => ModelResponse::tool_calls([call("c_pay", "pay")]),
                2 => ModelResponse::tool_calls([call("c_notify", "notify")]),
                _ => ModelResponse::text("Paid."),
            })
        }
        let tag = &worker.tag;
        Agent::builder(Script::new(tag, "payer", rule as fn(&_) -> _))
            .tool(EffectTool::new(tag, "reserve"))
            .tool(EffectTool::new(tag, "pay"))
            .tool(EffectTool::new(tag, "notify"))
            .chain(HumanInTheLoop::new().interrupt_on("pay", ToolPolicy::always()))
            .checkpointer(worker.store.clone(), self.durability)
            .worker(worker.name.clone())
            .lease(super::LEASE)
            .build()
            .unwrap()
    }

    fn input(&self) -> &'static str {
        "Pay invoice INV-7."
    }

    fn streamed(&self) -> bool {
        self.streamed
    }

    fn effects(&self) -> &'static [Effect] {
        match self.durability {
            Durability::Pauses => PAYMENT_EFFECTS_PAUSES,
            _ => PAYMENT_EFFECTS_EVERY_STEP,
        }
    }

    fn visible(&self) -> &'static [&'static str] {
        &["reserve", "pay", "notify"]
    }

    fn final_text(&self) -> &'static str {
        "Paid."
    }
}

/// (2) Parallel tools in one step: `ship`, `bill` and the slow `archive` (many yields after it
/// acted), called at once; then the answer.
pub(crate) struct Parallel;

impl Scenario for Parallel {
    type M = Script<fn(&ModelRequest) -> Result<ModelResponse, ModelError>>;
    type C = ();

    fn name(&self) -> &'static str {
        "parallel tools"
    }

    fn agent(&self, worker: &Worker) -> Agent<Self::M, Self::C> {
        fn rule(request: &ModelRequest) -> Result<ModelResponse, ModelError> {
            Ok(match results(request) {
                0 => ModelResponse::tool_calls([
                    call("c_ship", "ship"),
                    call("c_bill", "bill"),
                    call("c_archive", "archive"),
                ]),
                _ => ModelResponse::text("All three done."),
            })
        }
        let tag = &worker.tag;
        Agent::builder(Script::new(tag, "clerk", rule as fn(&_) -> _))
            .tool(EffectTool::new(tag, "ship"))
            .tool(EffectTool::new(tag, "bill"))
            .tool(EffectTool::new(tag, "archive").slow(6))
            .checkpointer(worker.store.clone(), Durability::EveryStep)
            .worker(worker.name.clone())
            .lease(super::LEASE)
            .build()
            .unwrap()
    }

    fn input(&self) -> &'static str {
        "Ship, bill and archive order 42."
    }

    fn effects(&self) -> &'static [Effect] {
        const EFFECTS: &[Effect] = &[
            Effect::promised("ship"),
            Effect::promised("bill"),
            Effect::promised("archive"),
        ];
        EFFECTS
    }

    fn visible(&self) -> &'static [&'static str] {
        &["ship", "bill", "archive"]
    }

    fn final_text(&self) -> &'static str {
        "All three done."
    }
}

/// (3) A sub-agent with a pause inside: the lead delegates to `accounts` (the accountant agent
/// as a tool), whose `HumanInTheLoop` gates its `child_pay`; the lead then calls `notify`.
pub(crate) struct SubAgent;

type Rule = fn(&ModelRequest) -> Result<ModelResponse, ModelError>;

impl Scenario for SubAgent {
    type M = Script<Rule>;
    type C = ();

    fn name(&self) -> &'static str {
        "sub-agent pause"
    }

    fn agent(&self, worker: &Worker) -> Agent<Self::M, Self::C> {
        fn child_rule(request: &ModelRequest) -> Result<ModelResponse, ModelError> {
            Ok(match results(request) {
                0 => ModelResponse::tool_calls([call("p1", "child_pay")]),
                _ => ModelResponse::text("INV-7 is paid."),
            })
        }
        fn lead_rule(request: &ModelRequest) -> Result<ModelResponse, ModelError> {
            Ok(match results(request) {
                0 => ModelResponse::tool_calls([ToolCall::new(
                    "c_accounts",
                    "accounts",
                    json!({ "task": "Pay INV-7." }),
                )]),
                1 => ModelResponse::tool_calls([call("c_notify", "notify")]),
                _ => ModelResponse::text("Done: INV-7 is paid."),
            })
        }
        let tag = &worker.tag;
        let accountant = Agent::builder(Script::new(tag, "accountant", child_rule as Rule))
            .name("accountant")
            .tool(EffectTool::new(tag, "child_pay"))
            .chain(chain![
                HumanInTheLoop::new().interrupt_on("child_pay", ToolPolicy::always())
            ])
            .build()
            .unwrap();
        Agent::builder(Script::new(tag, "lead", lead_rule as Rule))
            .tool(
                accountant
                    .into_tool("accounts", "Handles invoices.")
                    .unwrap(),
            )
            .tool(EffectTool::new(tag, "notify"))
            .checkpointer(worker.store.clone(), Durability::EveryStep)
            .worker(worker.name.clone())
            .lease(super::LEASE)
            .build()
            .unwrap()
    }

    fn input(&self) -> &'static str {
        "Pay INV-7 through accounts, then notify."
    }

    fn effects(&self) -> &'static [Effect] {
        const EFFECTS: &[Effect] = &[Effect::promised("child_pay"), Effect::promised("notify")];
        EFFECTS
    }

    fn visible(&self) -> &'static [&'static str] {
        &["notify"]
    }

    fn final_text(&self) -> &'static str {
        "Done: INV-7 is paid."
    }
}

/// (4) Retry and fallback: the primary model is overloaded once (`ModelRetry` sends the call
/// again), then asks for `charge`, whose first call fails before it acts (`ToolRetry` runs it
/// again); the next step the primary fails for good and `ModelFallback` sends the request to
/// `backup`, which answers. Waits of 1 ms, on tokio's timer: await points of their own.
pub(crate) struct Resilient;

/// What `chain![fallback, retry, tool_retry]` is: a tuple, the first outermost.
type ResilientChain = (ModelFallback, ModelRetry, ToolRetry);

impl Scenario for Resilient {
    type M = ModelRouter<
        Script<Box<dyn Fn(&ModelRequest) -> Result<ModelResponse, ModelError> + Send + Sync>>,
    >;
    type C = ResilientChain;

    fn name(&self) -> &'static str {
        "retry and fallback"
    }

    fn agent(&self, worker: &Worker) -> Agent<Self::M, Self::C> {
        let tag = &worker.tag;
        let overloaded = tag.overloaded_once.clone();
        let primary = Script::new(
            tag,
            "primary",
            Box::new(move |request: &ModelRequest| match results(request) {
                0 if Tag::once(&overloaded) => Err(ModelError::overloaded("busy, try again")),
                0 => Ok(ModelResponse::tool_calls([call("c_charge", "charge")])),
                _ => Err(ModelError::other("the primary is down for this request")),
            }) as Box<dyn Fn(&_) -> _ + Send + Sync>,
        );
        let backup = Script::new(tag, "backup", |_: &ModelRequest| {
            Ok(ModelResponse::text("Charged."))
        });
        let router = ModelRouter::new(primary).route("backup", backup);
        let delay = std::time::Duration::from_millis(1);
        let chain: ResilientChain = chain![
            ModelFallback::builder().model("backup").build().unwrap(),
            ModelRetry::builder()
                .max_retries(2)
                .initial_delay(delay)
                .jitter(Jitter::None)
                .build()
                .unwrap(),
            ToolRetry::builder()
                .max_retries(2)
                .initial_delay(delay)
                .jitter(Jitter::None)
                .build()
                .unwrap(),
        ];
        Agent::builder(router)
            .tool(EffectTool::new(tag, "charge").flaky())
            .chain(chain)
            .checkpointer(worker.store.clone(), Durability::EveryStep)
            .worker(worker.name.clone())
            .lease(super::LEASE)
            .build()
            .unwrap()
    }

    fn input(&self) -> &'static str {
        "Charge the card on file."
    }

    fn effects(&self) -> &'static [Effect] {
        const EFFECTS: &[Effect] = &[Effect::promised("charge")];
        EFFECTS
    }

    fn visible(&self) -> &'static [&'static str] {
        &["charge"]
    }

    fn final_text(&self) -> &'static str {
        "Charged."
    }
}
