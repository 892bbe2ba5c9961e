//! Variant (c): the work of (b) written by hand, with no framework — the limit.
//!
//! The counter bumps and the response reads are inline in one `async fn` ([`hand_10`] and its
//! siblings); the wraps are `N` hand-written nested `async fn`s, each calling the next
//! ([`w10`] calls [`w9`] … calls [`w0`], the model call) — the onion a user would write by hand.
//! They pass the same `&mut Context` and `ModelRequest` as hookchain's wraps.

use std::future::Future;
use std::hint::black_box;

use hookchain::prelude::*;

use crate::fixtures::{Answer, answer};

/// The innermost call: the model itself (no wrap).
#[inline]
pub fn w0(
    _cx: &mut Context,
    request: ModelRequest,
) -> impl Future<Output = Result<ModelResponse, Error>> + Send + use<> {
    answer(request)
}

/// `wN` is a pass-through wrap that awaits `w(N-1)`.
macro_rules! wraps {
    ($inner:ident) => {};
    ($inner:ident, $outer:ident $(, $rest:ident)*) => {
        #[doc = concat!("A pass-through wrap around [`", stringify!($inner), "`].")]
        pub async fn $outer(cx: &mut Context, request: ModelRequest) -> Result<ModelResponse, Error> {
            $inner(cx, request).await
        }
        wraps!($outer $(, $rest)*);
    };
}

wraps!(
    w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15, w16, w17, w18, w19, w20,
    w21, w22, w23, w24, w25, w26, w27, w28, w29, w30, w31, w32
);

/// `hand_N`: N counter bumps, the onion of N wraps, N response reads, in one `async fn`.
macro_rules! hand {
    ($name:ident, $n:literal, $wrap:ident) => {
        #[doc = concat!("(c) at N = ", stringify!($n), ".")]
        pub async fn $name(
            cx: &mut Context,
            counts: &mut [u64; $n],
        ) -> Result<ModelResponse, Error> {
            let request = crate::fixtures::empty_request();
            for count in counts.iter_mut() {
                *count += 1;
            }
            let response = $wrap(cx, request).await?;
            for _ in 0..counts.len() {
                black_box(response.message.text().len());
            }
            Ok(response)
        }
    };
}

hand!(hand_0, 0, w0);
hand!(hand_1, 1, w1);
hand!(hand_5, 5, w5);
hand!(hand_10, 10, w10);
hand!(hand_32, 32, w32);

/// The sequential-hooks baseline: 10 counter bumps and the model call, inline in one `async fn`.
pub async fn inline_bumps_10(
    cx: &mut Context,
    counts: &mut [u64; 10],
) -> Result<ModelResponse, Error> {
    let request = crate::fixtures::empty_request();
    for count in counts.iter_mut() {
        *count += 1;
    }
    w0(cx, request).await
}

/// A hand-written onion layer with a `next` it can call again (retry, fallback), as every
/// middleware onion's `next` must be: it holds the inner layers by value and calls them
/// through `&mut`, the shape of hookchain's layers without a chain, a member or a macro.
#[derive(Debug, Clone, Copy, Default)]
pub struct NextLayer<N>(pub N);

impl<N: ModelNext> ModelNext for NextLayer<N> {
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        let next = &mut self.0;
        async move { next.call(cx, request).await }
    }
}

/// `c10_next`: [`hand_10`] with its ten wraps as [`NextLayer`]s around the model, each calling
/// its `next` through `&mut` (the `wN`s call each other directly and cannot call again).
pub async fn hand_next_10(
    cx: &mut Context,
    counts: &mut [u64; 10],
) -> Result<ModelResponse, Error> {
    let request = crate::fixtures::empty_request();
    for count in counts.iter_mut() {
        *count += 1;
    }
    let mut onion = NextLayer(NextLayer(NextLayer(NextLayer(NextLayer(NextLayer(
        NextLayer(NextLayer(NextLayer(NextLayer(Answer)))),
    ))))));
    let response = onion.call(cx, request).await?;
    for _ in 0..counts.len() {
        black_box(response.message.text().len());
    }
    Ok(response)
}

/// A hand-written member whose wrap is a method given what a chain's layer hands its member:
/// the member itself, its state and its thread's state, beside the request and `next`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Passing;

impl Passing {
    async fn wrap<N: ModelNext>(
        &self,
        cx: &mut Context,
        _state: &mut u64,
        _thread: &mut (),
        request: ModelRequest,
        mut next: N,
    ) -> Result<ModelResponse, Error> {
        next.call(cx, request).await
    }
}

/// A [`NextLayer`] that also holds its member and the member's states, as hookchain's
/// `ModelLayer` does, and calls the member's wrap with them.
#[derive(Debug)]
pub struct StateLayer<'a, N> {
    member: &'a Passing,
    state: &'a mut u64,
    thread: &'a mut (),
    next: N,
}

impl<N: ModelNext> ModelNext for StateLayer<'_, N> {
    fn call(
        &mut self,
        cx: &mut Context,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
        self.member
            .wrap(cx, self.state, self.thread, request, &mut self.next)
    }
}

/// `c10_state`: [`hand_next_10`] with each layer a [`StateLayer`]: ten members each handed its
/// state (the counter it bumps) and its thread's state, the shape of a chain's onion written by
/// hand.
pub async fn hand_state_10(
    cx: &mut Context,
    counts: &mut [u64; 10],
) -> Result<ModelResponse, Error> {
    let request = crate::fixtures::empty_request();
    for count in counts.iter_mut() {
        *count += 1;
    }
    let member = &Passing;
    let mut threads = [(); 10];
    let [s0, s1, s2, s3, s4, s5, s6, s7, s8, s9] = counts;
    let [t0, t1, t2, t3, t4, t5, t6, t7, t8, t9] = &mut threads;
    macro_rules! layer {
        ($state:ident, $thread:ident, $next:expr) => {
            StateLayer {
                member,
                state: $state,
                thread: $thread,
                next: $next,
            }
        };
    }
    let mut onion = layer!(
        s0,
        t0,
        layer!(
            s1,
            t1,
            layer!(
                s2,
                t2,
                layer!(
                    s3,
                    t3,
                    layer!(
                        s4,
                        t4,
                        layer!(
                            s5,
                            t5,
                            layer!(
                                s6,
                                t6,
                                layer!(s7, t7, layer!(s8, t8, layer!(s9, t9, Answer)))
                            )
                        )
                    )
                )
            )
        )
    );
    let response = onion.call(cx, request).await?;
    for _ in 0..10 {
        black_box(response.message.text().len());
    }
    Ok(response)
}
