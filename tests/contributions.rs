//! Middleware that contribute tools and system-prompt pieces (`Middleware::contribute`,
//! `#[contribute]`): added when the agent is built, in listing order, checked for clashes,
//! listed by `describe()`; and every other configuration `build()` refuses, so that a
//! misconfigured agent fails at startup rather than on its first request.

use hookchain::agent::AgentBuildError;
use hookchain::middleware::Contributions;
use hookchain::prelude::*;
use hookchain::{chain, middleware, tool};

/// Tells the time.
#[tool]
async fn clock() -> String {
    "12:00".to_owned()
}

/// Gives the agent a clock.
#[derive(Debug)]
struct Clock;

#[middleware]
impl Clock {
    #[contribute]
    fn contribute(&self, to: &mut Contributions) {
        to.tool(clock).system_prompt("Call `clock` for the time.");
    }
}

/// A prompt piece, and a hook.
#[derive(Debug)]
struct Polite;

#[middleware]
impl Polite {
    #[hook(before_model)]
    fn nothing(&self) {}

    #[contribute]
    fn contribute(&self, to: &mut Contributions) {
        to.system_prompt("Be polite.");
    }
}

#[test]
fn pieces_follow_the_agents_prompt_in_listing_order_through_nested_chains() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .system_prompt("You help.")
        .chain(chain![Polite, (Clock,)])
        .build()
        .unwrap();
    assert_eq!(
        agent.system_prompt(),
        Some("You help.\n\nBe polite.\n\nCall `clock` for the time.")
    );
    assert!(agent.tools().spec("clock").is_some());
}

#[test]
fn without_a_prompt_of_its_own_the_agents_prompt_is_the_pieces() {
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain(Polite)
        .build()
        .unwrap();
    assert_eq!(agent.system_prompt(), Some("Be polite."));
}

#[test]
fn a_disabled_option_contributes_nothing() {
    let off: Option<Clock> = None;
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain((off, Some(Polite)))
        .build()
        .unwrap();
    assert!(agent.tools().is_empty());
    assert_eq!(agent.system_prompt(), Some("Be polite."));
}

#[test]
fn a_contributed_tool_whose_name_is_taken_is_an_error_at_build() {
    let taken = Agent::builder(ScriptedModel::new([]))
        .tool(clock)
        .chain(Clock)
        .build()
        .unwrap_err();
    assert_eq!(
        taken,
        AgentBuildError::ToolTaken {
            tool: "clock".into(),
            middleware: "Clock"
        }
    );
    assert!(taken.to_string().contains("rename one of them"));
    let twice = Agent::builder(ScriptedModel::new([]))
        .chain(chain![Clock, Polite, Clock])
        .build()
        .unwrap_err();
    assert!(matches!(
        twice,
        AgentBuildError::ToolContributedTwice { .. }
    ));
}

#[test]
fn describe_lists_the_contributions() {
    let description = chain![Polite, Clock].describe();
    assert_eq!(description.tools(), ["clock"]);
    assert_eq!(
        description.to_string(),
        "before_model: Polite (wrap)\n\
         system prompt: Polite (10 bytes)\n\
         tool: clock (Clock)\n\
         system prompt: Clock (26 bytes)\n"
    );
}

/// Tells the time too, under the same name.
#[tool(name = "clock")]
async fn other_clock() -> String {
    "noon".to_owned()
}

#[test]
fn two_tools_of_one_name_are_an_error_at_build_not_one_silently_replacing_the_other() {
    let twice = Agent::builder(ScriptedModel::new([]))
        .tool(clock)
        .tool(other_clock)
        .build();
    assert_eq!(
        twice.unwrap_err(),
        AgentBuildError::ToolRegisteredTwice {
            tool: "clock".into()
        }
    );
    // Also through a registry given whole.
    let registry = hookchain::ToolRegistry::new().with(clock).with(other_clock);
    assert_eq!(registry.registered_twice(), Some("clock"));
    let error = Agent::builder(ScriptedModel::new([]))
        .tools(registry)
        .build()
        .unwrap_err();
    assert!(
        error.to_string().contains("two tools are named `clock`"),
        "{error}"
    );
}

#[test]
fn no_steps_is_an_error_at_build() {
    let error = Agent::builder(ScriptedModel::new([]))
        .max_steps(0)
        .build()
        .unwrap_err();
    assert_eq!(error, AgentBuildError::NoSteps);
}

#[test]
fn a_zero_lease_is_an_error_at_build_only_with_a_store() {
    use hookchain::Durability;
    use hookchain::interrupt::InMemoryCheckpointer;
    use std::time::Duration;
    let error = Agent::builder(ScriptedModel::new([]))
        .checkpointer(InMemoryCheckpointer::new(), Durability::EveryStep)
        .lease(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(error, AgentBuildError::ZeroLease);
    // Without a store, a lease is never taken.
    assert!(
        Agent::builder(ScriptedModel::new([]))
            .lease(Duration::ZERO)
            .build()
            .is_ok()
    );
}

#[test]
fn a_build_error_converts_into_the_crates_error_for_question_mark() {
    fn build() -> Result<Agent<ScriptedModel>, Error> {
        Ok(Agent::builder(ScriptedModel::new([]))
            .max_steps(0)
            .build()?)
    }
    assert!(matches!(build(), Err(Error::Build(error)) if *error == AgentBuildError::NoSteps));
}
