//! Generation for `#[tool]`: no decisions, no errors.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{FnArg, ItemImpl, Signature};

use super::parse::FnItem;
use super::validate::{Param, Returns, ToolModel};
use crate::private::{Private, located};

/// What the tool function is, for the generated `call`.
pub(crate) enum Callee<'a> {
    /// A free function, moved to `name::call`.
    Free(&'a syn::Ident),
    /// The method `method` of the impl block's type (the second field).
    Method(&'a syn::Ident, &'a syn::Type),
}

/// A free function: the unit type, the function as its `call`, and `impl Tool`.
pub(crate) fn expand_fn(p: &Private, function: &FnItem, model: &ToolModel<'_>) -> TokenStream {
    let ident = &function.sig.ident;
    let unit = unit_type(function, p);
    let tool = tool_impl(p, &quote!(#ident), Callee::Free(ident), model);
    quote! {
        #unit
        #tool
    }
}

/// An impl block: the block as written (parameter docs moved to the schema), and `impl Tool`
/// for its type.
pub(crate) fn expand_impl(p: &Private, block: &ItemImpl, model: &ToolModel<'_>) -> TokenStream {
    let self_ty = &block.self_ty;
    let block = strip_impl(block);
    let method = block.items.iter().find_map(|item| match item {
        syn::ImplItem::Fn(method) => Some(method.sig.ident.clone()),
        _ => None,
    });
    let tool = match &method {
        Some(method) => tool_impl(p, &quote!(#self_ty), Callee::Method(method, self_ty), model),
        None => TokenStream::new(),
    };
    quote! {
        #block
        #tool
    }
}

/// On error: the errors, the function as written (still callable as `name::call`), and an inert
/// tool in its place, so code using it gets no second error.
pub(crate) fn fallback_fn(p: &Private, function: &FnItem, error: syn::Error) -> TokenStream {
    let ident = &function.sig.ident;
    let unit = unit_type(function, p);
    let inert = inert_tool(p, &quote!(#ident));
    let error = error.to_compile_error();
    quote! {
        #error
        #unit
        #inert
    }
}

/// On error: the errors, the impl block as written, and an inert tool for a plain type.
pub(crate) fn fallback_impl(p: &Private, block: &ItemImpl, error: syn::Error) -> TokenStream {
    let inert = if block.trait_.is_none() && block.generics.params.is_empty() {
        let self_ty = &block.self_ty;
        inert_tool(p, &quote!(#self_ty))
    } else {
        TokenStream::new()
    };
    let block = strip_impl(block);
    let error = error.to_compile_error();
    quote! {
        #error
        #block
        #inert
    }
}

/// `struct name;` and the function as `name::call`.
fn unit_type(function: &FnItem, p: &Private) -> TokenStream {
    function.unit_type(
        p,
        &strip_sig(&function.sig),
        "The tool function itself, callable on its own.",
    )
}

/// The signature without the parameters' doc comments (rustc allows none there; they went to
/// the schema) and without `#[serde]`/`#[schemars]` attributes (already reported: left in, they
/// would add a second error).
fn strip_sig(sig: &Signature) -> Signature {
    let mut sig = sig.clone();
    for input in &mut sig.inputs {
        if let FnArg::Typed(typed) = input {
            typed.attrs.retain(|attr| {
                !["doc", "serde", "schemars"]
                    .iter()
                    .any(|name| attr.path().is_ident(name))
            });
        }
    }
    sig
}

fn strip_impl(block: &ItemImpl) -> ItemImpl {
    let mut block = block.clone();
    for item in &mut block.items {
        if let syn::ImplItem::Fn(method) = item {
            method.sig = strip_sig(&method.sig);
        }
    }
    block
}

/// The argument helpers and `impl Tool for self_ty`, in an anonymous const.
fn tool_impl(
    p: &Private,
    self_ty: &TokenStream,
    callee: Callee<'_>,
    model: &ToolModel<'_>,
) -> TokenStream {
    let name = &model.name;
    let description = &model.description;
    let cx = format_ident!("__hookchain_cx");
    let mut checks = Vec::new();
    let mut schema = Vec::new();
    let mut takes = Vec::new();
    let mut types = Vec::new();
    let mut locals = Vec::new();
    let mut values = Vec::new();
    for (index, param) in model.params.iter().enumerate() {
        let Param::Argument {
            name: argument,
            ty,
            description,
            optional,
        } = param
        else {
            values.push(quote!(#cx));
            continue;
        };
        // The one place the argument type is checked, located at the user's type: a type that
        // cannot be an argument is one error, there.
        let check = format_ident!("__hookchain_argument_{}", index);
        let span = located(syn::spanned::Spanned::span(ty));
        let pp = p.at(span);
        checks.push(argument_check(p, ty));
        checks.push(quote_spanned! {span=>
            fn #check() -> #pp::Argument<#ty> {
                #[allow(unused_imports)]
                use #pp::NoArgument as _;
                <#pp::Has<#ty>>::ARGUMENT
            }
        });
        let required = !optional;
        schema.push(quote!(.argument(#check(), #argument, #description, #required)));
        takes.push(quote!(#check().take(tool, &mut arguments, #argument)?));
        types.push(quote!(#ty));
        let local = format_ident!("__hookchain_arg_{}", index);
        values.push(quote!(#local));
        locals.push(local);
    }
    let takes_context = model
        .params
        .iter()
        .any(|param| matches!(param, Param::Context));
    let fn_span = located(model.fn_span);
    let pf = p.at(model.fn_span);
    let invoke = match (callee, model.blocking) {
        (Callee::Free(ident), None) => quote_spanned!(fn_span=> #ident::call(#(#values),*)),
        (Callee::Method(method, _), None) => {
            quote_spanned!(fn_span=> <#self_ty>::#method(self, #(#values),*))
        }
        (callee, Some(blocking)) => {
            checks.push(tokio_check(p, blocking));
            blocking_call(p, self_ty, callee, model, &locals, &mut checks)
        }
    };
    let invoke = if model.is_async {
        quote_spanned!(fn_span=> #invoke.await)
    } else {
        invoke
    };
    // Without a context parameter the function cannot read the answer to an interrupt it
    // raised: on a resumed call, the answer is the result (as for `FnTool`).
    let resumed = if takes_context {
        TokenStream::new()
    } else {
        quote! {
            if let #p::Some(answer) = #cx.resume_value() {
                return #p::Result::Ok(#p::answer_as_content(answer));
            }
        }
    };
    let output = format_ident!("__hookchain_output");
    let convert = match (model.output, model.returns) {
        // A return type a `const` can name: checked there, in words, and converted without a
        // bound of ours (see `result_check`).
        (Some(ty), returns) if crate::check::nameable(ty) => {
            checks.push(result_check(p, ty, returns));
            let span = located(syn::spanned::Spanned::span(ty));
            let pp = p.at(span);
            let (otherwise, constant) = match returns {
                Returns::Plain(_) => ("NoPlainConvert", "PLAIN_CONVERT"),
                Returns::Fallible(_) => ("NoFallibleConvert", "FALLIBLE_CONVERT"),
                Returns::ToolResult(_) => ("NoToolResultConvert", "TOOL_RESULT_CONVERT"),
                Returns::Content(_) => ("NoContentConvert", "CONTENT_CONVERT"),
            };
            let otherwise = syn::Ident::new(otherwise, span);
            let constant = syn::Ident::new(constant, span);
            quote_spanned! {span=> {
                #[allow(unused_imports)]
                use #pp::#otherwise as _;
                (<#pp::Has<#ty>>::#constant)(#output, #name)
            }}
        }
        (_, Returns::Plain(span)) => conversion(p, span, quote!(ToolOutput), &output, name),
        (_, Returns::Fallible(span)) => {
            conversion(p, span, quote!(FallibleToolOutput), &output, name)
        }
        (_, Returns::ToolResult(span)) => {
            conversion(p, span, quote!(ToolResultOutput), &output, name)
        }
        (_, Returns::Content(span)) => conversion(p, span, quote!(ContentOutput), &output, name),
    };
    // Located at the function's name: a future that is not `Send` is reported there.
    let body = quote_spanned! {fn_span=>
        async move {
            #resumed
            let (#(#locals,)*) = __hookchain_arguments(#name, arguments)?;
            let #output = #invoke;
            #convert
        }
    };
    let call = quote_spanned! {fn_span=>
        fn call<'c>(
            &self,
            #cx: #pf::ToolContext<'c>,
            arguments: #pf::Value,
        ) -> impl #pf::Future<Output = #pf::Result<#pf::Content, #pf::ToolError>> + #pf::Send {
            #body
        }
    };
    quote! {
        const _: () = {
            #(#checks)*

            /// The model's arguments, each read into its parameter's type.
            fn __hookchain_arguments(
                tool: &str,
                arguments: #p::Value,
            ) -> #p::Result<(#(#types,)*), #p::ToolError> {
                #[allow(unused_mut, unused_variables)]
                let mut arguments = #p::argument_object(tool, arguments)?;
                #p::Result::Ok((#(#takes,)*))
            }

            #[automatically_derived]
            #[diagnostic::do_not_recommend]
            impl #p::Tool for #self_ty {
                fn spec(&self) -> #p::ToolSpec {
                    #p::ToolSpec::new(#name, #description, #p::ArgumentsSchema::new() #(#schema)* .finish())
                }

                fn check_arguments(
                    &self,
                    arguments: &#p::Value,
                ) -> #p::Result<(), #p::ToolError> {
                    __hookchain_arguments(#name, #p::Clone::clone(arguments)).map(|_| ())
                }

                #call
            }
        };
    }
}

/// The body on a blocking thread, with the arguments (and, for a method, a clone of the tool)
/// moved in; its result, or the tool's failure, comes back with `?`.
///
/// When every type involved can be named in a `const`, each is checked to be `Send` there, at
/// the user's token, and the call goes through `Has<(arguments, result)>::RUN_BLOCKING`, which
/// makes no bound of its own: a type that cannot cross threads is one error, in words. Otherwise
/// (a result type with a lifetime, say) the call is `run_blocking` itself, located at the
/// function's name, where rustc reports an unmet `Send`.
fn blocking_call(
    p: &Private,
    self_ty: &TokenStream,
    callee: Callee<'_>,
    model: &ToolModel<'_>,
    locals: &[syn::Ident],
    checks: &mut Vec<TokenStream>,
) -> TokenStream {
    use crate::check::nameable;
    let name = &model.name;
    let fn_span = located(model.fn_span);
    let pf = p.at(model.fn_span);
    let this = format_ident!("__hookchain_this");
    let (receiver, call, receiver_ty) = match callee {
        Callee::Free(ident) => (
            TokenStream::new(),
            quote_spanned!(fn_span=> #ident::call(#(#locals),*)),
            None,
        ),
        Callee::Method(method, ty) => {
            let cloned = if nameable(ty) {
                checks.push(clone_check(p, ty));
                let span = located(syn::spanned::Spanned::span(ty));
                let pp = p.at(span);
                quote_spanned! {span=> {
                    #[allow(unused_imports)]
                    use #pp::NoCloned as _;
                    (<#pp::Has<#ty>>::CLONED)(self)
                }}
            } else {
                quote_spanned!(fn_span=> #pf::Clone::clone(self))
            };
            (
                quote_spanned!(fn_span=> let #this = #cloned;),
                quote_spanned!(fn_span=> <#self_ty>::#method(&#this, #(#locals),*)),
                Some(ty),
            )
        }
    };
    let arguments: Vec<&syn::Type> = model
        .params
        .iter()
        .filter_map(|param| match param {
            Param::Argument { ty, .. } => Some(*ty),
            Param::Context => None,
        })
        .collect();
    let checked = arguments.iter().copied().chain(model.output).all(nameable)
        && receiver_ty.is_none_or(nameable);
    if !checked {
        return quote_spanned! {fn_span=> {
            #receiver
            #pf::run_blocking(#name, move || #call).await?
        }};
    }
    for ty in &arguments {
        checks.push(send_check(p, ty, true));
    }
    if let Some(ty) = model.output {
        checks.push(send_check(p, ty, false));
    }
    let moved = match receiver_ty {
        Some(_) => quote!(#this, #(#locals,)*),
        None => quote!(#(#locals,)*),
    };
    let moved_types = match receiver_ty {
        Some(ty) => quote!(#ty, #(#arguments,)*),
        None => quote!(#(#arguments,)*),
    };
    let output = match model.output {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    };
    quote_spanned! {fn_span=> {
        #receiver
        #[allow(unused_imports)]
        use #pf::NoRunBlocking as _;
        (<#pf::Has<((#moved_types), #output)>>::RUN_BLOCKING)(
            #name,
            (#moved),
            |(#moved)| #call,
        )
        .await?
    }}
}

/// The check that an argument or the result of a `#[tool(blocking)]` is `Send`: one error, at
/// the type.
fn send_check(p: &Private, ty: &syn::Type, argument: bool) -> TokenStream {
    use crate::check::{Bound, first_missing, type_text};
    let (lead, missing, fix) = if argument {
        (
            format!(
                "`{}` cannot be an argument of a `#[tool(blocking)]`",
                type_text(ty)
            ),
            "it is not `Send`, and it is moved to the blocking thread",
            "Take owned values that can be sent to another thread (no `Rc`), such as a `String`.",
        )
    } else {
        (
            format!(
                "`{}` cannot be the result of a `#[tool(blocking)]`",
                type_text(ty)
            ),
            "it is not `Send`, and it comes back from the blocking thread",
            "Return an owned value that can be sent to another thread (no `Rc`), such as a \
             `String`.",
        )
    };
    first_missing(
        p,
        ty,
        &lead,
        &[Bound::new("SEND", "NoSend", missing.to_owned())],
        fix,
    )
}

/// The result conversion, located at the user's return type, so that a type that cannot be a
/// tool's result is reported there.
fn conversion(
    p: &Private,
    span: Span,
    conversion: TokenStream,
    output: &syn::Ident,
    name: &str,
) -> TokenStream {
    let located = located(span);
    let pp = p.at(span);
    // The argument is located at the return type too: rustc reports an unmet bound of a
    // function's argument at the argument.
    let output = syn::Ident::new(&output.to_string(), located);
    quote_spanned!(located=> #pp::#conversion::into_tool_output(#output, #name))
}

/// `impl Tool` with a spec and call that never run: the build already failed.
fn inert_tool(p: &Private, self_ty: &TokenStream) -> TokenStream {
    quote! {
        const _: () = {
            #[automatically_derived]
            #[diagnostic::do_not_recommend]
            impl #p::Tool for #self_ty {
                fn spec(&self) -> #p::ToolSpec {
                    ::core::unreachable!()
                }

                fn call<'c>(
                    &self,
                    _: #p::ToolContext<'c>,
                    _: #p::Value,
                ) -> impl #p::Future<Output = #p::Result<#p::Content, #p::ToolError>> + #p::Send {
                    async { ::core::unreachable!() }
                }
            }
        };
    }
}

/// The check that hookchain has its feature `tokio`, for `#[tool(blocking)]`: one error, at
/// `blocking`.
fn tokio_check(p: &Private, blocking: Span) -> TokenStream {
    let span = located(blocking);
    let pp = p.at(blocking);
    let message = "`#[tool(blocking)]` needs hookchain's feature `tokio`, whose blocking threads \
                   run the body: turn it on (`features = [\"tokio\"]` on the `hookchain` \
                   dependency), or make the tool an `async fn` that does not block its thread";
    let mut arguments =
        proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, quote!("{}", #message));
    arguments.set_span(span);
    quote_spanned! {span=>
        const _: () = if !#pp::TOKIO {
            #pp::panic! #arguments
        };
    }
}

/// The check that a `#[tool(blocking)]` impl block's type is `Clone`: one error, at the type.
fn clone_check(p: &Private, ty: &syn::Type) -> TokenStream {
    use crate::check::{Bound, first_missing, type_text};
    first_missing(
        p,
        ty,
        &format!("`{}` cannot be a `#[tool(blocking)]` type", type_text(ty)),
        &[Bound::new(
            "CLONE",
            "NoClone",
            "it is not `Clone`, and the blocking body runs on a thread of its own, with a clone \
             of the tool"
                .to_owned(),
        )],
        "Derive `Clone`, keeping a handle that is costly to clone (a client, a pool) in an `Arc`.",
    )
}

/// The check of an argument type: one error, at the type, naming the bound it misses.
fn argument_check(p: &Private, ty: &syn::Type) -> TokenStream {
    use crate::check::{Bound, first_missing, type_text};
    let lead = format!("`{}` cannot be a tool's argument", type_text(ty));
    let bounds = [
        Bound::new(
            "DESERIALIZE",
            "NoDeserialize",
            "it is not `serde::Deserialize`, and the model's JSON is deserialized into it"
                .to_owned(),
        ),
        Bound::new(
            "JSON_SCHEMA",
            "NoJsonSchema",
            "it is not `schemars::JsonSchema`, and its schema is shown to the model".to_owned(),
        ),
    ];
    first_missing(
        p,
        ty,
        &lead,
        &bounds,
        "Arguments are owned values: `String`, numbers, `bool`, `Vec<T>`, `Option<T>`, and your \
         own types with `#[derive(serde::Deserialize, schemars::JsonSchema)]`.",
    )
}

/// The check of a result type: one error, at the type, naming what it misses.
fn result_check(p: &Private, ty: &syn::Type, returns: Returns) -> TokenStream {
    use crate::check::{Bound, first_missing, type_text};
    let lead = format!("`{}` cannot be a tool's result", type_text(ty));
    match returns {
        Returns::Plain(_) => first_missing(
            p,
            ty,
            &lead,
            &[Bound::new(
                "PLAIN",
                "NoPlain",
                "it is not `serde::Serialize`, and the model reads it as JSON".to_owned(),
            )],
            "A `String` is the text the model reads; on a type of yours, \
             `#[derive(serde::Serialize)]`.",
        ),
        Returns::Fallible(_) => {
            let fix = "Return `Result<T, E>` with `T: serde::Serialize` (a `String` is the text \
                       the model reads) and `E` any error type, such as `hookchain::ToolError`.";
            let bounds = match result_arguments(ty) {
                Some((ok, error)) => vec![
                    Bound::new(
                        "SERIALIZE",
                        "NoSerialize",
                        format!(
                            "its `Ok` type `{}` is not `serde::Serialize`, and the model reads it \
                             as JSON",
                            type_text(ok)
                        ),
                    )
                    .of(ok),
                    Bound::new(
                        "INTO_BOX_ERROR",
                        "NoBoxError",
                        format!(
                            "its error type `{}` does not convert into \
                             `Box<dyn std::error::Error + Send + Sync>`",
                            type_text(error)
                        ),
                    )
                    .of(error),
                ],
                None => vec![Bound::new(
                    "FALLIBLE",
                    "NoFallible",
                    "its `Ok` type must be `serde::Serialize`, and its error an error type"
                        .to_owned(),
                )],
            };
            first_missing(p, ty, &lead, &bounds, fix)
        }
        Returns::ToolResult(_) => first_missing(
            p,
            ty,
            &lead,
            &[Bound::new(
                "TOOL_RESULT",
                "NoToolResult",
                "a tool function returning a type named `ToolResult` must return \
                 `hookchain::ToolResult`"
                    .to_owned(),
            )],
            "Rename your own type, or return it through `Result<T, E>`.",
        ),
        Returns::Content(_) => first_missing(
            p,
            ty,
            &lead,
            &[Bound::new(
                "CONTENT",
                "NoContent",
                "a tool function returning a type named `Content` must return \
                 `hookchain::message::Content`"
                    .to_owned(),
            )],
            "Rename your own type, or name it through an alias (`type Page = Content;`): the \
             macro finds hookchain's `Content` by its name.",
        ),
    }
}

/// `T` and `E` of `Result<T, E>`, when both are written and can be named in a `const`.
fn result_arguments(ty: &syn::Type) -> Option<(&syn::Type, &syn::Type)> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return None;
    };
    let mut types = arguments.args.iter().filter_map(|argument| match argument {
        syn::GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(error), None) => Some((ok, error)),
        _ => None,
    }
}
