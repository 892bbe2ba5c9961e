//! The options of `#[hook(..)]` and `#[middleware(..)]`: split at top-level commas, each
//! `key = value` checked on its own, so every mistake in one attribute is reported at once.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Path, Token, Type};

use crate::ctxt::Ctxt;

/// One comma-separated part of an attribute: `key`, or `key = value`.
pub(crate) struct Segment {
    pub(crate) key: Ident,
    pub(crate) value: Option<TokenStream>,
}

/// Splits `tokens` at top-level commas. A segment that does not start with `ident` or
/// `ident = …` is reported and skipped.
pub(crate) fn segments(ctxt: &Ctxt, tokens: TokenStream) -> Vec<Segment> {
    let mut parts: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for tree in tokens {
        match &tree {
            TokenTree::Punct(punct) if punct.as_char() == ',' => parts.push(Vec::new()),
            _ => {
                if let Some(part) = parts.last_mut() {
                    part.push(tree);
                }
            }
        }
    }
    parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .filter_map(|part| {
            let tokens: TokenStream = part.into_iter().collect();
            match Parser::parse2(parse_segment, tokens.clone()) {
                Ok((key, value)) => Some(Segment { key, value }),
                Err(error) => {
                    ctxt.error_spanned_by(
                        &tokens,
                        format!("expected `option = value` here ({error})"),
                    );
                    None
                }
            }
        })
        .collect()
}

fn parse_segment(input: ParseStream<'_>) -> syn::Result<(Ident, Option<TokenStream>)> {
    let key = Ident::parse_any(input)?;
    if input.is_empty() {
        return Ok((key, None));
    }
    input.parse::<Token![=]>()?;
    let value: TokenStream = input.parse()?;
    if value.is_empty() {
        return Err(input.error("a value after `=`"));
    }
    Ok((key, Some(value)))
}

/// Where an attribute stands, which decides the options it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// `#[hook(..)]` on a free `async fn`.
    HookFn,
    /// `#[middleware(..)]` on an impl block.
    Middleware,
    /// `#[hook(..)]` on a method inside a `#[middleware]` impl block.
    HookMethod,
}

impl Place {
    fn keys(self) -> &'static [&'static str] {
        match self {
            Place::HookFn => &[
                "phase",
                "name",
                "jumps",
                "state",
                "thread_state",
                "live_stream",
                "crate",
            ],
            Place::Middleware => &[
                "phase",
                "name",
                "state",
                "thread_state",
                "live_stream",
                "before",
                "after",
                "requires",
                "crate",
            ],
            Place::HookMethod => &["jumps"],
        }
    }

    fn attribute(self) -> &'static str {
        match self {
            Place::HookFn | Place::HookMethod => "#[hook]",
            Place::Middleware => "#[middleware]",
        }
    }
}

/// A phase, as written in `phase = …`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PhaseValue {
    Input,
    Wrap,
    Output,
}

impl PhaseValue {
    /// The marker type's name in `__private::phase`.
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            PhaseValue::Input => "Input",
            PhaseValue::Wrap => "Wrap",
            PhaseValue::Output => "Output",
        }
    }
}

/// A jump target, as written in `jumps = [..]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JumpValue {
    Model,
    Tools,
    End,
}

impl JumpValue {
    /// Every target, in the order `Jump` lists them.
    pub(crate) const ALL: [JumpValue; 3] = [JumpValue::Model, JumpValue::Tools, JumpValue::End];

    /// The target as written in `jumps = [..]`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            JumpValue::Model => "model",
            JumpValue::Tools => "tools",
            JumpValue::End => "end",
        }
    }

    /// The `Jump` variant.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            JumpValue::Model => "Model",
            JumpValue::Tools => "Tools",
            JumpValue::End => "End",
        }
    }
}

/// The options of one attribute.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) phase: Option<(PhaseValue, Span)>,
    pub(crate) name: Option<LitStr>,
    pub(crate) jumps: Option<(Vec<JumpValue>, Span)>,
    /// Whether a mistake was reported in (or about) `jumps` here: the declared targets may then
    /// not be what the user meant, so the jumps in hook bodies are not checked against them
    /// (one error, no cascade).
    pub(crate) jumps_mistaken: bool,
    pub(crate) state: Option<Type>,
    pub(crate) thread_state: Option<Type>,
    pub(crate) krate: Option<Path>,
    pub(crate) before: Vec<Type>,
    pub(crate) after: Vec<Type>,
    pub(crate) requires: Vec<Type>,
    /// `live_stream`: the middleware's wrap and `after_model` hooks leave the model's answer as
    /// it is, so a streamed run may show the answer live.
    pub(crate) live_stream: bool,
    /// Whether `state` and `thread_state` were reported as the same type: the hooks' state
    /// parameters are then not checked against them (one error, no cascade).
    pub(crate) states_mistaken: bool,
    seen: Vec<String>,
}

impl Options {
    /// Parses the `key = value` segments of an attribute at `place`.
    pub(crate) fn parse(ctxt: &Ctxt, place: Place, segments: &[Segment]) -> Options {
        let mut options = Options::default();
        for segment in segments {
            options.set(ctxt, place, segment);
        }
        if let (Some(state), Some(thread)) = (&options.state, &options.thread_state)
            && quote::ToTokens::to_token_stream(state).to_string()
                == quote::ToTokens::to_token_stream(thread).to_string()
        {
            // Hooks take each state by its type: the two must be told apart.
            ctxt.error_spanned_by(
                thread,
                format!(
                    "`state` and `thread_state` are both `{0}`: they must be distinct types, \
                     since a hook takes each by its type; wrap one in a newtype, such as \
                     `#[derive(Default, Clone, serde::Serialize, serde::Deserialize)] struct \
                     RunCalls({0});`",
                    crate::signature::pretty(thread)
                ),
            );
            options.states_mistaken = true;
        }
        options
    }

    fn set(&mut self, ctxt: &Ctxt, place: Place, segment: &Segment) {
        let errors = ctxt.error_count();
        self.set_one(ctxt, place, segment);
        if segment.key == "jumps" && ctxt.error_count() > errors {
            self.jumps_mistaken = true;
        }
    }

    fn set_one(&mut self, ctxt: &Ctxt, place: Place, segment: &Segment) {
        let key = segment.key.to_string();
        if !place.keys().contains(&key.as_str()) {
            ctxt.error_spanned_by(&segment.key, unknown_key(place, &key));
            return;
        }
        if self.seen.contains(&key) {
            ctxt.error_spanned_by(
                &segment.key,
                format!(
                    "`{key}` specified more than once in `{}`",
                    place.attribute()
                ),
            );
            return;
        }
        self.seen.push(key.clone());
        if key == "live_stream" {
            match &segment.value {
                None => self.live_stream = true,
                Some(value) => ctxt.error_spanned_by(
                    value,
                    "`live_stream` takes no value: write `live_stream` alone",
                ),
            }
            return;
        }
        let Some(value) = segment.value.clone() else {
            ctxt.error_spanned_by(&segment.key, format!("`{key}` needs a value: `{key} = …`"));
            return;
        };
        let span = segment.key.span();
        match key.as_str() {
            "phase" => {
                if let Some(phase) = parse_phase(ctxt, value) {
                    self.phase = Some((phase, span));
                }
            }
            "name" => match syn::parse2::<LitStr>(value) {
                Ok(name) if name.value().trim().is_empty() => {
                    ctxt.error_spanned_by(&name, "the name must not be empty")
                }
                Ok(name) => self.name = Some(name),
                Err(error) => ctxt.error_at(
                    error.span(),
                    "`name` takes a string literal: `name = \"Audit\"`",
                ),
            },
            "jumps" => {
                if let Some(jumps) = parse_jumps(ctxt, value) {
                    self.jumps = Some((jumps, span));
                }
            }
            "state" => match syn::parse2::<Type>(value) {
                Ok(state) => self.state = Some(state),
                Err(error) => ctxt.error_at(error.span(), "`state` takes a type: `state = Counts`"),
            },
            "thread_state" => match syn::parse2::<Type>(value) {
                Ok(state) => self.thread_state = Some(state),
                Err(error) => ctxt.error_at(
                    error.span(),
                    "`thread_state` takes a type: `thread_state = Totals`",
                ),
            },
            "crate" => match parse_crate(value) {
                Ok(path) => self.krate = Some(path),
                Err(error) => ctxt.error_at(
                    error.span(),
                    "`crate` takes the path of the hookchain crate: `crate = my_hookchain`",
                ),
            },
            "before" | "after" | "requires" => {
                let types = parse_types(ctxt, &key, value);
                match key.as_str() {
                    "before" => self.before = types,
                    "after" => self.after = types,
                    _ => self.requires = types,
                }
            }
            _ => unreachable!("every key of `Place::keys` is handled"),
        }
    }
}

fn unknown_key(place: Place, key: &str) -> String {
    let hint = match (place, key) {
        (
            Place::HookMethod,
            "phase" | "name" | "state" | "thread_state" | "live_stream" | "crate" | "before"
            | "after" | "requires",
        ) => {
            format!(
                "; set `{key}` on the `#[middleware(..)]` attribute of the impl block, not on \
                 one hook"
            )
        }
        (Place::HookFn, "before" | "after" | "requires") => format!(
            "; ordering constraints belong to a middleware type: use `#[middleware({key} = …)]` \
             on an impl block"
        ),
        (Place::Middleware, "jumps") => {
            "; declare jumps on the hook that jumps: `#[hook(before_model, jumps = [end])]`"
                .to_owned()
        }
        _ => String::new(),
    };
    let keys: Vec<String> = place.keys().iter().map(|k| format!("`{k}`")).collect();
    format!(
        "unknown option `{key}` for `{}`: expected {}{hint}",
        place.attribute(),
        if keys.len() == 1 {
            keys[0].clone()
        } else {
            format!("one of {}", keys.join(", "))
        }
    )
}

fn parse_phase(ctxt: &Ctxt, value: TokenStream) -> Option<PhaseValue> {
    let phase = match syn::parse2::<Ident>(value.clone()) {
        Ok(ident) => match ident.to_string().as_str() {
            "input" | "Input" => Some(PhaseValue::Input),
            "wrap" | "Wrap" => Some(PhaseValue::Wrap),
            "output" | "Output" => Some(PhaseValue::Output),
            _ => None,
        },
        Err(_) => None,
    };
    if phase.is_none() {
        let quoted = syn::parse2::<LitStr>(value.clone())
            .ok()
            .map(|literal| literal.value())
            .filter(|name| matches!(name.as_str(), "input" | "wrap" | "output"));
        let message = match quoted {
            Some(name) => format!("the phase is written without quotes: `phase = {name}`"),
            None => "unknown phase: expected one of `input`, `wrap`, `output`".to_owned(),
        };
        ctxt.error_spanned_by(&value, message);
    }
    phase
}

fn parse_jumps(ctxt: &Ctxt, value: TokenStream) -> Option<Vec<JumpValue>> {
    let idents = match syn::parse2::<Ident>(value.clone()) {
        Ok(ident) => vec![ident],
        Err(_) => match Parser::parse2(bracketed::<Ident>, value.clone()) {
            Ok(idents) => idents,
            Err(_) => {
                ctxt.error_spanned_by(
                    &value,
                    "`jumps` takes a list of targets: `jumps = [end]` or `jumps = [model, end]`",
                );
                return None;
            }
        },
    };
    let mut jumps = Vec::new();
    for ident in idents {
        let name = ident.to_string();
        let jump = match JumpValue::ALL.into_iter().find(|jump| jump.name() == name) {
            Some(jump) => jump,
            None => {
                ctxt.error_spanned_by(
                    &ident,
                    "unknown jump target: expected one of `model`, `tools`, `end`",
                );
                continue;
            }
        };
        if jumps.contains(&jump) {
            ctxt.error_spanned_by(&ident, format!("`{ident}` listed more than once"));
        } else {
            jumps.push(jump);
        }
    }
    Some(jumps)
}

fn parse_types(ctxt: &Ctxt, key: &str, value: TokenStream) -> Vec<Type> {
    if let Ok(types) = Parser::parse2(bracketed::<Type>, value.clone()) {
        return types;
    }
    match syn::parse2::<Type>(value.clone()) {
        Ok(ty) => vec![ty],
        Err(_) => {
            ctxt.error_spanned_by(
                &value,
                format!("`{key}` takes a middleware type or a list: `{key} = [Audit, Retry]`"),
            );
            Vec::new()
        }
    }
}

fn parse_crate(value: TokenStream) -> syn::Result<Path> {
    match syn::parse2::<LitStr>(value.clone()) {
        Ok(literal) => literal.parse(),
        Err(_) => syn::parse2::<Path>(value),
    }
}

/// `[a, b, c]`.
fn bracketed<T: Parse>(input: ParseStream<'_>) -> syn::Result<Vec<T>> {
    let content;
    syn::bracketed!(content in input);
    let items = Punctuated::<T, Token![,]>::parse_terminated(&content)?;
    Ok(items.into_iter().collect())
}
