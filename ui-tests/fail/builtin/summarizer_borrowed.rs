// A summarizer model borrowed from a local: the middleware lives as long as the agent, so the
// model must be owned (or in an `Arc`). Refused once, at the builder call.
use hookchain::builtin::Summarization;
use hookchain::builtin::summarization::Trigger;
use hookchain::prelude::*;

fn main() {
    let summarizer = ScriptedModel::new([]);
    let summarization = Summarization::builder(&summarizer)
        .trigger(Trigger::messages(10))
        .build()
        .unwrap();
    let _agent = Agent::builder(ScriptedModel::new([]))
        .chain(summarization)
        .build()
        .unwrap();
}
