//! `#[middleware]` on a hand-written `impl Middleware for X { .. }`: the impl as written, with
//! the items its methods already say added — the hooks it overrides (`HOOKS`), the wrap
//! markers, `()` states, the `Wrap` phase, the name and the identity. Nothing the user wrote is
//! changed; what they wrote of these items wins (and the chain still checks that the markers
//! agree with `HOOKS`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl};

use crate::kinds::HookKind;
use crate::private::{Private, located};

/// Whether `block` is an impl of the `Middleware` trait (by its last path segment).
pub(crate) fn is_middleware_impl(block: &ItemImpl) -> bool {
    block.trait_.as_ref().is_some_and(|(bang, path, _)| {
        bang.is_none()
            && path
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "Middleware")
    })
}

/// The impl, completed. `attr` must be empty: the trait form takes its settings as items.
pub(crate) fn expand(attr: TokenStream, block: ItemImpl) -> TokenStream {
    // The impl is completed either way: a mistake in the options is then the only error.
    let error = (!attr.is_empty()).then(|| {
        syn::Error::new_spanned(
            &attr,
            "on an `impl Middleware` block, `#[middleware]` takes no options: write them as \
             items of the impl (`type State = ..;`, `const LIVE_STREAM: bool = true;`, …)",
        )
        .to_compile_error()
    });
    let check = own_rules(&block);
    let block = complete(block);
    quote!(#error #block #check)
}

/// For an impl of a type without generic parameters: its own items checked against each other
/// (the wrap markers against `HOOKS`, the hooks against the phase) in a `const`, so that a
/// disagreement is one error in `cargo check`, in words, at the item the user wrote (`HOOKS`,
/// a marker or the phase; else the type), instead of failing the build inside hookchain's
/// source when the chain is built.
fn own_rules(block: &ItemImpl) -> Option<TokenStream> {
    if !block.generics.params.is_empty() || !crate::check::nameable(&block.self_ty) {
        return None;
    }
    let written = ["HOOKS", "WrapsModel", "WrapsTool", "Phase"]
        .into_iter()
        .find_map(|name| {
            block.items.iter().find_map(|item| match item {
                ImplItem::Type(alias) if alias.ident == name => Some(alias.ident.span()),
                ImplItem::Const(constant) if constant.ident == name => Some(constant.ident.span()),
                _ => None,
            })
        });
    let span = located(written.unwrap_or_else(|| block.self_ty.span()));
    let p = Private::new(None);
    let pp = p.at(span);
    let ty = &block.self_ty;
    Some(quote_spanned! {span=>
        const _: () = {
            if let #pp::Result::Err(failure) = #pp::ChainChecks::<#ty>::own_rules() {
                #pp::panic!("{}", failure.message())
            }
        };
    })
}

/// `block` with the items its methods imply.
fn complete(mut block: ItemImpl) -> ItemImpl {
    let p = Private::new(None);
    let has_item = |name: &str| {
        block.items.iter().any(|item| match item {
            ImplItem::Type(alias) => alias.ident == name,
            ImplItem::Const(constant) => constant.ident == name,
            _ => false,
        })
    };
    let hooks: Vec<HookKind> = HookKind::ALL
        .into_iter()
        .filter(|kind| {
            block
                .items
                .iter()
                .any(|item| matches!(item, ImplItem::Fn(method) if method.sig.ident == kind.name()))
        })
        .collect();
    let type_name = self_type_name(&block);
    let mut added: Vec<TokenStream> = Vec::new();
    for state in ["State", "ThreadState", "StreamState"] {
        if !has_item(state) {
            let ident = format_ident!("{state}");
            added.push(quote!(type #ident = ();));
        }
    }
    if !has_item("Phase") {
        added.push(quote!(type Phase = #p::phase::Wrap;));
    }
    let marker = |kind: HookKind| {
        if hooks.contains(&kind) {
            quote!(#p::True)
        } else {
            quote!(#p::False)
        }
    };
    if !has_item("WrapsModel") {
        let marker = marker(HookKind::WrapModelCall);
        added.push(quote!(type WrapsModel = #marker;));
    }
    if !has_item("WrapsTool") {
        let marker = marker(HookKind::WrapToolCall);
        added.push(quote!(type WrapsTool = #marker;));
    }
    if !has_item("NAME") {
        added.push(quote!(const NAME: &'static str = #type_name;));
    }
    if !has_item("IDENTITY") {
        added.push(quote! {
            const IDENTITY: #p::Option<&'static str> =
                #p::Some(#p::concat!(#p::module_path!(), "::", #type_name));
        });
    }
    if !has_item("HOOKS") {
        let with = hooks.iter().map(|kind| {
            let variant = format_ident!("{}", kind.variant());
            quote!(.with(#p::Hook::#variant))
        });
        added.push(quote!(const HOOKS: #p::HookSet = #p::HookSet::NONE #(#with)*;));
    }
    for item in added {
        block.items.push(ImplItem::Verbatim(item));
    }
    block
}

/// The name of the impl's type as written, without generics (`Audit` for `Audit<T>`).
fn self_type_name(block: &ItemImpl) -> String {
    match &*block.self_ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .map_or_else(String::new, |segment| segment.ident.to_string()),
        other => quote!(#other).to_string(),
    }
}
