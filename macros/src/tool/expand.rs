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
    /// The method `method` of the impl block's type.
    Method(&'a syn::Ident),
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
        Some(method) => tool_impl(p, &quote!(#self_ty), Callee::Method(method), model),
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
        checks.push(quote_spanned! {span=>
            fn #check() -> #pp::Argument<#ty> {
                <#ty as #pp::ToolArgument>::argument()
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
    let invoke = match callee {
        Callee::Free(ident) => quote_spanned!(fn_span=> #ident::call(#(#values),*)),
        Callee::Method(method) => {
            quote_spanned!(fn_span=> <#self_ty>::#method(self, #(#values),*))
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
    let convert = match model.returns {
        Returns::Plain(span) => conversion(p, span, quote!(ToolOutput), &output, name),
        Returns::Fallible(span) => conversion(p, span, quote!(FallibleToolOutput), &output, name),
        Returns::ToolResult(span) => conversion(p, span, quote!(ToolResultOutput), &output, name),
        Returns::Content(span) => conversion(p, span, quote!(ContentOutput), &output, name),
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
    let pf = p.at(model.fn_span);
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
