//! Generates `impl Middleware` from a validated model. Shared by
//! `#[hook]` and `#[middleware]`; makes no decisions and reports no errors.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Generics, Type};

use crate::attr::{JumpValue, PhaseValue};
use crate::kinds::{HookKind, Role};
use crate::private::{Private, located};
use crate::signature::HookSig;

/// A middleware type, ready to generate.
pub(crate) struct ImplModel<'a> {
    pub(crate) private: Private,
    /// The type the impls are for.
    pub(crate) self_ty: TokenStream,
    pub(crate) generics: Generics,
    /// `Middleware::NAME`, when given with `name = ".."` (else the type's own name).
    pub(crate) name: Option<&'a syn::LitStr>,
    /// The type's own name, for its identity.
    pub(crate) type_name: String,
    pub(crate) phase: PhaseValue,
    pub(crate) state: Option<Type>,
    pub(crate) thread_state: Option<Type>,
    /// `live_stream` was given: `LIVE_STREAM` is `true` whatever the hooks.
    pub(crate) live_stream: bool,
    pub(crate) hooks: Vec<HookImpl<'a>>,
    pub(crate) before: Vec<Type>,
    pub(crate) after: Vec<Type>,
    pub(crate) requires: Vec<Type>,
    /// The `#[check_answer]` method, if any.
    pub(crate) check_answer: Option<&'a syn::Ident>,
    /// The `#[contribute]` method, if any.
    pub(crate) contribute: Option<&'a syn::Ident>,
}

/// One hook, ready to generate: a `#[hook]` function (called as `name::call`) or a method of a
/// `#[middleware]` block (called as `Self::method(self, ..)`), told apart by the receiver.
pub(crate) struct HookImpl<'a> {
    pub(crate) sig: HookSig<'a>,
    /// The role of each typed parameter, in order.
    pub(crate) roles: Vec<Role>,
    pub(crate) jumps: Vec<JumpValue>,
}

impl HookImpl<'_> {
    /// Whether the chain calls this hook through its synchronous form: a plain `fn` of a hook
    /// that has one.
    fn runs_sync(&self) -> bool {
        !self.sig.is_async() && self.sig.kind.has_sync_form()
    }
}

pub(crate) fn expand(model: &ImplModel<'_>) -> TokenStream {
    let p = &model.private;
    let self_ty = &model.self_ty;
    let type_name = &model.type_name;
    let name = model
        .name
        .map_or_else(|| type_name.clone(), syn::LitStr::value);
    let phase = format_ident!("{}", model.phase.type_name());
    let unit_or = |ty: &Option<Type>| match ty {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    };
    let state = unit_or(&model.state);
    let thread_state = unit_or(&model.thread_state);
    let stream_state = unit_or(&stream_state(model));
    let state_checks = state_checks(p, model);
    let state_param_checks = state_param_checks(p, model);
    let return_checks = return_checks(p, model);
    let shareable = shareable_checks(p, &model.generics);
    let generics = assumed_bounds(p, model);
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let has = |kind: HookKind| model.hooks.iter().any(|hook| hook.sig.kind == kind);
    let marker = |kind: HookKind| {
        if has(kind) {
            quote!(#p::True)
        } else {
            quote!(#p::False)
        }
    };
    let wraps_model = marker(HookKind::WrapModelCall);
    let wraps_tool = marker(HookKind::WrapToolCall);
    let hooks = hook_set(p, model.hooks.iter());
    let sync_hooks = hook_set(p, model.hooks.iter().filter(|hook| hook.runs_sync()));
    // Each hook's `jumps = [..]` is declared for that hook alone.
    let jumps = model.hooks.iter().flat_map(|hook| {
        let kind = format_ident!("{}", hook.sig.kind.variant());
        hook.jumps.iter().map(move |jump| {
            let target = format_ident!("{}", jump.variant());
            quote!(.with(#p::Hook::#kind, #p::Jump::#target))
        })
    });
    // A type a `const` can name is checked by one (`constraint_checks`) and named without a
    // bound; another, by `Named::of`'s bound.
    let params: Vec<&syn::Ident> = model
        .generics
        .type_params()
        .map(|param| &param.ident)
        .collect();
    let named = |types: &[Type]| {
        let items = types.iter().map(|ty| {
            let span = located(syn::spanned::Spanned::span(ty));
            let p = p.at(span);
            if crate::check::nameable(ty) && !crate::check::mentions(ty, &params) {
                quote_spanned!(span=> {
                    #[allow(unused_imports)]
                    use #p::NoNamed as _;
                    <#p::Has<#ty>>::NAMED
                })
            } else {
                quote_spanned!(span=> #p::Named::of::<#ty>())
            }
        });
        quote!(&[#(#items),*])
    };
    let constraint_checks: TokenStream = model
        .before
        .iter()
        .chain(&model.after)
        .chain(&model.requires)
        .filter(|ty| crate::check::nameable(ty) && !crate::check::mentions(ty, &params))
        .map(|ty| {
            crate::check::first_missing(
                p,
                ty,
                &format!(
                    "`{}` cannot be named in a `before`, `after` or `requires` constraint",
                    crate::check::type_text(ty)
                ),
                &[crate::check::Bound::new(
                    "IDENTIFIED",
                    "NoIdentified",
                    "it is not a middleware".to_owned(),
                )],
                "Constraints name middleware types: `#[hook]` functions, types with a \
                 `#[middleware]` impl block, or hand-written middleware that set \
                 `Middleware::IDENTITY`.",
            )
        })
        .collect();
    let (before, after, requires) = (
        named(&model.before),
        named(&model.after),
        named(&model.requires),
    );
    let live_stream = model.live_stream.then(|| {
        quote!(
            const LIVE_STREAM: bool = true;
        )
    });
    let methods = model.hooks.iter().map(|hook| method(p, hook));
    let check_answer = model.check_answer.map(|method| {
        quote! {
            fn check_answer(
                &self,
                answer: &#p::Answer<'_>,
            ) -> #p::Result<(), #p::BoxError> {
                Self::#method(self, answer).map_err(#p::Into::into)
            }
        }
    });
    let contribute = model.contribute.map(|method| {
        quote! {
            fn contribute(&self, to: &mut #p::Contributions) {
                Self::#method(self, to)
            }
        }
    });
    // In an anonymous const: the impls add no name to the user's module.
    quote! {
        const _: () = {
            #shareable
            #state_checks
            #state_param_checks
            #constraint_checks
            #return_checks

            #[automatically_derived]
            #[diagnostic::do_not_recommend]
            impl #impl_generics #p::Middleware for #self_ty #where_clause {
                type State = #state;
                type ThreadState = #thread_state;
                type StreamState = #stream_state;
                type Phase = #p::phase::#phase;
                type WrapsModel = #wraps_model;
                type WrapsTool = #wraps_tool;
                const NAME: &'static str = #name;
                const HOOKS: #p::HookSet = #hooks;
                const JUMPS: #p::JumpSet = #p::JumpSet::NONE #(#jumps)*;
                const SYNC_HOOKS: #p::HookSet = #sync_hooks;
                #live_stream
                const IDENTITY: #p::Option<&'static str> =
                    #p::Some(#p::concat!(#p::module_path!(), "::", #type_name));
                const CONSTRAINTS: #p::Constraints = #p::Constraints {
                    before: #before,
                    after: #after,
                    requires: #requires,
                };
                #(#methods)*
                #check_answer
                #contribute
            }
        };
    }
}

/// One check per type parameter of the impl block that it is `Send + Sync + 'static`, reported
/// at the parameter. The checking function repeats the block's generics as written: rustc's
/// suggestion (add `Shareable` to the parameter's bounds) then lands in the user's block, and
/// compiles.
fn shareable_checks(p: &Private, generics: &Generics) -> TokenStream {
    let params: Vec<&syn::TypeParam> = generics.type_params().collect();
    if params.is_empty() {
        return TokenStream::new();
    }
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let checks = params.iter().map(|param| {
        let span = located(param.ident.span());
        let ident = &param.ident;
        quote_spanned!(span=> send_sync_static::<#ident>();)
    });
    // The bound is declared here, in the user's expansion, rather than by a helper function of
    // hookchain's: its note ("required by a bound in …") then points at the attribute, not
    // into hookchain's source.
    quote! {
        #[allow(dead_code, clippy::extra_unused_type_parameters)]
        fn shareable #impl_generics () #where_clause {
            fn send_sync_static<T: #p::Shareable + ?Sized>() {}
            #(#checks)*
        }
    }
}

/// One check per declared state type, at the type: a `const` naming the first bound the type
/// misses (see `check`), or, for a type naming the block's generic parameters, a bound (see
/// `__private::ValidState`).
fn state_checks(p: &Private, model: &ImplModel<'_>) -> TokenStream {
    let params: Vec<&syn::Ident> = model
        .generics
        .type_params()
        .map(|param| &param.ident)
        .collect();
    let mut consts = TokenStream::new();
    let mut check = |ty: &Option<Type>, thread: bool| {
        let ty = ty.as_ref()?;
        if !crate::check::mentions(ty, &params) {
            consts.extend(state_const(p, ty, thread));
            return None;
        }
        let span = located(syn::spanned::Spanned::span(ty));
        let pp = p.at(span);
        let check = syn::Ident::new(
            if thread {
                "ValidThreadState"
            } else {
                "ValidState"
            },
            span,
        );
        Some(quote_spanned!(span=> <#ty as #pp::#check>::check();))
    };
    let state = check(&model.state, false);
    let thread = check(&model.thread_state, true);
    if state.is_none() && thread.is_none() {
        return consts;
    }
    let (impl_generics, _, where_clause) = model.generics.split_for_impl();
    quote! {
        #consts
        #[allow(dead_code)]
        fn state #impl_generics () #where_clause {
            #state
            #thread
        }
    }
}

/// The check of a state type (a thread state if `thread`) without generic parameters.
fn state_const(p: &Private, ty: &Type, thread: bool) -> TokenStream {
    use crate::check::Bound;
    let (what, created) = if thread {
        ("thread state", "with each thread")
    } else {
        ("state", "at every run")
    };
    let lead = format!(
        "`{}` cannot be a middleware's {what}",
        crate::check::type_text(ty)
    );
    let mut bounds = vec![Bound::new(
        "DEFAULT",
        "NoDefault",
        format!("it is not `Default`, and a {what} is created with `Default` {created}"),
    )];
    if thread {
        bounds.push(Bound::new(
            "CLONE",
            "NoClone",
            "it is not `Clone`, and each run works on a copy of the thread state".to_owned(),
        ));
    }
    bounds.extend([
        Bound::new(
            "SERIALIZE",
            "NoSerialize",
            format!("it is not `serde::Serialize`, and a {what} is saved in checkpoints"),
        ),
        Bound::new(
            "DESERIALIZE",
            "NoDeserialize",
            format!("it is not `serde::Deserialize`, and a {what} is restored from checkpoints"),
        ),
        Bound::new(
            "SEND",
            "NoSend",
            format!(
                "it must be `Send + Sync` and is not `Send`: a run (with its {what}) moves \
                 between threads"
            ),
        )
        .fix(SHARED_FIX),
        Bound::new(
            "SYNC",
            "NoSync",
            format!(
                "it must be `Send + Sync` and is not `Sync`: a {what} is read from several tasks"
            ),
        )
        .fix(SHARED_FIX),
    ]);
    let derives = if thread {
        "Default, Clone, serde::Serialize, serde::Deserialize"
    } else {
        "Default, serde::Serialize, serde::Deserialize"
    };
    let fix = format!(
        "On a type of yours, `#[derive({derives})]`; a type from another crate goes in a field \
         of such a type of yours."
    );
    crate::check::first_missing(p, ty, &lead, &bounds, &fix)
}

/// What to write instead of a field that is not `Send` or `Sync`.
const SHARED_FIX: &str = "A field that is not `Sync` or `Send` (a `RefCell`, a `Cell`, an `Rc`) \
    goes in a `std::sync::Mutex` (or an `RwLock`; an `Arc` for an `Rc`), and a number in an \
    atomic (`std::sync::atomic::AtomicU64`); a state is changed through `&mut` in its hooks, so \
    a plain field often needs no cell at all.";

/// The return type of each hook, when it can be named on its own (no reference, no `Self`, no
/// `impl Trait`), with the trait it must implement. Another type is checked where it is
/// converted (see `method`).
fn named_returns<'a>(model: &'a ImplModel<'_>) -> Vec<(&'a Type, &'static str, &'static str)> {
    model
        .hooks
        .iter()
        .filter_map(|hook| match &hook.sig.original.output {
            syn::ReturnType::Type(_, ty) if nameable(ty) => {
                let (into, method) = hook.sig.kind.return_trait();
                Some((&**ty, into, method))
            }
            _ => None,
        })
        .collect()
}

/// Whether `ty` can be written in a where clause of the impl as it is.
fn nameable(ty: &Type) -> bool {
    quote!(#ty).into_iter().all(|tree| nameable_tree(&tree))
}

fn nameable_tree(tree: &proc_macro2::TokenTree) -> bool {
    match tree {
        proc_macro2::TokenTree::Punct(punct) => !matches!(punct.as_char(), '&' | '\''),
        proc_macro2::TokenTree::Ident(ident) => {
            ident != "Self" && ident != "impl" && ident != "dyn"
        }
        proc_macro2::TokenTree::Group(group) => {
            group.stream().into_iter().all(|t| nameable_tree(&t))
        }
        proc_macro2::TokenTree::Literal(_) => true,
    }
}

/// One check per hook's return type (see `named_returns`), at the user's `-> T`: a wrong type is reported
/// there, once, in words (not through the future's conversion, which would show hookchain's
/// internals) — by a `const` naming what the hook can return (see `check`), or, for a type
/// naming the block's generic parameters, by the trait it misses.
fn return_checks(p: &Private, model: &ImplModel<'_>) -> TokenStream {
    let returns = named_returns(model);
    if returns.is_empty() {
        return TokenStream::new();
    }
    let params: Vec<&syn::Ident> = model
        .generics
        .type_params()
        .map(|param| &param.ident)
        .collect();
    let mut consts = TokenStream::new();
    let mut checks = Vec::new();
    for (ty, into, method) in returns {
        if !crate::check::mentions(ty, &params) {
            consts.extend(return_const(p, ty, into));
            continue;
        }
        let span = located(syn::spanned::Spanned::span(ty));
        let pp = p.at(span);
        let into = syn::Ident::new(into, span);
        let method = syn::Ident::new(method, span);
        checks.push(quote_spanned!(span=> let _ = <#ty as #pp::#into>::#method;));
    }
    if checks.is_empty() {
        return consts;
    }
    let (impl_generics, _, where_clause) = model.generics.split_for_impl();
    quote! {
        #consts
        #[allow(dead_code)]
        fn returns #impl_generics () #where_clause {
            #(#checks)*
        }
    }
}

/// Each state parameter of a hook (`&mut T` or `&T`, taken as the state or the thread state)
/// whose type a `const` can name, with the declared type it must be.
fn state_params<'a>(model: &'a ImplModel<'_>) -> Vec<(&'a Type, TokenStream)> {
    let params: Vec<&syn::Ident> = model
        .generics
        .type_params()
        .map(|param| &param.ident)
        .collect();
    let declared = |role: Role| {
        let declared = if role == Role::State {
            model.state.as_ref()
        } else {
            model.thread_state.as_ref()
        };
        match declared {
            Some(ty) if crate::check::nameable(ty) && !crate::check::mentions(ty, &params) => {
                Some(quote!(#ty))
            }
            Some(_) => None,
            None => Some(quote!(())),
        }
    };
    let mut found = Vec::new();
    for hook in &model.hooks {
        for (role, param) in hook.roles.iter().zip(&hook.sig.params) {
            if !matches!(role, Role::State | Role::ThreadState) {
                continue;
            }
            let Type::Reference(reference) = param.ty else {
                continue;
            };
            let inner = &*reference.elem;
            if !crate::check::nameable(inner) || crate::check::mentions(inner, &params) {
                continue;
            }
            if let Some(declared) = declared(*role) {
                found.push((inner, declared));
            }
        }
    }
    found
}

/// One check per state parameter (see `state_params`): a state taken as another type than the
/// declared one is reported at the parameter's type, in words.
fn state_param_checks(p: &Private, model: &ImplModel<'_>) -> TokenStream {
    use crate::check::{Bound, first_missing, type_text};
    let mut checks = TokenStream::new();
    for hook in &model.hooks {
        for (role, param) in hook.roles.iter().zip(&hook.sig.params) {
            let (what, key, declared) = match role {
                Role::State => ("state", "state", &model.state),
                Role::ThreadState => ("thread state", "thread_state", &model.thread_state),
                _ => continue,
            };
            let Type::Reference(reference) = param.ty else {
                continue;
            };
            let inner = &*reference.elem;
            let params: Vec<&syn::Ident> = model
                .generics
                .type_params()
                .map(|param| &param.ident)
                .collect();
            let (declared, declared_text) = match declared {
                Some(ty) if crate::check::nameable(ty) && !crate::check::mentions(ty, &params) => {
                    (ty.clone(), type_text(ty))
                }
                Some(_) => continue,
                None => (syn::parse_quote!(()), "()".to_owned()),
            };
            if !crate::check::nameable(inner) || crate::check::mentions(inner, &params) {
                continue;
            }
            let pair: Type = syn::parse_quote!((#inner, #declared));
            let lead = format!(
                "this hook takes its {what} as `{}`, but the middleware's {what} is \
                 `{declared_text}`",
                type_text(inner)
            );
            checks.extend(first_missing(
                p,
                inner,
                &lead,
                &[Bound::new(
                    "SAME",
                    "NotSame",
                    format!(
                        "take it as `&mut {declared_text}` (`&{declared_text}` in \
                         `wrap_tool_call`)"
                    ),
                )
                .of(&pair)],
                &format!("The {what} type is the one declared with `{key} = …` on the attribute."),
            ));
        }
    }
    checks
}

/// The check of a hook's return type without generic parameters, by the trait
/// (`into`) its kind's return types implement.
fn return_const(p: &Private, ty: &Type, into: &str) -> TokenStream {
    use crate::check::{Bound, first_missing, type_text};
    let (question, otherwise, hooks, allowed) = match into {
        "IntoFlow" => (
            "FLOW_RETURN",
            "NoFlowReturn",
            "a `before_agent`, `before_model` or `after_model` hook",
            "`()`, `Flow`, `Result<(), E>` or `Result<Flow, E>`",
        ),
        "IntoDone" => (
            "DONE_RETURN",
            "NoDoneReturn",
            "an `after_agent` or `on_model_event` hook",
            "`()` or `Result<(), E>`",
        ),
        "IntoModelResponse" => (
            "MODEL_RESPONSE_RETURN",
            "NoModelResponseReturn",
            "a `wrap_model_call` hook",
            "`ModelResponse` or `Result<ModelResponse, E>`",
        ),
        _ => (
            "TOOL_RESULT_RETURN",
            "NoToolResultReturn",
            "a `wrap_tool_call` hook",
            "`ToolResult` or `Result<ToolResult, E>`",
        ),
    };
    first_missing(
        p,
        ty,
        &format!("`{}` is not a return type {hooks} can have", type_text(ty)),
        &[Bound::new(question, otherwise, format!("return {allowed}"))],
        "`E` is any error type that converts into `Box<dyn std::error::Error + Send + Sync>`, \
         such as `hookchain::Error`.",
    )
}

/// The block's generics, with what the checks above report assumed: each type parameter
/// `Send + Sync + 'static`, each state type a valid state. The impls then type-check whatever the
/// checks found, so a mistake is reported once, by its check. (A bound under `for<'a>` is not
/// rejected as trivially false when it names no parameter.)
fn assumed_bounds(p: &Private, model: &ImplModel<'_>) -> Generics {
    let mut generics = model.generics.clone();
    let idents: Vec<syn::Ident> = generics
        .type_params()
        .map(|param| param.ident.clone())
        .collect();
    let clause = generics.make_where_clause();
    for ident in idents {
        clause
            .predicates
            .push(syn::parse_quote!(#ident: #p::Shareable));
    }
    if let Some(state) = &model.state {
        clause
            .predicates
            .push(syn::parse_quote!(for<'__hookchain> #state: #p::MiddlewareState));
    }
    for (inner, declared) in state_params(model) {
        clause
            .predicates
            .push(syn::parse_quote!(for<'__hookchain> #inner: #p::StateIs<#declared>));
    }
    for (ty, into, _) in named_returns(model) {
        let into = syn::Ident::new(into, proc_macro2::Span::call_site());
        clause
            .predicates
            .push(syn::parse_quote!(for<'__hookchain> #ty: #p::#into));
    }
    if let Some(thread) = &model.thread_state {
        clause
            .predicates
            .push(syn::parse_quote!(for<'__hookchain> #thread: #p::MiddlewareState + #p::Clone));
    }
    generics
}

/// The `HookSet` of `hooks`, as a constant expression.
fn hook_set<'a>(p: &Private, hooks: impl Iterator<Item = &'a HookImpl<'a>>) -> TokenStream {
    let with = hooks.map(|hook| {
        let variant = format_ident!("{}", hook.sig.kind.variant());
        quote!(.with(#p::Hook::#variant))
    });
    quote!(#p::HookSet::NONE #(#with)*)
}

/// The type of the `on_model_event` hook's stream state, if it has one (`S` of `&mut S`).
fn stream_state(model: &ImplModel<'_>) -> Option<Type> {
    let hook = model
        .hooks
        .iter()
        .find(|hook| hook.sig.kind == HookKind::OnModelEvent)?;
    hook.roles
        .iter()
        .zip(&hook.sig.params)
        .find_map(|(role, param)| match (role, param.ty) {
            (Role::StreamState, Type::Reference(reference)) => Some((*reference.elem).clone()),
            _ => None,
        })
}

/// The trait method of the per-event hook: a plain call, per event, its result converted.
fn event_method(p: &Private, hook: &HookImpl<'_>) -> TokenStream {
    let args = hook
        .roles
        .iter()
        .zip(&hook.sig.params)
        .map(|(role, param)| {
            let span = located(syn::spanned::Spanned::span(param.ty));
            let ident = match role {
                Role::StreamState => "state",
                Role::Event => "event",
                _ => "out",
            };
            syn::Ident::new(ident, span)
        });
    let ident = &hook.sig.original.ident;
    let (callee, receiver) = if hook.sig.original.receiver().is_some() {
        (quote!(Self::#ident), quote!(self,))
    } else {
        (quote!(#ident::call), quote!())
    };
    let span = located(hook.sig.output_span);
    let pp = p.at(span);
    // Converted at the user's `-> T`, as the sequential hooks are (see `method`).
    let (into, method) = (
        syn::Ident::new("IntoDone", span),
        syn::Ident::new("into_done", span),
    );
    let convert = quote_spanned!(span=> #pp::#into::#method(__hookchain_output));
    quote! {
        #[inline]
        fn on_model_event<__HookchainOut: #p::Emit>(
            &self,
            state: &mut <Self as #p::Middleware>::StreamState,
            event: #p::ModelEvent,
            out: &mut __HookchainOut,
        ) -> #p::Result<(), #p::Error> {
            let _ = &state;
            let __hookchain_output = #callee(#receiver #(#args),*);
            #convert
        }
    }
}

/// The trait method of one hook: it calls the user's function and converts what it returns.
fn method(p: &Private, hook: &HookImpl<'_>) -> TokenStream {
    let kind = hook.sig.kind;
    if kind == HookKind::OnModelEvent {
        return event_method(p, hook);
    }
    let method = format_ident!("{}", kind.name());
    let tool = kind.on_tool_path();
    let cx_ty = if tool {
        quote!(#p::ToolContext<'_>)
    } else {
        quote!(&mut #p::Context)
    };
    let (state_ty, thread_ty) = if tool {
        (
            quote!(&<Self as #p::Middleware>::State),
            quote!(&<Self as #p::Middleware>::ThreadState),
        )
    } else {
        (
            quote!(&mut <Self as #p::Middleware>::State),
            quote!(&mut <Self as #p::Middleware>::ThreadState),
        )
    };
    let (generics, subject, output) = match kind {
        HookKind::BeforeAgent | HookKind::AfterAgent | HookKind::OnModelEvent => {
            (quote!(), quote!(), None)
        }
        HookKind::BeforeModel => (quote!(), quote!(, request: &mut #p::ModelRequest), None),
        HookKind::AfterModel => (quote!(), quote!(, response: &mut #p::ModelResponse), None),
        HookKind::WrapModelCall => (
            quote!(<__HookchainNext: #p::ModelNext>),
            quote!(, request: #p::ModelRequest, next: __HookchainNext),
            Some(quote!(#p::ModelResponse)),
        ),
        HookKind::WrapToolCall => (
            quote!(<__HookchainNext: #p::ToolNext>),
            quote!(, call: #p::ToolCall, next: __HookchainNext),
            Some(quote!(#p::ToolResult)),
        ),
    };
    let output = match (kind, output) {
        (HookKind::AfterAgent, _) => quote!(#p::Result<(), #p::Error>),
        (_, Some(output)) => quote!(#p::Result<#output, #p::Error>),
        (_, None) => quote!(#p::Result<#p::Flow, #p::Error>),
    };
    // Each argument carries the span of the user's parameter type, so a mismatch (a state of
    // the wrong type, say) is reported at that parameter. The parameters have plain names
    // (`cx`, `state`, …): they are what rustdoc shows of the generated impl.
    let args = hook
        .roles
        .iter()
        .zip(&hook.sig.params)
        .map(|(role, param)| {
            let span = syn::spanned::Spanned::span(param.ty);
            let ident = match role {
                Role::Context => "cx",
                Role::State => "state",
                Role::ThreadState => "thread",
                Role::Request => "request",
                Role::Response => "response",
                Role::Call => "call",
                Role::Next => "next",
                Role::Event | Role::Out | Role::StreamState => "event",
            };
            let located = located(span);
            let ident = syn::Ident::new(ident, located);
            match (role, param.ty) {
                // A state passes through `StateIs`, whose bound explains a type mismatch.
                (Role::State | Role::ThreadState, Type::Reference(reference)) => {
                    let inner = &reference.elem;
                    let pp = p.at(span);
                    let declared = if *role == Role::State {
                        quote_spanned!(located=> State)
                    } else {
                        quote_spanned!(located=> ThreadState)
                    };
                    let convert = if reference.mutability.is_some() {
                        quote_spanned!(located=> mutable)
                    } else {
                        quote_spanned!(located=> shared)
                    };
                    quote_spanned!(located=>
                        <#inner as #pp::StateIs<<Self as #pp::Middleware>::#declared>>::#convert(#ident)
                    )
                }
                _ => quote!(#ident),
            }
        });
    let ident = &hook.sig.original.ident;
    let (callee, receiver) = if hook.sig.original.receiver().is_some() {
        (quote!(Self::#ident), quote!(self,))
    } else {
        (quote!(#ident::call), quote!())
    };
    let span = located(hook.sig.output_span);
    let conversion = syn::Ident::new(kind.conversion(), span);
    let pp = p.at(span);
    let call = quote!(#callee(#receiver #(#args),*));
    let params = quote! {
        &self,
        cx: #cx_ty,
        state: #state_ty,
        thread: #thread_ty
        #subject
    };
    // A wrong return type, or a future that is not `Send`, is reported at the user's `-> T`
    // (at the function's name when there is none). The method assumes `&Self: Send` (the trait
    // method's `Self: Sync`, which the supertrait implies), so a middleware that is not `Sync`
    // (a `Cell` field) is reported once, by the supertrait, not again by each hook's future.
    // Higher-ranked, the bound is not a where-clause rustc checks on its own for a type with no
    // generics (it would be the error again).
    let future = quote_spanned!(span=> impl #pp::Future<Output = #output> + #pp::Send);
    // A plain `fn` is called and its result converted on the spot (`now`): in the synchronous
    // form when the hook has one, and in its future when first polled (`__private::Lazy`). The
    // call is bound first, so that the conversion, where a wrong return type is reported, is all
    // spanned at the user's `-> T`. An `async fn`'s future is converted as it completes.
    // A sequential hook's value is converted by its trait's method, called by path: a wrong
    // return type is then reported as that trait's (with its message), with no note pointing
    // into hookchain.
    let convert = match kind.into_trait() {
        Some((into, method)) => {
            let into = syn::Ident::new(into, span);
            let method = syn::Ident::new(method, span);
            quote_spanned!(span=> #pp::#into::#method(__hookchain_output))
        }
        None => quote_spanned!(span=>
            #pp::convert_now::<#pp::#conversion, Self, _, _>(__hookchain_output)
        ),
    };
    let now = quote! {{
        let __hookchain_output = #call;
        #convert
    }};
    let body = if hook.sig.is_async() {
        quote_spanned!(span=> #pp::hook_future(#pp::converted::<#pp::#conversion, Self, _>(#call)))
    } else {
        quote_spanned!(span=> #pp::lazy(move || #now))
    };
    let sync_form = hook.runs_sync().then(|| {
        let sync = format_ident!("{}_sync", kind.name());
        quote! {
            #[inline]
            fn #sync(#params, _: #p::Internal) -> #output #now
        }
    });
    quote! {
        #sync_form

        #[inline]
        fn #method #generics(#params) -> #future
        where
            for<'__hookchain> &'__hookchain Self: #p::Send,
        {
            #body
        }
    }
}
