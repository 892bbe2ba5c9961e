//! Variant (c): the work of (b) written by hand, with no framework — the limit.
//!
//! The counter bumps and the response reads are inline in one `async fn` ([`hand_10`] and its
//! siblings); the wraps are `N` hand-written nested `async fn`s, each calling the next
//! ([`w10`] calls [`w9`] … calls [`w0`], the model call) — the onion a user would write by hand.
//! They pass the same `&mut Context` and `ModelRequest` as hookchain's wraps.

use std::future::Future;
use std::hint::black_box;

use hookchain::prelude::*;

use crate::fixtures::answer;

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
