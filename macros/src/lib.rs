//! Procedural macros of [hookchain](https://docs.rs/hookchain): `#[hook]`, `#[middleware]`,
//! `chain!` and `#[tool]`.
//!
//! Use them through the `hookchain` crate, which re-exports them; the generated code names only
//! `::hookchain::__private`, so this crate is not meant to be depended on directly. Set
//! `HOOKCHAIN_MACROS_DEBUG=1` to print every expansion.
//!
//! # Mistakes the compiler explains
//!
//! A misuse is one error in `cargo check`, at the token to change, saying what to write instead
//! (each has a case in `ui-tests/fail/`). Some of them, in short:
//!
//! | Mistake | What the compiler says |
//! |---|---|
//! | a hook returns `String`, `usize`, `&str`, `Option<Flow>`, a type of one's own… | it is not a return type this hook can have; the ones it can |
//! | an `on_model_event` or `after_agent` hook returns `Flow` | return `()` or `Result<(), E>` |
//! | `state = T` or `thread_state = T` with `T` missing a bound | `T` is not `Default` (or `Serialize`, `Deserialize`, `Clone`, `Send`, `Sync`), why a state needs it, and the derive to add |
//! | `state = u32, thread_state = u32` | they must be distinct types: wrap one in a newtype |
//! | a hook takes `&mut u64` when the state is `u32` | take it as `&mut u32` (`&u32` in `wrap_tool_call`) |
//! | `after = String` (not a middleware) in a constraint | it cannot be named there: constraints name middleware types |
//! | a `#[check_answer]` method returns `bool` | return `Result<(), E>`: `Ok(())` accepts, `Err(reason)` refuses |
//! | a `#[tool]` argument that is not `Deserialize` or `JsonSchema` | which one it misses, and the derives to add |
//! | a `#[tool]` result that is not `Serialize` (or a `Result` whose `Ok` type is not) | the type that is not `serde::Serialize`; a `String` is read as text |
//! | a `#[tool]` returning a type of one's own named `Content` | it must be hookchain's `Content`: rename, or alias |
//! | a `#[tool]` taking `cx: &mut Context` | take `cx: ToolContext<'_>` (a `&mut Context` is a hook's) |
//! | `#[tool(blocking)]` on an `async fn` | drop `async` (the body is a plain `fn` that may block), or drop `blocking` |
//! | a `#[tool(blocking)]` taking a `ToolContext` | it borrows the run: an `async fn` tool that takes what it needs of the context and calls `spawn_blocking` itself |
//! | a `#[tool(blocking)]` argument or result that is not `Send`, or an impl block whose type is not `Clone` | the type, why it must be (it crosses to the blocking thread; each call gets a clone), and the fix |
//! | `.tool(plain_async_fn)`, `.tool((a, b))` | not a tool: mark it `#[tool]`, wrap a closure in `FnTool::new`, one tool per call |
//! | `chain![ModelRetry::builder()]`, `.chain(x.build())`, `.chain(option_of_result)` | not a middleware: `.build()?`, `?` on a `Result`, `.transpose()?` on an `Option<Result<..>>` |
//! | `Agent::builder("gpt-4o-mini")` | not a model: a provider's client, `ScriptedModel`, … |
//! | `chain![redact, audit]` with `redact` an Output middleware and `audit` a Wrap one | `audit` cannot be listed after `redact`: Input middleware first, then Wrap, then Output |
//! | `.chain(a).chain(b)` | this agent already has a middleware chain: list every middleware in one call |
//! | `state = T` with `T` holding a `RefCell`, a `Cell` or an `Rc` | `T` must be `Send + Sync` and is not `Sync` (or `Send`): a `Mutex`, an atomic, or no cell |
//! | `#[middleware] impl Middleware for X` whose `HOOKS` leaves out a wrap it overrides (or says a wrap it has not), or an Input / Output impl with a hook of the other side | at the `HOOKS`, marker or `Phase` item written: the rule it breaks and what to set |
//! | a hand-written `impl Middleware` (without `#[middleware]`) breaking the same rules | `cargo build` (not `cargo check`: the check runs after monomorphization) fails with one short message naming the middleware, the rule and the fix |
//! | a hand-written impl with `type Phase = Phase;` (the enum) or `type WrapsModel = bool;` | not a phase type: `phase::Input`, `phase::Wrap` or `phase::Output`; not what `WrapsModel` can be: `True` or `False` |
//! | `.checkpointer(&store, ..)`, a path, another type | not a checkpointer: the checkpointers there are, an `Arc` to share one, `Arc<dyn DynCheckpointer>` to choose one at run time |
//! | `run_in_store(&Mutex<Store>, ..)`, another type | not a thread store: the stores there are, an `Arc` to share one |
//! | `agent.stream("Hi").await` | an agent's stream is read event by event, not awaited: read the events with `StreamExt::next` (`TryStreamExt::try_next`), or `agent.run(input).await` for the output alone |
//! | `agent.stream_in_owned(thread, "Hi").await` | a thread's stream is read event by event, not awaited: read the events, then `stream.into_thread().await` for the thread; `run_in` for the output alone |
//! | `ToolResultCache::builder().store(HashMap::new())` | not a store of tool results: `InMemoryCache`, an `Arc` of a store, `impl CacheStore` |
//! | `.token_counter(\|message\| ..)` (a closure) | not a token counter: `ApproximateCounter`, `TiktokenCounter`, a type with `impl TokenCounter` |
//! | `ToolRegistry::new().with_source(tool)` | one tool goes in `.register(tool)` / `.with(tool)`; a source is a set that changes |
//!
//! Wrong types that only the compiler can tell (a state's or a tool argument's bounds, a hook's
//! return type of the user's own, a state parameter's type, a constraint's type, a hand-written
//! impl's own rules under `#[middleware]`) are reported by a `const` that fails with the message
//! above, as `error[E0080]: evaluation panicked: …`, at the user's token. A value of the wrong
//! type handed to the builder is reported by the trait it must implement (`Middleware`, `Tool`,
//! `Model`, `Checkpointer`, `ThreadStore`, `CacheStore`, `TokenCounter`, `ToolSource`), whose
//! message names the usual fixes; rustc adds one line "the trait `…` is not implemented for `…`",
//! always, and a note pointing at the builder method's bound. A method declared `async fn` (the
//! thread-store methods of `Agent`, `run`) reports its argument's bound three times (at the
//! argument, the call and the `.await`): the future captures the argument's type, and rustc
//! checks the bound at each place. A hand-written store, model or tool (`impl ThreadStore`,
//! `Checkpointer`, `CacheStore`, `Model`, `Tool`) whose type is not `Sync` (a `RefCell`, a
//! `Cell`) is one error, rustc's, at the impl, naming the field: each trait method returning a
//! future has `where Self: Sync` (implied by the supertrait), so its check assumes it instead of
//! adding one error per method. So is a middleware that is not `Sync` (a `Cell` field under
//! `#[middleware]`): `Middleware`'s hooks have the same bound, and the methods the macro writes
//! assume `&Self: Send`.
//!
//! ## Mistakes rustc explains in its own words
//!
//! These could not be improved on stable Rust (1.95); each has a case in `ui-tests/fail/` that
//! records what rustc says, and the experiment tried:
//!
//! | Mistake | What the compiler says | The fix | Why not better |
//! |---|---|---|---|
//! | `agent.run(&mut thread, "Hi")` | first, at the thread: it is not what a run starts from, and a run in a thread is `agent.run_in(&mut thread, input)`; then rustc's E0061 "remove the extra argument", and the input's bound again at the call and the `.await` (4 errors) | `agent.run_in(&mut thread, "Hi")` | rustc counts arguments before any bound, and no attribute changes E0061; `run`'s future captures the input's type, so rustc checks the input's bound again where the future is named. The input is `impl IntoRunInput` (every `Into<RunInput>`) so that the first error names `run_in`. Tried: a plain `fn` returning `impl Future + use<'_, M, C>` (refused: an `impl` argument's type cannot be left out of `use<..>`); one returning `impl Future` (the same 4 errors); a named return type with a boxed future (2 errors, at an allocation and a dynamic poll per run: not taken); an unboxed named future needs `impl Trait` in an associated type (unstable); an input impl for `&mut Thread` (E0061 alone, whose help then suggests `run(&mut thread)`) |
//! | `Vec<Box<dyn Middleware>>` | E0038 "the trait `Middleware` is not dyn compatible" "because it requires `Self: Sized`" (9 lines; `Sized` is a supertrait of `Middleware`, which exempts every item of the trait from the list rustc gave before, 19 reasons in 66 lines) | `hookchain::plugin`: `PluginRegistry`, or `Plugins::new(vec![plugin::boxed(m), …])` (`Box<dyn DynMiddleware>`) | rustc has no attribute for dyn compatibility errors (`on_unimplemented` is for unmet bounds) and shows no note of the trait's author, so the error cannot name `hookchain::plugin`; the trait's shape (generic, allocation-free hooks) is what makes chains static |
//! | a `std::sync::MutexGuard` (or an `Rc`, a `RefCell` borrow) held across an `.await` in an `async` hook | "future cannot be sent between threads safely" at the hook's `-> T`, naming the value held and the `.await`, with a help line "within `impl Future<Output = Result<ModelResponse, Error>>`" (the hook's future, by what it returns) | end the guard's scope before the `.await` (a block), or an async mutex (`tokio::sync::Mutex`) | `Send` is an auto trait of std's: its message cannot be changed, and the hook's future must be `Send` where the trait method returns it. Tried: a `Send` check of our own on the user's future, with `on_unimplemented` — rustc then reports it and the trait method's `Send` as two errors, and ours loses the note naming the value held across the `.await` |

#![forbid(unsafe_code)]

mod attr;
mod chain;
mod check;
mod ctxt;
mod fallback;
mod fn_item;
mod hook;
mod jumps;
mod kinds;
mod middleware;
mod private;
mod signature;
mod tool;
mod trait_impl;

use proc_macro::TokenStream;

/// Turns a function into a middleware with one hook.
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{chain, hook};
///
/// /// Tells the model the date.
/// #[hook(before_model, phase = input)]
/// fn stamp(request: &mut ModelRequest) {
///     request.system_prompt = Some("Today is 2026-11-22.".into());
/// }
///
/// // A middleware, by the function's name:
/// let chain = chain![stamp];
/// // And still a function, as `name::call`:
/// let mut request = ModelRequest::default();
/// stamp::call(&mut request);
/// assert!(request.system_prompt.is_some());
/// ```
///
/// # Hooks and their parameters
///
/// The first argument names the hook. The function's parameters are recognised by their types,
/// in any order, and each is optional:
///
/// | hook              | parameters                                                                  | returns |
/// |-------------------|-----------------------------------------------------------------------------|---------|
/// | `before_agent`    | `&mut Context`, `&mut S`, `&mut T`                                          | `()`, `Flow`, `Result<(), E>`, `Result<Flow, E>` |
/// | `before_model`    | `&mut Context`, `&mut S`, `&mut T`, `&mut ModelRequest`                     | same |
/// | `wrap_model_call` | `&mut Context`, `&mut S`, `&mut T`, `ModelRequest`, `next: impl ModelNext`  | `ModelResponse`, `Result<ModelResponse, E>` |
/// | `after_model`     | `&mut Context`, `&mut S`, `&mut T`, `&mut ModelResponse`                    | `()`, `Flow`, `Result<(), E>`, `Result<Flow, E>` |
/// | `wrap_tool_call`  | `ToolContext<'_>`, `&S`, `&T`, `ToolCall`, `next: impl ToolNext`            | `ToolResult`, `Result<ToolResult, E>` |
/// | `after_agent`     | `&mut Context`, `&mut S`, `&mut T`                                          | `()`, `Result<(), E>` |
///
/// `S` is the run-scoped state declared with `state = S`, `T` the thread-scoped state declared
/// with `thread_state = T` (a parameter written as `&mut T` is the thread state, any other state
/// parameter the run state); `E` is any error convertible into
/// `Box<dyn Error + Send + Sync>` (such as `hookchain::Error`). `next` may also be a type
/// parameter bounded by `ModelNext`/`ToolNext`. Sequential hooks may be plain `fn`s: write them so
/// when they do not await. The chain then calls a plain-`fn` `before_model` or `after_model` hook
/// directly, with no future at all (see *Performance*). Wrap hooks are `async fn`s, since they
/// await `next`.
///
/// # Options
///
/// - `phase = input | wrap | output` (default `wrap`): Input middleware may only have `before_*`
///   hooks and are listed first; Output middleware only `after_*` hooks and are listed last.
/// - `name = "…"`: the name errors and `describe()` use (default: the function's name).
/// - `jumps = [model, tools, end]`: the targets this hook may `Flow::Jump` to (`before_agent`,
///   `before_model` and `after_model` only). A jump written in the body to a target not listed
///   (`Flow::end()`, `Flow::Jump(Jump::Model)`) is a compile error at that jump; one computed at
///   run time is `Error::UndeclaredJump`, naming the middleware and the hook.
/// - `state = S`: the run-scoped state (`Default + Serialize + DeserializeOwned + Send + Sync`),
///   created afresh at every run, also every run of a thread; passed as `&mut S` (`&S` on the
///   tool path).
/// - `thread_state = T`: the thread-scoped state (the same bounds, and `Clone`), kept across the
///   runs of a `Thread`; passed as `&mut T` (`&T` on the tool path).
/// - `crate = path`: where `hookchain` is, if the dependency is renamed.
///
/// # What it expands to
///
/// ```
/// # use hookchain::prelude::*;
/// # mod expanded {
/// # use hookchain::prelude::*;
/// #[allow(non_camel_case_types)]
/// #[derive(Clone, Copy, Debug, Default)]
/// struct stamp;
///
/// impl stamp {
///     fn call(request: &mut ModelRequest) {
///         request.system_prompt = Some("Today is 2026-11-22.".into());
///     }
/// }
///
/// impl Middleware for stamp {
///     type State = ();
///     type ThreadState = ();
///     type StreamState = ();
///     type Phase = hookchain::middleware::phase::Input;
///     type WrapsModel = hookchain::middleware::False;
///     type WrapsTool = hookchain::middleware::False;
///     const NAME: &'static str = "stamp";
///     const HOOKS: hookchain::middleware::HookSet =
///         hookchain::middleware::HookSet::of(Hook::BeforeModel);
///     // No `jumps`. With `jumps = [end]`: `JumpSet::of(Hook::BeforeModel, Jump::End)`, a jump
///     // declared for this hook.
///     const JUMPS: hookchain::middleware::JumpSet = hookchain::middleware::JumpSet::NONE;
///     // (also `IDENTITY`, the function's path, so that other middleware can name `stamp` in
///     // their constraints, and `CONSTRAINTS`)
///
///     // A plain `fn` hook has a synchronous form, which chains call instead of awaiting.
///     const SYNC_HOOKS: hookchain::middleware::HookSet =
///         hookchain::middleware::HookSet::of(Hook::BeforeModel);
///
///     fn before_model_sync(
///         &self,
///         _cx: &mut Context,
///         _state: &mut (),
///         _thread: &mut (),
///         request: &mut ModelRequest,
///         // Only hookchain's machinery has one to give: the method is neither called nor
///         // overridden by mistake.
///         _: hookchain::__private::Internal,
///     ) -> Result<Flow, Error> {
///         // Calls the function and converts what it returns (`()` here), naming `stamp` and
///         // `before_model` in an error.
///         stamp::call(request);
///         Ok(Flow::Continue)
///     }
///
///     fn before_model(
///         &self,
///         cx: &mut Context,
///         state: &mut (),
///         thread: &mut (),
///         request: &mut ModelRequest,
///     ) -> impl Future<Output = Result<Flow, Error>> + Send {
///         // For a caller that awaits the hook: the synchronous form, run when first polled (the
///         // macro uses a small struct rather than an `async` block).
///         let internal = hookchain::__private::Internal::new();
///         async move { self.before_model_sync(cx, state, thread, request, internal) }
///     }
/// }
/// # }
/// ```
///
/// # Limitations
///
/// - The function becomes a type: call it as `stamp::call(..)`, not `stamp(..)`.
/// - Parameters are recognised by the last segment of their type (`Context`, `ModelRequest`,
///   `ModelResponse`, `ToolCall`); a type alias of one of them is not recognised.
/// - A hook function cannot be generic (except over its `next`): configuration belongs in the
///   fields of a `#[middleware]` type.
/// - Jumps in the body are found by how they are spelled, without parsing it: `Jump::End` counts
///   wherever it is written (in a pattern too), and a jump named otherwise (a `use` of the
///   variant, a constant, a helper function) is left to the run-time check.
///
/// # Performance
///
/// The generated trait method calls the function directly. An `async fn` hook's future is
/// wrapped in one small struct that converts its output and stores nothing else. A plain-`fn`
/// `before_model` or `after_model` hook also gets a synchronous form (listed in the hidden
/// `SYNC_HOOKS`), which a chain calls instead of creating and awaiting a future: ten such hooks
/// cost about what the same ten statements written inline do (`BENCHMARKS.md`). Hooks a
/// middleware does not have are skipped at compile time.
///
/// ```compile_fail
/// use hookchain::hook;
/// use hookchain::prelude::*;
///
/// // `before_model` receives the request as `&mut ModelRequest`.
/// #[hook(before_model)]
/// fn stamp(request: ModelRequest) {}
/// ```
#[proc_macro_attribute]
pub fn hook(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("hook", hook::expand(attr.into(), item.into()))
}

/// Turns the `#[hook(..)]` methods of an impl block into one middleware; the type's fields are
/// its configuration.
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{chain, middleware};
///
/// /// Stops a run after `limit` model calls.
/// struct CallLimit {
///     limit: u32,
/// }
///
/// #[middleware(state = u32)]
/// impl CallLimit {
///     #[hook(before_model, jumps = [end])]
///     fn check(&self, calls: &mut u32) -> Flow {
///         *calls += 1;
///         if *calls > self.limit { Flow::end() } else { Flow::Continue }
///     }
///
///     /// An ordinary method: only `#[hook]` methods become hooks.
///     fn limit(&self) -> u32 {
///         self.limit
///     }
/// }
///
/// let chain = chain![CallLimit { limit: 3 }];
/// ```
///
/// Each `#[hook(kind)]` method takes `&self` and then the parameters listed for
/// [`hook`](macro@hook); a middleware has at most one hook of each kind. `#[hook]` on a
/// method takes only `jumps = [..]`, which declares the jumps of that hook alone (above, `check`
/// may end the run; another hook of `CallLimit` may not); the other options go on
/// `#[middleware(..)]`.
///
/// # Options
///
/// `phase`, `name`, `state`, `thread_state` and `crate` as for [`hook`](macro@hook), plus
/// ordering constraints naming other middleware types (declared with `#[middleware]` or
/// `#[hook]`):
///
/// - `before = T` or `before = [T, U]`: wherever `T` is in the chain, this middleware is listed
///   before it;
/// - `after = T`: wherever `T` is in the chain, this middleware is listed after it;
/// - `requires = T`: `T` must be in the same chain.
///
/// A broken constraint fails the build, with a message naming both middleware. The check runs
/// when the chain is built (`chain!` or `Agent::run`), over the whole chain, nested chains
/// included.
///
/// # Checking answers to interrupts
///
/// A method marked `#[check_answer]` — a plain `fn(&self, answer: &Answer<'_>) -> Result<(), E>`
/// — becomes `Middleware::check_answer`:
/// `Agent::resume` asks it about each answer to an interrupt this middleware raised, and refuses
/// the resume, before anything runs, when it returns an error.
///
/// # Contributing tools and system-prompt pieces
///
/// A method marked `#[contribute]` — a plain `fn(&self, to: &mut Contributions)` — becomes
/// `Middleware::contribute`: when the agent is built, it adds tools (`to.tool(..)`) and pieces
/// of the system prompt (`to.system_prompt(..)`) to the agent. A block with a `#[contribute]`
/// method needs no hook.
///
/// # What it expands to
///
/// The impl block as written (its `#[hook]` attributes removed: the methods stay ordinary
/// methods), plus `impl Middleware for CallLimit` whose hooks call the methods — see
/// [`hook`](macro@hook) for the shape. Its jumps are
/// those of each hook:
///
/// ```
/// # use hookchain::prelude::*;
/// # use hookchain::middleware::JumpSet;
/// const JUMPS: JumpSet = JumpSet::of(Hook::BeforeModel, Jump::End);
/// ```
///
/// # On `impl Middleware for X`
///
/// On a hand-written impl of the trait, `#[middleware]` (with no options) adds the items the
/// impl's methods already say and leaves the rest as written: `HOOKS` (the hooks among its
/// methods), `WrapsModel`/`WrapsTool`, `()` for `State`, `ThreadState` and `StreamState`,
/// `Phase = Wrap`, `NAME` (the type's name) and `IDENTITY` (its path). An item written in the
/// impl wins.
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::middleware;
///
/// struct Stamp;
///
/// #[middleware]
/// impl Middleware for Stamp {
///     async fn before_model(
///         &self,
///         _cx: &mut Context,
///         _state: &mut (),
///         _thread: &mut (),
///         request: &mut ModelRequest,
///     ) -> Result<Flow, Error> {
///         request.system_prompt = Some("Be brief.".into());
///         Ok(Flow::Continue)
///     }
/// }
///
/// assert_eq!(<Stamp as Middleware>::NAME, "Stamp");
/// assert!(<Stamp as Middleware>::HOOKS.contains(Hook::BeforeModel));
/// ```
///
/// # Limitations
///
/// Constraints are checked after monomorphization: `cargo build` and `cargo test` report them,
/// `cargo check` does not.
#[proc_macro_attribute]
pub fn middleware(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("middleware", middleware::expand(attr.into(), item.into()))
}

/// Composes middleware into one static chain.
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{chain, hook};
///
/// #[hook(before_model, phase = input)]
/// fn redact(request: &mut ModelRequest) {}
///
/// #[hook(after_model)]
/// fn audit(response: &mut ModelResponse) {}
///
/// #[hook(after_model, phase = output)]
/// fn scrub(response: &mut ModelResponse) {}
///
/// let debug = true;
/// let chain = chain![redact, audit, debug.then_some(audit), scrub];
/// let agent = Agent::builder(ScriptedModel::new([])).chain(chain).build()?;
/// # Ok::<(), hookchain::agent::AgentBuildError>(())
/// ```
///
/// Elements are any expressions whose values are middleware: `#[hook]` functions, values of
/// `#[middleware]` types, `Option`s of them (toggles), and other chains. They are evaluated in
/// order; `before_*` hooks run in that order, `after_*` hooks in reverse, and wraps nest with
/// the first listed outermost.
///
/// # Checks
///
/// - Each element is a middleware (the error points at the element).
/// - Phases are in order, Input → Wrap → Output (the error points at the element listed too
///   late, and names both middleware).
/// - After monomorphization (so in `cargo build`, not `cargo check`): `before`, `after` and
///   `requires` constraints, and the rules hand-written impls must follow.
///
/// # What it expands to
///
/// A block that binds each element, runs the checks above, and returns a tuple of the elements,
/// nested in groups of 12 for longer chains. Nested chains cost nothing at run time: their
/// members' wrap layers are spliced into the enclosing onion.
///
/// # Limitations
///
/// Only members that wrap the model (or tool) call nest a future, one each; rustc's query depth
/// bounds how deep that onion can be. Measured on rustc 1.95: 64 middleware with 16 wrapping
/// ones build without a `recursion_limit` attribute, and so do onions of up to 18 wrapping
/// members written with `#[middleware]`/`#[hook]` (about 20 hand-written; the exact number
/// depends on how deeply the code awaiting `Agent::run` nests). Deeper onions need the
/// attribute in the crate that builds the agent: `#![recursion_limit = "256"]` is enough for 36
/// wrapping members, `"512"` for 64. The overflow shows in `cargo build`, not `cargo check`.
///
/// `chain![crate = path; a, b]` names a renamed `hookchain` dependency.
///
/// ```compile_fail
/// use hookchain::chain;
///
/// struct Settings;
/// // `Settings` is not a middleware.
/// let chain = chain![Settings];
/// ```
#[proc_macro]
pub fn chain(input: TokenStream) -> TokenStream {
    debug("chain", chain::expand(input.into()))
}

/// Turns a function into a tool the model can call.
///
/// The doc comment is the tool's description, the parameters are its arguments (each one's doc
/// comment describes it in the JSON schema), and the function's name is the tool's name. The
/// function becomes a unit type of the same name implementing `Tool`, and stays callable as
/// `name::call(..)`:
///
/// ```
/// use hookchain::prelude::*;
/// use hookchain::{Tool, tool};
///
/// /// Gets the current weather in a city.
/// #[tool]
/// async fn get_weather(
///     /// The city, such as "Lisbon".
///     city: String,
///     /// `celsius` (the default) or `fahrenheit`.
///     unit: Option<String>,
/// ) -> String {
///     format!("{city}: 18 degrees {}", unit.as_deref().unwrap_or("celsius"))
/// }
///
/// // A tool, by the function's name:
/// let agent = Agent::builder(ScriptedModel::new([])).tool(get_weather).build()?;
/// assert_eq!(get_weather.spec().description, "Gets the current weather in a city.");
/// assert_eq!(get_weather.spec().parameters["required"], serde_json::json!(["city"]));
/// // And still a function, as `name::call`:
/// # futures::executor::block_on(async {
/// assert_eq!(get_weather::call("Porto".into(), None).await, "Porto: 18 degrees celsius");
/// # });
/// # Ok::<(), hookchain::agent::AgentBuildError>(())
/// ```
///
/// # Parameters and results
///
/// - Each parameter is an argument of the same name, whose type implements `serde::Deserialize`
///   and `schemars::JsonSchema` and is owned (`String`, not `&str`). An `Option<T>` parameter
///   is optional: the model may leave it out. The model's arguments are a JSON object (`null`
///   reads as no arguments); a parameter takes no `#[serde]` or `#[schemars]` attribute — shape
///   the argument with its type's own derives instead.
/// - A parameter of type `ToolContext<'_>`, anywhere in the list, is the call's context, not an
///   argument: the call's id, the run's `Context` (through `Deref`: `run_id()`, `messages()`),
///   and on a call resumed after this tool's interrupt, `resume_value()`. A tool without one that
///   returns `ToolError::Interrupt` gets the answer as its result when the run resumes.
/// - The function may be `async` or not (a plain `fn` runs in the run's task, as an `async fn`
///   without an `.await` does: it must not block its thread, unless it is
///   [`blocking`](#tools-that-block-their-thread)). It returns `T` or `Result<T, E>` (a return
///   type spelled `Result`, by any path), with `T: serde::Serialize` — a `String` is the text
///   the model reads, anything else is sent as JSON — and `E` any error convertible into
///   `Box<dyn Error + Send + Sync>`. The error is the tool's failure, which the model does not
///   read, unless it is a `ToolError` (such as `ToolError::for_model`), kept as it is.
///   A `ToolResult` (or `Result<ToolResult, E>`; a type spelled `ToolResult`) keeps its flag:
///   its content is what the model reads, as a success or, with `is_error`, as the error
///   `ToolError::for_model` would give.
/// - A `Content` (or `Result<Content, E>`; a type spelled `Content`: hookchain's
///   `message::Content`) is what the model reads as it is: text, images, JSON parts, links to
///   resources (see the `Tool` trait's results).
/// - Arguments that do not match the schema are a `ToolError::InvalidArguments`, which the
///   model reads as the call's error result.
///
/// # Tools with state: on an impl block
///
/// A tool holding a handle (a database pool, a client) is a type with one `&self` method: put
/// `#[tool]` on the impl block, and the type implements `Tool`. The method's doc comment is the
/// description, its name the tool's name; the block holds that one method and stays as
/// written, so the method is callable as usual.
///
/// ```
/// use std::sync::Mutex;
///
/// use hookchain::prelude::*;
/// use hookchain::tool;
///
/// struct Notes {
///     notes: Mutex<Vec<String>>,
/// }
///
/// #[tool(name = "take_note")]
/// impl Notes {
///     /// Stores a note, and returns how many there are.
///     async fn take(
///         &self,
///         /// The note.
///         note: String,
///     ) -> usize {
///         let mut notes = self.notes.lock().unwrap();
///         notes.push(note);
///         notes.len()
///     }
/// }
///
/// let notes = Notes { notes: Mutex::new(Vec::new()) };
/// let agent = Agent::builder(ScriptedModel::new([])).tool(notes).build()?;
/// # Ok::<(), hookchain::agent::AgentBuildError>(())
/// ```
///
/// # Tools that block their thread
///
/// A tool's future is polled in its run's task. A body that blocks its thread — a synchronous
/// client (a payment SDK, say), a large file parsed in one go, a long computation — stops its
/// run's events while it runs and, on a current-thread runtime, every other task too. Such a
/// tool must be `#[tool(blocking)]` (or run with `ToolExecution::Spawned`, or call
/// `tokio::task::spawn_blocking` itself). `blocking` goes on a plain `fn`, not an `async fn`:
/// the generated tool reads the arguments, moves them to one of tokio's blocking threads
/// (`tokio::task::spawn_blocking`), and waits there for the body's result, which it converts as
/// for any tool.
///
/// ```
/// use std::time::Duration;
///
/// use hookchain::prelude::*;
/// use hookchain::tool;
///
/// /// Charges a card, through the payment provider's synchronous client.
/// #[tool(blocking)]
/// fn charge(
///     /// The amount, in cents.
///     cents: u64,
/// ) -> Result<String, std::io::Error> {
///     std::thread::sleep(Duration::from_millis(10)); // the client's blocking call
///     Ok(format!("charged {cents} cents"))
/// }
///
/// let agent = Agent::builder(ScriptedModel::new([])).tool(charge).build()?;
/// // Still a function, as `name::call`, and a synchronous one:
/// assert_eq!(charge::call(250)?, "charged 250 cents");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// - `blocking` needs hookchain's feature `tokio` (on by default): without it, the build fails
///   with one error, at `blocking` (running the body on the run's thread would hide the very
///   stall it is there to prevent). Called outside any tokio runtime (under
///   `futures::executor::block_on`, say), the body runs in the caller's thread, as
///   `ToolExecution::Spawned` runs its calls there.
/// - The arguments and the result cross threads: they are owned, and must be `Send`; a type that
///   is not is reported at its parameter or return type.
/// - The body takes no `ToolContext`: the context borrows the run, which the blocking thread
///   cannot hold. A tool that needs it is an `async fn` that takes what it needs of the context
///   (the call id, a value of the run context) and runs its blocking part with
///   `tokio::task::spawn_blocking`.
/// - On an impl block, the method takes `&self` as usual, and the type must be `Clone`: each
///   call's thread owns a clone of the tool (keep a handle that is costly to clone in an `Arc`).
/// - A panic in the body is the tool's failure, as for any tool (`ToolError::Panicked`: the
///   model reads that the tool failed, and the run goes on).
/// - A blocking body cannot be interrupted: when its call is cancelled (the run's future
///   dropped, a timeout around it), the body still runs to its end on its thread, and its
///   result is dropped. Make it idempotent, or bound it (the client's own timeout), if that
///   matters.
/// - With a checkpointer, a run's lease is renewed in a task of its own: on a multi-thread
///   runtime, a blocking tool does not lose its lease. An unmarked body that blocks a
///   current-thread runtime's only thread stops the renewals too.
/// - The tool's schema and spec are those of the same function without `blocking` (or
///   `async`).
///
/// # Equivalent code without the macro
///
/// The first example behaves like this hand-written tool. The generated code differs in form:
/// it reads each argument on its own rather than through one derived struct (so that a type that
/// cannot be an argument is one error, at its parameter), keeps its helpers in an anonymous
/// `const`, and names every path through `hookchain::__private`.
///
/// ```
/// # use hookchain::prelude::*;
/// use hookchain::message::Content;
/// use hookchain::tool::parameters_schema;
/// use hookchain::{Tool, ToolError, ToolSpec};
///
/// /// Gets the current weather in a city.
/// #[allow(non_camel_case_types)]
/// #[derive(Clone, Copy, Debug, Default)]
/// struct get_weather;
///
/// impl get_weather {
///     async fn call(city: String, unit: Option<String>) -> String {
///         format!("{city}: 18 degrees {}", unit.as_deref().unwrap_or("celsius"))
///     }
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Arguments {
///     /// The city, such as "Lisbon".
///     city: String,
///     /// `celsius` (the default) or `fahrenheit`.
///     unit: Option<String>,
/// }
///
/// impl Tool for get_weather {
///     fn spec(&self) -> ToolSpec {
///         ToolSpec::new(
///             "get_weather",
///             "Gets the current weather in a city.",
///             parameters_schema::<Arguments>(),
///         )
///     }
///
///     // (also `check_arguments`: whether the arguments deserialize)
///
///     async fn call(
///         &self,
///         cx: ToolContext<'_>,
///         arguments: serde_json::Value,
///     ) -> Result<Content, ToolError> {
///         // No context parameter: on a resumed call, the answer is the result.
///         if let Some(answer) = cx.resume_value() {
///             return Ok(answer.as_str().map_or_else(|| answer.to_string(), str::to_owned).into());
///         }
///         let arguments: Arguments = serde_json::from_value(arguments).map_err(|source| {
///             ToolError::InvalidArguments { tool: "get_weather".to_owned(), source }
///         })?;
///         Ok(get_weather::call(arguments.city, arguments.unit).await.into())
///     }
/// }
/// ```
///
/// # Schemas
///
/// The schema is cleaned for providers (`hookchain::tool::parameters_schema`): no `$schema` or
/// `title`, `"type": "object"` with `"additionalProperties": false`, `required` listing the
/// parameters that are not `Option`s, no `format` on integers and numbers (a `minimum` of 0 on
/// unsigned types, and bounds of small ones, stay), and subschemas inlined.
///
/// # Options
///
/// - `name = "…"`: the tool's name (default: the function's). Providers accept 1 to 64 ASCII
///   letters, digits, `_` and `-`.
/// - `description = "…"`: the description, instead of the doc comment.
/// - `blocking`: the function is a plain `fn` whose body may block its thread; it runs on one
///   of tokio's blocking threads (see [above](#tools-that-block-their-thread)).
/// - `crate = path`: where `hookchain` is, if the dependency is renamed.
///
/// # Limitations
///
/// - A tool cannot be generic, nor take references (`&str`): arguments are deserialized, owned.
/// - A `#[tool]` impl block holds one method and is not generic; for several tools sharing one
///   handle, make one small type per tool holding a clone of the handle (an `Arc`).
/// - `#[tool]` on a method inside a plain impl block is an error: put it on the block.
/// - The context is recognised by its type's name, `ToolContext`; an alias of it is an argument.
/// - The tool's future must be `Send` (an agent may run its tool calls on several threads); a
///   future that is not is reported at the function's name, with rustc's note on what it holds.
/// - For OpenAI's `strict` mode, which wants every property listed in `required`, optional
///   parameters still need `strict` turned off (or a signature without `Option`s).
///
/// # Performance
///
/// The generated `call` deserializes each argument and calls the function directly, with no wrapper future of its own beyond the `async` block. The registry boxes each
/// call's future, as for every tool. A `blocking` tool's call also boxes the future waiting
/// for its blocking thread (the handle of the thread's task is allocated anyway). `spec()` builds the schema each time it is called; an agent
/// asks once, when the tool is registered.
///
/// ```compile_fail
/// use hookchain::tool;
///
/// // Arguments are owned: `text: String`.
/// /// Shouts.
/// #[tool]
/// async fn shout(text: &str) -> String {
///     text.to_uppercase()
/// }
/// ```
///
/// ```compile_fail
/// use hookchain::tool;
///
/// // A tool needs a description: a doc comment or `description = "…"`.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
/// ```
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    debug("tool", tool::expand(attr.into(), item.into()))
}

/// Prints the expansion when `HOOKCHAIN_MACROS_DEBUG` is set.
fn debug(name: &str, output: proc_macro2::TokenStream) -> TokenStream {
    if std::env::var_os("HOOKCHAIN_MACROS_DEBUG").is_some() {
        eprintln!("hookchain-macros: #[{name}] expands to:\n{output}\n");
    }
    output.into()
}
