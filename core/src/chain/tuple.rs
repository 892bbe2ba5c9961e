//! `Middleware` for tuples: the flat, static chain.
//!
//! A tuple `(A, B, C)` runs the sequential hooks of all its members in one `async` block (no
//! future per member is nested in another), and builds the wrap onion inside out from only the
//! members whose `WrapsModel`/`WrapsTool` marker is [`True`](crate::middleware::True): a
//! non-wrapping member adds neither a layer nor a type to the onion. Tuples go up to 12 members
//! (the largest tuple whose state has a `Default`); `chain!` nests tuples for longer chains.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use crate::chain::{ChainChecks, Description, MemberList};
use crate::context::{Context, Enter, Order, ToolContext};
use crate::error::{BoxError, Error};
use crate::interrupt::Answer;
use crate::message::{ToolCall, ToolResult};
use crate::middleware::Internal;
use crate::middleware::{
    Contributions, Emit, EventRelay, Flow, Hook, HookSet, JumpSet, Middleware, ModelNext,
    ModelWrap, PhaseMarker, Splice, ToolNext, ToolWrap, check_jump, phase,
};
use crate::model::{ModelEvent, ModelRequest, ModelResponse};

/// The first of a list of types.
macro_rules! first {
    ($first:ident $(, $rest:ident)*) => {
        $first
    };
}

/// The type of the members' layers around `$N`, first member outermost.
macro_rules! layers {
    ($Wrap:ident, $assoc:ident, $N:ident; $M:ident) => {
        <<$M as Middleware>::$assoc as $Wrap<$M>>::Layer<'a, $N>
    };
    ($Wrap:ident, $assoc:ident, $N:ident; $M:ident, $($rest:ident),+) => {
        <<$M as Middleware>::$assoc as $Wrap<$M>>::Layer<'a, layers!($Wrap, $assoc, $N; $($rest),+)>
    };
}

/// Runs one member's sequential hook if it implements it (and, on a resumed step, if it did not
/// run before the interrupt), returning early on anything but `Flow::Continue` — except a
/// `Flow::Respond` in `after_model` (`replace $response`), which replaces the response and goes
/// on through the remaining hooks. `$call` is the hook's call: awaited, or its synchronous form.
macro_rules! run_hook {
    (
        $idx:tt : $M:ident,
        $kind:ident,
        $order:ident,
        $cx:ident,
        $call:expr
        $(; replace $response:ident)?
    ) => {
        if <$M as Middleware>::HOOKS.contains(Hook::$kind) {
            let start = <Self as Starts>::STARTS[$idx];
            let entered = $cx.enter(start, ChainChecks::<$M>::LEN, Order::$order);
            if entered != Enter::Skip {
                $cx.running = Some(<$M as Middleware>::NAME);
                let flow = $call
                    .map_err(|error| error.attribute(<$M as Middleware>::NAME, Hook::$kind))?;
                if entered == Enter::Resumed {
                    $cx.leave();
                }
                match flow {
                    Flow::Continue => {}
                    $(Flow::Respond(replacement) => *$response = *replacement,)?
                    flow => {
                        check_jump::<$M>(&flow, Hook::$kind)?;
                        return Ok(match flow {
                            Flow::Interrupt(interruption) => Flow::Interrupt(
                                interruption.leaving_member(start, <$M as Middleware>::NAME),
                            ),
                            flow => flow,
                        });
                    }
                }
            }
        }
    };
}

/// The call of a member's `before_model` or `after_model` inside the chain's future: its
/// synchronous form when it has one (nothing stored in the chain's future), else awaited.
macro_rules! sync_or_await {
    ($self:ident . $idx:tt : $M:ident, $kind:ident, $sync:ident, $hook:ident ($($arg:expr),*)) => {
        if <$M as Middleware>::SYNC_HOOKS.contains(Hook::$kind) {
            $self.$idx.$sync($($arg,)* Internal::new())
        } else {
            $self.$idx.$hook($($arg),*).await
        }
    };
}

/// The hooks that have a synchronous form ([`Middleware::SYNC_HOOKS`]).
const SYNC_CAPABLE: HookSet = HookSet::of(Hook::BeforeModel).with(Hook::AfterModel);

/// The hooks `M` runs synchronously or not at all: the chain can run them synchronously if
/// every member can.
const fn sync_or_absent(hooks: HookSet, sync: HookSet) -> HookSet {
    HookSet::ALL.difference(hooks).union(sync)
}

/// Where each member of a chain starts in the flattened chain: constants, so that the resume
/// bookkeeping costs nothing when the run is not resuming.
trait Starts {
    const STARTS: &'static [usize];
}

/// The running sums of `lens`, starting at 0.
const fn starts<const N: usize>(lens: [usize; N]) -> [usize; N] {
    let mut starts = [0; N];
    let mut i = 1;
    while i < N {
        starts[i] = starts[i - 1] + lens[i - 1];
        i += 1;
    }
    starts
}

macro_rules! tuple_chain {
    ([$($M:ident $s:ident $idx:tt),+], [$($RM:ident $rs:ident $ridx:tt),+]) => {
        impl<$($M: Middleware),+> Starts for ($($M,)+) {
            const STARTS: &'static [usize] = &starts([$(ChainChecks::<$M>::LEN),+]);
        }

        #[diagnostic::do_not_recommend]
        impl<$($M: Middleware),+> Middleware for ($($M,)+) {
            type State = ($($M::State,)+);
            type ThreadState = ($($M::ThreadState,)+);
            type StreamState = ($($M::StreamState,)+);
            type Phase = phase::Span<
                <<first!($($M),+) as Middleware>::Phase as PhaseMarker>::First,
                <<first!($($RM),+) as Middleware>::Phase as PhaseMarker>::Last,
            >;
            type WrapsModel = Splice;
            type WrapsTool = Splice;
            const NAME: &'static str = "chain";
            const HOOKS: HookSet = HookSet::NONE$(.union($M::HOOKS))+;
            const JUMPS: JumpSet = JumpSet::NONE$(.union($M::JUMPS))+;
            const MEMBERS: MemberList = MemberList::EMPTY$(.concat(&$M::MEMBERS))+;
            const SYNC_HOOKS: HookSet = SYNC_CAPABLE
                $(.intersection(sync_or_absent($M::HOOKS, $M::SYNC_HOOKS)))+;
            const LIVE_STREAM: bool = true $(&& <$M as Middleware>::LIVE_STREAM)+;

            // The members' relays, first listed innermost: the event enters at the last
            // member's, which emits into the one before it, down to `out`.
            #[inline]
            fn on_model_event<Out: Emit>(
                &self,
                state: &mut Self::StreamState,
                event: ModelEvent,
                out: &mut Out,
            ) -> Result<(), Error> {
                $(
                    let mut relay = EventRelay::new(&self.$idx, &mut state.$idx, out);
                    let out = &mut relay;
                )+
                out.emit(event)
            }

            fn before_agent(
                &self,
                cx: &mut Context,
                state: &mut Self::State,
                thread: &mut Self::ThreadState,
            ) -> impl Future<Output = Result<Flow, Error>> + Send {
                async move {
                    $(run_hook!(
                        $idx: $M, BeforeAgent, Listed, cx,
                        self.$idx.before_agent(cx, &mut state.$idx, &mut thread.$idx).await
                    );)+
                    Ok(Flow::Continue)
                }
            }

            fn before_model(
                &self,
                cx: &mut Context,
                state: &mut Self::State,
                thread: &mut Self::ThreadState,
                request: &mut ModelRequest,
            ) -> impl Future<Output = Result<Flow, Error>> + Send {
                async move {
                    $(run_hook!(
                        $idx: $M, BeforeModel, Listed, cx,
                        sync_or_await!(
                            self.$idx: $M, BeforeModel, before_model_sync,
                            before_model(cx, &mut state.$idx, &mut thread.$idx, request)
                        )
                    );)+
                    Ok(Flow::Continue)
                }
            }

            #[inline]
            fn before_model_sync(
                &self,
                cx: &mut Context,
                state: &mut Self::State,
                thread: &mut Self::ThreadState,
                request: &mut ModelRequest,
                internal: Internal,
            ) -> Result<Flow, Error> {
                $(run_hook!(
                    $idx: $M, BeforeModel, Listed, cx,
                    self.$idx.before_model_sync(
                        cx, &mut state.$idx, &mut thread.$idx, request, internal
                    )
                );)+
                Ok(Flow::Continue)
            }

            fn wrap_model_call<N: ModelNext>(
                &self,
                cx: &mut Context,
                state: &mut Self::State,
                thread: &mut Self::ThreadState,
                request: ModelRequest,
                next: N,
            ) -> impl Future<Output = Result<ModelResponse, Error>> + Send {
                async move {
                    let mut onion = <Splice as ModelWrap<Self>>::layer(self, state, thread, next);
                    onion.call(cx, request).await
                }
            }

            fn after_model(
                &self,
                cx: &mut Context,
                state: &mut Self::State,
                thread: &mut Self::ThreadState,
                response: &mut ModelResponse,
            ) -> impl Future<Output = Result<Flow, Error>> + Send {
                async move {
                    $(run_hook!(
                        $ridx: $RM, AfterModel, Reversed, cx,
                        sync_or_await!(
                            self.$ridx: $RM, AfterModel, after_model_sync,
                            after_model(cx, &mut state.$ridx, &mut thread.$ridx, response)
                        );
                        replace response
                    );)+
                    Ok(Flow::Continue)
                }
            }

            #[inline]
            fn after_model_sync(
                &self,
                cx: &mut Context,
                state: &mut Self::State,
                thread: &mut Self::ThreadState,
                response: &mut ModelResponse,
                internal: Internal,
            ) -> Result<Flow, Error> {
                $(run_hook!(
                    $ridx: $RM, AfterModel, Reversed, cx,
                    self.$ridx.after_model_sync(
                        cx, &mut state.$ridx, &mut thread.$ridx, response, internal
                    );
                    replace response
                );)+
                Ok(Flow::Continue)
            }

            // Called as a hook only when the chain is not spliced (inside an `Option`, say): its
            // members then sit from the calling layer's position on.
            fn wrap_tool_call<N: ToolNext>(
                &self,
                cx: ToolContext<'_>,
                state: &Self::State,
                thread: &Self::ThreadState,
                call: ToolCall,
                next: N,
            ) -> impl Future<Output = Result<ToolResult, Error>> + Send {
                async move {
                    let at = cx.member();
                    let mut onion = <Splice as ToolWrap<Self>>::layer(self, state, thread, at, next);
                    Ok(onion.call(cx, call).await)
                }
            }

            fn describe_into(&self, description: &mut Description) {
                $(self.$idx.describe_into(description);)+
            }

            fn members(internal: Internal) -> crate::interrupt::Members {
                crate::interrupt::Members::Chain(vec![$($M::members(internal)),+])
            }

            fn instance_members(&self, internal: Internal) -> crate::interrupt::Members {
                crate::interrupt::Members::Chain(vec![$(self.$idx.instance_members(internal)),+])
            }

            fn contribute(&self, to: &mut Contributions) {
                $(to.collect(&self.$idx);)+
            }

            fn check_answer_at(
                &self,
                at: usize,
                answer: &Answer<'_>,
                internal: Internal,
            ) -> Result<(), BoxError> {
                let starts = <Self as Starts>::STARTS;
                $(
                    if (starts[$idx]..starts[$idx] + ChainChecks::<$M>::LEN).contains(&at) {
                        return self.$idx.check_answer_at(at - starts[$idx], answer, internal);
                    }
                )+
                Ok(())
            }

            fn after_agent(
                &self,
                cx: &mut Context,
                state: &mut Self::State,
                thread: &mut Self::ThreadState,
            ) -> impl Future<Output = Result<(), Error>> + Send {
                async move {
                    // Every member's after_agent runs, even after one fails or panics; the first
                    // error wins.
                    let mut result = Ok(());
                    $(
                        if <$RM as Middleware>::HOOKS.contains(Hook::AfterAgent) {
                            cx.running = Some(<$RM as Middleware>::NAME);
                            let outcome = AssertUnwindSafe(
                                self.$ridx.after_agent(cx, &mut state.$ridx, &mut thread.$ridx),
                            )
                            .catch_unwind()
                            .await
                            .unwrap_or_else(|payload| {
                                let name = Some(<$RM as Middleware>::NAME);
                                Err(Error::panicked(name, Hook::AfterAgent, payload.as_ref()))
                            })
                            .map_err(|error| {
                                error.attribute(<$RM as Middleware>::NAME, Hook::AfterAgent)
                            });
                            if result.is_ok() {
                                result = outcome;
                            }
                        }
                    )+
                    result
                }
            }
        }

        /// Splices the members' layers into the enclosing onion, first member outermost.
        #[diagnostic::do_not_recommend]
        impl<$($M: Middleware),+> ModelWrap<($($M,)+)> for Splice {
            type Layer<'a, N: ModelNext> = layers!(ModelWrap, WrapsModel, N; $($M),+)
            where
                ($($M,)+): 'a;

            fn layer<'a, N: ModelNext>(
                chain: &'a ($($M,)+),
                state: &'a mut ($($M::State,)+),
                thread: &'a mut ($($M::ThreadState,)+),
                next: N,
            ) -> Self::Layer<'a, N>
            where
                ($($M,)+): 'a,
            {
                $(let next = <$RM::WrapsModel as ModelWrap<$RM>>::layer(
                    &chain.$ridx,
                    &mut state.$ridx,
                    &mut thread.$ridx,
                    next,
                );)+
                next
            }
        }

        /// Splices the members' layers into the enclosing onion, first member outermost.
        #[diagnostic::do_not_recommend]
        impl<$($M: Middleware),+> ToolWrap<($($M,)+)> for Splice {
            type Layer<'a, N: ToolNext> = layers!(ToolWrap, WrapsTool, N; $($M),+)
            where
                ($($M,)+): 'a;

            fn layer<'a, N: ToolNext>(
                chain: &'a ($($M,)+),
                state: &'a ($($M::State,)+),
                thread: &'a ($($M::ThreadState,)+),
                at: usize,
                next: N,
            ) -> Self::Layer<'a, N>
            where
                ($($M,)+): 'a,
            {
                let starts = <($($M,)+) as Starts>::STARTS;
                $(let next = <$RM::WrapsTool as ToolWrap<$RM>>::layer(
                    &chain.$ridx,
                    &state.$ridx,
                    &thread.$ridx,
                    at + starts[$ridx],
                    next,
                );)+
                next
            }
        }
    };
}

/// The empty chain: every hook passes through.
#[diagnostic::do_not_recommend]
impl Middleware for () {
    type State = ();
    type ThreadState = ();
    type StreamState = ();
    type Phase = phase::Any;
    type WrapsModel = crate::middleware::False;
    type WrapsTool = crate::middleware::False;
    const NAME: &'static str = "chain";
    const HOOKS: HookSet = HookSet::NONE;
    const JUMPS: JumpSet = JumpSet::NONE;
    const MEMBERS: MemberList = MemberList::EMPTY;

    fn describe_into(&self, _: &mut Description) {}

    fn members(_: Internal) -> crate::interrupt::Members {
        crate::interrupt::Members::Chain(Vec::new())
    }
}

tuple_chain!([A a 0], [A a 0]);
tuple_chain!([A a 0, B b 1], [B b 1, A a 0]);
tuple_chain!([A a 0, B b 1, C c 2], [C c 2, B b 1, A a 0]);
tuple_chain!([A a 0, B b 1, C c 2, D d 3], [D d 3, C c 2, B b 1, A a 0]);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4],
    [E e 4, D d 3, C c 2, B b 1, A a 0]
);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4, F f 5],
    [F f 5, E e 4, D d 3, C c 2, B b 1, A a 0]
);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6],
    [G g 6, F f 5, E e 4, D d 3, C c 2, B b 1, A a 0]
);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7],
    [H h 7, G g 6, F f 5, E e 4, D d 3, C c 2, B b 1, A a 0]
);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8],
    [I i 8, H h 7, G g 6, F f 5, E e 4, D d 3, C c 2, B b 1, A a 0]
);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9],
    [J j 9, I i 8, H h 7, G g 6, F f 5, E e 4, D d 3, C c 2, B b 1, A a 0]
);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10],
    [K k 10, J j 9, I i 8, H h 7, G g 6, F f 5, E e 4, D d 3, C c 2, B b 1, A a 0]
);
tuple_chain!(
    [A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11],
    [L l 11, K k 10, J j 9, I i 8, H h 7, G g 6, F f 5, E e 4, D d 3, C c 2, B b 1, A a 0]
);
