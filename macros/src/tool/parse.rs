//! Syntax of `#[tool]`: the options, and the item — a function, whose body is kept as tokens
//! (never parsed: faster, and it still works while the body is half-written), or an impl block.

use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, ItemImpl, LitStr, Path, Signature, Token, Visibility};

use crate::attr::segments;
use crate::ctxt::Ctxt;

/// The options `#[tool(..)]` takes, in the order the "unknown option" message lists them.
pub(crate) const KEYS: [&str; 4] = ["name", "description", "blocking", "crate"];

/// The options of `#[tool(..)]`, each with its key for messages.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    /// `blocking`: the synchronous body runs on a blocking thread; its keyword, for spans.
    pub(crate) blocking: Option<Ident>,
    pub(crate) krate: Option<Path>,
}

impl ToolAttr {
    /// Parses the options; each mistake is reported, and the option left unset.
    pub(crate) fn parse(ctxt: &Ctxt, tokens: TokenStream) -> ToolAttr {
        let mut attr = ToolAttr::default();
        let mut seen: Vec<String> = Vec::new();
        for segment in segments(ctxt, tokens) {
            let key = segment.key.to_string();
            if !KEYS.contains(&key.as_str()) {
                let hint = match key.as_str() {
                    "rename" => "; to name the tool, use `name = \"…\"`",
                    "doc" | "desc" | "about" => "; to describe the tool, use `description = \"…\"`",
                    "sync" | "spawn_blocking" | "blocks" | "block" | "thread" => {
                        "; to run a synchronous body on a blocking thread, use `blocking`"
                    }
                    _ => "",
                };
                ctxt.error_spanned_by(
                    &segment.key,
                    format!(
                        "unknown option `{key}` for `#[tool]`: expected one of `name`, \
                         `description`, `blocking`, `crate`{hint}"
                    ),
                );
                continue;
            }
            if seen.contains(&key) {
                ctxt.error_spanned_by(
                    &segment.key,
                    format!("`{key}` specified more than once in `#[tool]`"),
                );
                continue;
            }
            seen.push(key.clone());
            if key == "blocking" {
                match segment.value {
                    None => attr.blocking = Some(segment.key),
                    Some(value) => ctxt.error_spanned_by(
                        value,
                        "`blocking` takes no value: write `#[tool(blocking)]`, or leave it out",
                    ),
                }
                continue;
            }
            let Some(value) = segment.value else {
                let example = match key.as_str() {
                    "crate" => "crate = my_hookchain",
                    "name" => "name = \"get_weather\"",
                    _ => "description = \"Gets the weather.\"",
                };
                ctxt.error_spanned_by(&segment.key, format!("`{key}` needs a value: `{example}`"));
                continue;
            };
            match key.as_str() {
                "name" | "description" => match syn::parse2::<LitStr>(value) {
                    Ok(text) if key == "name" => attr.name = Some(text),
                    Ok(text) => attr.description = Some(text),
                    Err(error) => ctxt.error_at(
                        error.span(),
                        format!("`{key}` takes a string literal: `{key} = \"…\"`"),
                    ),
                },
                _ => match parse_crate(value) {
                    Ok(path) => attr.krate = Some(path),
                    Err(error) => ctxt.error_at(
                        error.span(),
                        "`crate` takes the path of the hookchain crate: `crate = my_hookchain`",
                    ),
                },
            }
        }
        attr
    }
}

fn parse_crate(value: TokenStream) -> syn::Result<Path> {
    match syn::parse2::<LitStr>(value.clone()) {
        Ok(literal) => literal.parse(),
        Err(_) => syn::parse2::<Path>(value),
    }
}

/// What `#[tool]` is on.
pub(crate) enum ToolItem {
    /// A function (free, or — wrongly — a method in a plain impl block).
    Fn(Box<FnItem>),
    /// An impl block.
    Impl(Box<ItemImpl>),
    /// Anything else: the item as written, and the token naming its kind (`struct`, `enum`).
    Other(TokenStream, Span),
}

pub(crate) use crate::fn_item::FnItem;

impl Parse for ToolItem {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let fork = input.fork();
        fork.call(Attribute::parse_outer)?;
        fork.parse::<Visibility>()?;
        if fork.peek(Token![impl]) || (fork.peek(Token![unsafe]) && fork.peek2(Token![impl])) {
            return Ok(ToolItem::Impl(Box::new(input.parse()?)));
        }
        let is_fn = {
            let sig = fork.fork();
            sig.parse::<Signature>().is_ok()
        };
        if !is_fn {
            let kind = fork
                .cursor()
                .token_tree()
                .map_or(Span::call_site(), |(tree, _)| tree.span());
            return Ok(ToolItem::Other(input.parse()?, kind));
        }
        Ok(ToolItem::Fn(Box::new(input.parse()?)))
    }
}

/// The text of the doc comments among `attrs`: each line trimmed, the lines joined with
/// newlines, blank lines at either end dropped. `None` when there is no text.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value:
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(text),
                        ..
                    }),
                ..
            }) => Some(text.value()),
            _ => None,
        })
        .flat_map(|text| {
            text.lines()
                .map(|line| line.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Whether `ident` is the name, without a raw `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map_or(name.clone(), str::to_owned)
}
