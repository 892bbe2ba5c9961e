//! The rules of `#[tool]`: a description, a name providers accept, a signature whose parameters
//! are named, owned arguments (and at most one `ToolContext`, none in a `blocking` tool, which
//! is not `async`), and for a method, `&self`.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, Pat, Signature, Type};

use super::parse::{FnItem, ToolAttr, doc_text, unraw};
use crate::ctxt::Ctxt;

/// A `#[tool]` that passed every rule.
pub(crate) struct ToolModel<'a> {
    pub(crate) name: String,
    pub(crate) description: String,
    /// The parameters after the receiver, in order.
    pub(crate) params: Vec<Param<'a>>,
    pub(crate) returns: Returns,
    /// The return type, when there is one.
    pub(crate) output: Option<&'a Type>,
    pub(crate) is_async: bool,
    /// `#[tool(blocking)]`: the span of the keyword `blocking`. The function is then not
    /// `async` and takes no `ToolContext`.
    pub(crate) blocking: Option<Span>,
    /// The span of the function's name, where generated code about it is located.
    pub(crate) fn_span: Span,
}

/// One parameter of the tool function.
pub(crate) enum Param<'a> {
    /// The call's `ToolContext`.
    Context,
    /// An argument the model gives: a field of the argument struct.
    Argument {
        /// The argument's name for the model: the parameter's, without `r#`.
        name: String,
        ty: &'a Type,
        /// Its doc comment, the argument's description (empty if none).
        description: String,
        /// Whether the type is spelled `Option<..>`: the argument may be left out.
        optional: bool,
    },
}

/// How the function's result becomes the model's text.
#[derive(Clone, Copy)]
pub(crate) enum Returns {
    /// `-> T` (or nothing): `T` is serialized; spanned at the type.
    Plain(Span),
    /// `-> Result<T, E>`: spanned at the type.
    Fallible(Span),
    /// `-> ToolResult` or `-> Result<ToolResult, E>`: its error flag is kept (serialized, the
    /// model would read an error result as a success); spanned at the type.
    ToolResult(Span),
    /// `-> Content` or `-> Result<Content, E>`: the content is kept as it is (serialized, the
    /// model would read its images and JSON as JSON text); spanned at the type.
    Content(Span),
}

/// The rules for a free function.
pub(crate) fn validate_fn<'a>(
    ctxt: &Ctxt,
    attr: &ToolAttr,
    function: &'a FnItem,
) -> Option<ToolModel<'a>> {
    signature(ctxt, attr, &function.attrs, &function.sig)
}

/// The rules for an impl block: inherent, not generic, holding one method that takes `&self`.
pub(crate) fn validate_impl<'a>(
    ctxt: &Ctxt,
    attr: &ToolAttr,
    block: &'a ItemImpl,
) -> Option<ToolModel<'a>> {
    if let Some((_, path, _)) = &block.trait_ {
        ctxt.error_spanned_by(
            path,
            "`#[tool]` goes on an inherent impl block holding the tool's method, as in \
             `#[tool] impl Search { async fn search(&self, query: String) … }`",
        );
        return None;
    }
    if !block.generics.params.is_empty() || block.generics.where_clause.is_some() {
        ctxt.error_spanned_by(
            &block.generics,
            "a `#[tool]` impl block cannot be generic: the tool is one concrete type",
        );
    }
    let method = the_method(ctxt, block)?;
    let receiver_ok = receiver(ctxt, &method.sig);
    let model = signature(ctxt, attr, &method.attrs, &method.sig);
    if receiver_ok { model } else { None }
}

/// The one method of the block, reporting a missing or second one.
fn the_method<'a>(ctxt: &Ctxt, block: &'a ItemImpl) -> Option<&'a ImplItemFn> {
    let methods: Vec<&ImplItemFn> = block
        .items
        .iter()
        .filter_map(|item| match item {
            ImplItem::Fn(method) => Some(method),
            _ => None,
        })
        .collect();
    for extra in methods.iter().skip(1) {
        ctxt.error_spanned_by(
            &extra.sig.ident,
            format!(
                "a `#[tool]` impl block holds one method, the tool: move `{}` to another impl \
                 block",
                extra.sig.ident
            ),
        );
    }
    if methods.is_empty() {
        ctxt.error_spanned_by(
            &block.self_ty,
            "a `#[tool]` impl block holds the tool's method, as in \
             `async fn search(&self, query: String) -> …`",
        );
    }
    methods.first().copied()
}

/// Whether the method takes `&self`; reports any other receiver.
fn receiver(ctxt: &Ctxt, sig: &Signature) -> bool {
    match sig.receiver() {
        None => {
            ctxt.error_spanned_by(
                &sig.ident,
                "the tool's method takes `&self`: `fn search(&self, …)`",
            );
            false
        }
        Some(receiver) if receiver.reference.is_some() && receiver.mutability.is_some() => {
            ctxt.error_spanned_by(
                receiver,
                "a tool takes `&self`, not `&mut self`: the agent may run calls at once; keep \
                 what changes behind a `Mutex` or an atomic",
            );
            false
        }
        Some(receiver) if receiver.reference.is_none() || receiver.colon_token.is_some() => {
            ctxt.error_spanned_by(receiver, "a tool method takes `&self`");
            false
        }
        Some(_) => true,
    }
}

/// The rules shared by functions and methods.
fn signature<'a>(
    ctxt: &Ctxt,
    attr: &ToolAttr,
    attrs: &[Attribute],
    sig: &'a Signature,
) -> Option<ToolModel<'a>> {
    let errors = ctxt.error_count();
    if let Some(unsafety) = &sig.unsafety {
        ctxt.error_spanned_by(unsafety, "a tool cannot be an `unsafe fn`");
    }
    if let Some(abi) = &sig.abi {
        ctxt.error_spanned_by(abi, "a tool cannot be an `extern` function");
    }
    if let (Some(_), Some(asyncness)) = (&attr.blocking, &sig.asyncness) {
        ctxt.error_spanned_by(
            asyncness,
            "`#[tool(blocking)]` runs a synchronous body on a blocking thread: drop `async` (the \
             body is a plain `fn` that may block), or drop `blocking` (an `async fn` must not \
             block its thread)",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        ctxt.error_spanned_by(
            &sig.generics,
            "a tool cannot be generic: the model's arguments are deserialized into one concrete \
             type per parameter",
        );
    }
    let name = tool_name(ctxt, attr, &sig.ident);
    let description = match &attr.description {
        Some(text) if text.value().trim().is_empty() => {
            ctxt.error_spanned_by(text, "the description must not be empty");
            String::new()
        }
        Some(text) => text.value().trim().to_owned(),
        None => doc_text(attrs).unwrap_or_else(|| {
            ctxt.error_spanned_by(
                &sig.ident,
                "a tool needs a description for the model: add a doc comment or \
                 `description = \"…\"`",
            );
            String::new()
        }),
    };
    let mut params = Vec::new();
    let mut context: Option<&Type> = None;
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else {
            // A receiver: checked by the caller (allowed on a method, reported on a function).
            continue;
        };
        if is_hook_context(&typed.ty) {
            ctxt.error_spanned_by(
                &typed.ty,
                "a tool receives its context as `cx: ToolContext<'_>` (a `&mut Context` is a \
                 hook's)",
            );
            continue;
        }
        if is_context(&typed.ty) {
            if attr.blocking.is_some() {
                ctxt.error_spanned_by(
                    &typed.ty,
                    "a `#[tool(blocking)]` function cannot take a `ToolContext`: the context \
                     borrows the run, and the body runs on a thread of its own; make the tool \
                     an `async fn`, take what it needs of the context there, and run the \
                     blocking part with `tokio::task::spawn_blocking`",
                );
                continue;
            }
            if context.is_some() {
                ctxt.error_spanned_by(
                    &typed.ty,
                    "a tool takes at most one `ToolContext`: remove this parameter",
                );
            }
            context = Some(&typed.ty);
            params.push(Param::Context);
            continue;
        }
        let ident = match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(&pat.ident),
            other => {
                ctxt.error_spanned_by(
                    other,
                    "a tool's parameter is one name, which is the argument's name for the \
                     model: write `a: i32, b: i32` rather than a pattern",
                );
                None
            }
        };
        for attr in &typed.attrs {
            if attr.path().is_ident("serde") || attr.path().is_ident("schemars") {
                ctxt.error_spanned_by(
                    attr,
                    "a tool's parameter takes no `#[serde]` or `#[schemars]` attribute: its name \
                     is the argument's name, its type's own derives shape it, and its doc \
                     comment describes it",
                );
            }
        }
        if owned(ctxt, &typed.ty)
            && let Some(ident) = ident
        {
            params.push(Param::Argument {
                name: unraw(ident),
                ty: &typed.ty,
                description: doc_text(&typed.attrs).unwrap_or_default(),
                optional: is_named(&typed.ty, "Option"),
            });
        }
    }
    let returns = match &sig.output {
        syn::ReturnType::Default => Returns::Plain(sig.ident.span()),
        syn::ReturnType::Type(_, ty) if returns(ty, "ToolResult") => Returns::ToolResult(ty.span()),
        syn::ReturnType::Type(_, ty) if returns(ty, "Content") => Returns::Content(ty.span()),
        syn::ReturnType::Type(_, ty) if is_named(ty, "Result") => Returns::Fallible(ty.span()),
        syn::ReturnType::Type(_, ty) => Returns::Plain(ty.span()),
    };
    (ctxt.error_count() == errors).then(|| ToolModel {
        name,
        description,
        params,
        returns,
        output: match &sig.output {
            syn::ReturnType::Type(_, ty) => Some(&**ty),
            syn::ReturnType::Default => None,
        },
        is_async: sig.asyncness.is_some(),
        blocking: attr.blocking.as_ref().map(Ident::span),
        fn_span: sig.ident.span(),
    })
}

/// The tool's name: `name = "…"`, or the function's. Providers accept `[a-zA-Z0-9_-]{1,64}`.
fn tool_name(ctxt: &Ctxt, attr: &ToolAttr, ident: &Ident) -> String {
    let Some(literal) = &attr.name else {
        return unraw(ident);
    };
    let name = literal.value();
    let fits = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !fits {
        ctxt.error_spanned_by(
            literal,
            "a tool's name is 1 to 64 ASCII letters, digits, `_` or `-`, as providers require",
        );
    }
    name
}

/// Whether the parameter is a hook's context: `Context`, `&Context` or `&mut Context`, by any
/// path.
fn is_hook_context(ty: &Type) -> bool {
    let ty = match ty {
        Type::Reference(reference) => &*reference.elem,
        other => other,
    };
    is_named(ty, "Context")
}

/// Whether the parameter is the call's context: a `ToolContext<'_>` by any path.
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "ToolContext"),
        _ => false,
    }
}

/// Whether the argument type is owned; a reference or an `impl Trait` is reported with the
/// owned type to write instead.
fn owned(ctxt: &Ctxt, ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => {
            let instead = match &*reference.elem {
                Type::Path(path) if path.path.is_ident("str") => "String".to_owned(),
                Type::Slice(slice) => {
                    format!("Vec<{}>", quote::ToTokens::to_token_stream(&slice.elem))
                }
                Type::Path(path) if is_context(&Type::Path(path.clone())) => {
                    "ToolContext<'_>".to_owned()
                }
                other => quote::ToTokens::to_token_stream(other).to_string(),
            };
            ctxt.error_spanned_by(
                ty,
                format!(
                    "a tool's arguments are owned, deserialized from the model's JSON: use \
                     `{instead}`"
                ),
            );
            false
        }
        Type::ImplTrait(_) => {
            ctxt.error_spanned_by(
                ty,
                "a tool cannot be generic: give this parameter a concrete type",
            );
            false
        }
        _ => true,
    }
}

/// Whether the type is `name`, or `Result<name, E>` (by name: the macro sees no types).
fn returns(ty: &Type, name: &str) -> bool {
    if is_named(ty, name) {
        return true;
    }
    let Type::Path(path) = ty else { return false };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return false;
    };
    last.ident == "Result"
        && matches!(arguments.args.first(), Some(syn::GenericArgument::Type(ok)) if is_named(ok, name))
}

/// Whether the type's last path segment is `name`: `Result<..>` by any path
/// (`std::io::Result<T>`, `anyhow::Result<T>`, an alias) is an `Ok` value or an error, and
/// `Option<..>` an argument that may be left out.
fn is_named(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == name),
        _ => false,
    }
}
