//! A 64-member chain (every member with a sequential hook, 16 of them also wrapping the model
//! call) builds with no `recursion_limit` attribute and runs every hook once per call: once
//! written by hand, once with the macros. CI also builds this file in release.

use std::sync::atomic::{AtomicUsize, Ordering};

use hookchain::middleware::{False, HookSet, True, phase};
use hookchain::prelude::*;

static BEFORE: AtomicUsize = AtomicUsize::new(0);
static AFTER: AtomicUsize = AtomicUsize::new(0);
static WRAPS: AtomicUsize = AtomicUsize::new(0);

/// Bumps a counter in `before_model`.
struct Before<const I: usize>;

impl<const I: usize> Middleware for Before<I> {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = False;
    type WrapsTool = False;
    const NAME: &'static str = "Before";
    const HOOKS: HookSet = HookSet::of(Hook::BeforeModel);

    async fn before_model(
        &self,
        _: &mut Context,
        _thread: &mut (),
        _: &mut (),
        _: &mut ModelRequest,
    ) -> Result<Flow, Error> {
        BEFORE.fetch_add(1, Ordering::Relaxed);
        Ok(Flow::Continue)
    }
}

/// Bumps a counter in `after_model` and wraps the model call.
struct AfterWrap<const I: usize>;

impl<const I: usize> Middleware for AfterWrap<I> {
    type State = u64;
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Wrap;
    type WrapsModel = True;
    type WrapsTool = False;
    const NAME: &'static str = "AfterWrap";
    const HOOKS: HookSet = HookSet::of(Hook::AfterModel).with(Hook::WrapModelCall);

    async fn wrap_model_call<N: ModelNext>(
        &self,
        cx: &mut Context,
        calls: &mut u64,
        _thread: &mut (),
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        WRAPS.fetch_add(1, Ordering::Relaxed);
        *calls += 1;
        next.call(cx, request).await
    }

    async fn after_model(
        &self,
        _: &mut Context,
        _: &mut u64,
        _thread: &mut (),
        _: &mut ModelResponse,
    ) -> Result<Flow, Error> {
        AFTER.fetch_add(1, Ordering::Relaxed);
        Ok(Flow::Continue)
    }
}

const fn b<const I: usize>() -> Before<I> {
    Before
}
const fn w<const I: usize>() -> AfterWrap<I> {
    AfterWrap
}

#[tokio::test]
async fn sixty_four_members_sixteen_wrapping() {
    // 48 `before_model` members and 16 wrapping members, in 6 nested groups.
    let chain = (
        (
            b::<0>(),
            b::<1>(),
            w::<2>(),
            b::<3>(),
            b::<4>(),
            w::<5>(),
            b::<6>(),
            b::<7>(),
            w::<8>(),
            b::<9>(),
            b::<10>(),
        ),
        (
            w::<11>(),
            b::<12>(),
            b::<13>(),
            w::<14>(),
            b::<15>(),
            b::<16>(),
            w::<17>(),
            b::<18>(),
            b::<19>(),
            b::<20>(),
            b::<21>(),
        ),
        (
            w::<22>(),
            b::<23>(),
            b::<24>(),
            w::<25>(),
            b::<26>(),
            b::<27>(),
            w::<28>(),
            b::<29>(),
            b::<30>(),
            b::<31>(),
            b::<32>(),
        ),
        (
            w::<33>(),
            b::<34>(),
            b::<35>(),
            w::<36>(),
            b::<37>(),
            b::<38>(),
            w::<39>(),
            b::<40>(),
            b::<41>(),
            b::<42>(),
            b::<43>(),
        ),
        (
            w::<44>(),
            b::<45>(),
            b::<46>(),
            w::<47>(),
            b::<48>(),
            b::<49>(),
            w::<50>(),
            b::<51>(),
            b::<52>(),
            b::<53>(),
        ),
        (
            w::<54>(),
            b::<55>(),
            b::<56>(),
            b::<57>(),
            b::<58>(),
            b::<59>(),
            b::<60>(),
            b::<61>(),
            b::<62>(),
            b::<63>(),
        ),
    );
    let model = ScriptedModel::new([ModelResponse::text("done")]);
    let agent = Agent::builder(model).chain(chain).build().unwrap();
    let output = tokio::spawn(async move { agent.run("hi").await })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(BEFORE.load(Ordering::Relaxed), 48);
    assert_eq!(WRAPS.load(Ordering::Relaxed), 16);
    assert_eq!(AFTER.load(Ordering::Relaxed), 16);
}

static MACRO_BEFORE: AtomicUsize = AtomicUsize::new(0);
static MACRO_WRAPS: AtomicUsize = AtomicUsize::new(0);

/// Bumps a counter in `before_model`; written with `#[hook]`.
#[hookchain::hook(before_model)]
fn count_before() {
    MACRO_BEFORE.fetch_add(1, Ordering::Relaxed);
}

/// Wraps the model call and reads the response; written with `#[middleware]`, generic so that
/// 16 distinct types take part.
struct Wrapping<const I: usize>;

#[hookchain::middleware(state = u64)]
impl<const I: usize> Wrapping<I> {
    #[hook(wrap_model_call)]
    async fn around(
        &self,
        cx: &mut Context,
        calls: &mut u64,
        request: ModelRequest,
        mut next: impl ModelNext,
    ) -> Result<ModelResponse, Error> {
        MACRO_WRAPS.fetch_add(1, Ordering::Relaxed);
        *calls += 1;
        next.call(cx, request).await
    }

    #[hook(after_model)]
    fn read(&self, response: &mut ModelResponse) {
        assert_eq!(response.message.content, "done");
    }
}

#[tokio::test]
async fn sixty_four_macro_members_sixteen_wrapping() {
    use hookchain::chain;
    let b = count_before;
    let chain = chain![
        b,
        b,
        Wrapping::<0>,
        b,
        b,
        Wrapping::<1>,
        b,
        b,
        Wrapping::<2>,
        b,
        b,
        Wrapping::<3>,
        b,
        b,
        Wrapping::<4>,
        b,
        b,
        Wrapping::<5>,
        b,
        b,
        Wrapping::<6>,
        b,
        b,
        Wrapping::<7>,
        b,
        b,
        Wrapping::<8>,
        b,
        b,
        Wrapping::<9>,
        b,
        b,
        Wrapping::<10>,
        b,
        b,
        Wrapping::<11>,
        b,
        b,
        Wrapping::<12>,
        b,
        b,
        Wrapping::<13>,
        b,
        b,
        Wrapping::<14>,
        b,
        b,
        Wrapping::<15>,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
        b,
    ];
    assert_eq!(chain.describe().members().len(), 64);
    let model = ScriptedModel::new([ModelResponse::text("done")]);
    let agent = Agent::builder(model).chain(chain).build().unwrap();
    let output = tokio::spawn(async move { agent.run("hi").await })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.text().as_deref(), Some("done"));
    assert_eq!(MACRO_BEFORE.load(Ordering::Relaxed), 48);
    assert_eq!(MACRO_WRAPS.load(Ordering::Relaxed), 16);
}
