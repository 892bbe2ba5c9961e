//! A 64-member `chain!` of `#[middleware]` types (every member with a `before_model` or
//! `after_model` hook, 16 of them also wrapping the model call), with no `recursion_limit`
//! attribute, builds an agent that runs every hook once per model call.

use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::prelude::*;
use hookchain::{chain, middleware};

static BEFORE: AtomicUsize = AtomicUsize::new(0);
static AFTER: AtomicUsize = AtomicUsize::new(0);
static WRAPS: AtomicUsize = AtomicUsize::new(0);

/// Bumps a counter in `before_model`.
struct Before<const I: usize>;

#[middleware]
impl<const I: usize> Before<I> {
    #[hook(before_model)]
    fn before(&self) {
        BEFORE.fetch_add(1, Ordering::Relaxed);
    }
}

/// Bumps a counter in `after_model` and wraps the model call.
struct AfterWrap<const I: usize>;

#[middleware(state = u64)]
impl<const I: usize> AfterWrap<I> {
    #[hook(wrap_model_call)]
    async fn wrap(
        &self,
        cx: &mut Context,
        calls: &mut u64,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        WRAPS.fetch_add(1, Ordering::Relaxed);
        *calls += 1;
        next.call(cx, request).await
    }

    #[hook(after_model)]
    async fn after(&self, response: &mut ModelResponse) {
        AFTER.fetch_add(1, Ordering::Relaxed);
        let _ = response;
    }
}

fn main() {
    let chain = chain![
        Before::<0>,
        Before::<1>,
        Before::<2>,
        AfterWrap::<3>,
        Before::<4>,
        Before::<5>,
        Before::<6>,
        AfterWrap::<7>,
        Before::<8>,
        Before::<9>,
        Before::<10>,
        AfterWrap::<11>,
        Before::<12>,
        Before::<13>,
        Before::<14>,
        AfterWrap::<15>,
        Before::<16>,
        Before::<17>,
        Before::<18>,
        AfterWrap::<19>,
        Before::<20>,
        Before::<21>,
        Before::<22>,
        AfterWrap::<23>,
        Before::<24>,
        Before::<25>,
        Before::<26>,
        AfterWrap::<27>,
        Before::<28>,
        Before::<29>,
        Before::<30>,
        AfterWrap::<31>,
        Before::<32>,
        Before::<33>,
        Before::<34>,
        AfterWrap::<35>,
        Before::<36>,
        Before::<37>,
        Before::<38>,
        AfterWrap::<39>,
        Before::<40>,
        Before::<41>,
        Before::<42>,
        AfterWrap::<43>,
        Before::<44>,
        Before::<45>,
        Before::<46>,
        AfterWrap::<47>,
        Before::<48>,
        Before::<49>,
        Before::<50>,
        AfterWrap::<51>,
        Before::<52>,
        Before::<53>,
        Before::<54>,
        AfterWrap::<55>,
        Before::<56>,
        Before::<57>,
        Before::<58>,
        AfterWrap::<59>,
        Before::<60>,
        Before::<61>,
        Before::<62>,
        AfterWrap::<63>,
    ];
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hello")]))
        .chain(chain)
        .build().unwrap();
    let output = futures::executor::block_on(agent.run("hi")).unwrap();
    assert_eq!(output.text().as_deref(), Some("hello"));
    assert_eq!(BEFORE.load(Ordering::Relaxed), 48);
    assert_eq!(AFTER.load(Ordering::Relaxed), 16);
    assert_eq!(WRAPS.load(Ordering::Relaxed), 16);
}
