//! `#[middleware]` on `impl Middleware for X`: the items the methods imply are added; the
//! items written stay as written.

use hookchain::middleware::{HookSet, Shareable, phase};
use hookchain::prelude::*;
use hookchain::{chain, middleware};

/// A wrap and an after hook, with a run state; the rest derived.
struct Retry;

#[middleware]
impl Middleware for Retry {
    type State = u32;

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        attempts: &mut u32,
        _thread: &mut (),
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        *attempts += 1;
        next.call(cx, request).await
    }

    async fn after_model(
        &self,
        _cx: &mut Context,
        _attempts: &mut u32,
        _thread: &mut (),
        _response: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        Ok(Flow::Continue)
    }
}

/// Generic, with its own name and phase.
struct Stamp<T>(T);

#[middleware]
impl<T: Shareable> Middleware for Stamp<T> {
    type Phase = phase::Input;
    const NAME: &'static str = "stamp";

    async fn before_model(
        &self,
        _cx: &mut Context,
        _state: &mut (),
        _thread: &mut (),
        request: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        request.system_prompt = Some("Be brief.".into());
        Ok(Flow::Continue)
    }
}

const _: () = {
    assert!(<Retry as Middleware>::HOOKS.contains(Hook::WrapModelCall));
    assert!(<Retry as Middleware>::HOOKS.contains(Hook::AfterModel));
    assert!(!<Retry as Middleware>::HOOKS.contains(Hook::BeforeModel));
    assert!(<Stamp<u8> as Middleware>::IDENTITY.is_some());
};

fn main() {
    let chain = chain![Stamp(1_u8), Retry];
    let description = chain.describe();
    assert_eq!(description.order(Hook::BeforeModel), ["stamp"]);
    assert_eq!(description.order(Hook::WrapModelCall), ["Retry"]);
    assert_eq!(<Stamp<u8> as Middleware>::HOOKS, HookSet::of(Hook::BeforeModel));
    futures::executor::block_on(async {
        let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi")]))
            .chain(chain)
            .build().unwrap();
        let output = agent.run("Hello").await.unwrap();
        assert_eq!(output.text().as_deref(), Some("Hi"));
        assert_eq!(agent.model().requests()[0].system_prompt.as_deref(), Some("Be brief."));
    });
}
