//! Middleware that contribute tools and system-prompt pieces (`Middleware::contribute`,
//! `#[contribute]`): added when the agent is built, in listing order, checked for clashes,
//! listed by `describe()`.

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
        .try_build()
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
        .try_build()
        .unwrap();
    assert_eq!(agent.system_prompt(), Some("Be polite."));
}

#[test]
fn a_disabled_option_contributes_nothing() {
    let off: Option<Clock> = None;
    let agent = Agent::builder(ScriptedModel::new([]))
        .chain((off, Some(Polite)))
        .try_build()
        .unwrap();
    assert!(agent.tools().is_empty());
    assert_eq!(agent.system_prompt(), Some("Be polite."));
}

#[test]
fn a_contributed_tool_whose_name_is_taken_is_an_error_at_build() {
    let taken = Agent::builder(ScriptedModel::new([]))
        .tool(clock)
        .chain(Clock)
        .try_build()
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
        .try_build()
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
