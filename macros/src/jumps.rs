//! Finds the jumps a hook's body writes out: `Flow::end()` and the paths `Jump::Model`,
//! `Jump::Tools`, `Jump::End` (however qualified: `hookchain::Jump::End` too), also inside
//! nested groups. The body is scanned as tokens, never parsed: that is fast, and it works while
//! the body is half-written. A jump computed at run time (from a field, a function) is not seen
//! here; the chain checks it when the hook returns it.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

use crate::attr::JumpValue;

/// A jump written in a hook's body.
pub(crate) struct LiteralJump {
    pub(crate) target: JumpValue,
    /// The tokens that name it (`Flow::end()`, `Jump::End`): where an error points.
    pub(crate) tokens: TokenStream,
}

/// Every jump written in `body`, in source order.
pub(crate) fn literal_jumps(body: TokenStream) -> Vec<LiteralJump> {
    let mut found = Vec::new();
    scan(body, &mut found);
    found
}

fn scan(tokens: TokenStream, found: &mut Vec<LiteralJump>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (index, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Group(group) => scan(group.stream(), found),
            TokenTree::Ident(_) => found.extend(jump_at(&trees[index..])),
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
}

/// The jump that `trees` starts with, if any: `Jump :: <Target>` or `Flow :: end ()`.
fn jump_at(trees: &[TokenTree]) -> Option<LiteralJump> {
    let [
        TokenTree::Ident(first),
        colon,
        colon2,
        TokenTree::Ident(second),
        rest @ ..,
    ] = trees
    else {
        return None;
    };
    if !is_path_separator(colon, colon2) {
        return None;
    }
    let (target, len) = if first == "Jump" {
        let target = match second.to_string().as_str() {
            "Model" => JumpValue::Model,
            "Tools" => JumpValue::Tools,
            "End" => JumpValue::End,
            _ => return None,
        };
        (target, 4)
    } else if first == "Flow" && second == "end" {
        // Only the call: `Flow::end` alone is a function value, whose use the chain checks.
        match rest.first() {
            Some(TokenTree::Group(args))
                if args.delimiter() == Delimiter::Parenthesis && args.stream().is_empty() =>
            {
                (JumpValue::End, 5)
            }
            _ => return None,
        }
    } else {
        return None;
    };
    Some(LiteralJump {
        target,
        tokens: trees[..len].iter().cloned().collect(),
    })
}

/// Whether the two tokens are `::`.
fn is_path_separator(first: &TokenTree, second: &TokenTree) -> bool {
    matches!(
        (first, second),
        (TokenTree::Punct(a), TokenTree::Punct(b))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    /// The targets and the tokens found in `body`, as strings.
    fn found(body: TokenStream) -> Vec<(&'static str, String)> {
        literal_jumps(body)
            .into_iter()
            .map(|jump| (jump.target.name(), jump.tokens.to_string()))
            .collect()
    }

    #[test]
    fn finds_flow_end_and_jump_paths() {
        let body = quote! {{
            if done { return Flow::end(); }
            Flow::Jump(Jump::Model)
        }};
        assert_eq!(
            found(body),
            [
                ("end", "Flow :: end ()".to_owned()),
                ("model", "Jump :: Model".to_owned())
            ]
        );
    }

    #[test]
    fn finds_qualified_paths_and_paths_in_nested_groups() {
        let body = quote! {{
            let flows = vec![hookchain::Flow::end()];
            match x { _ => { hookchain::Flow::Jump(hookchain::middleware::Jump::Tools) } }
        }};
        assert_eq!(
            found(body),
            [
                ("end", "Flow :: end ()".to_owned()),
                ("tools", "Jump :: Tools".to_owned())
            ]
        );
    }

    #[test]
    fn reports_every_occurrence_in_source_order() {
        let body = quote! {{ (Jump::End, Flow::end(), Jump::End) }};
        let targets: Vec<_> = found(body).into_iter().map(|(target, _)| target).collect();
        assert_eq!(targets, ["end", "end", "end"]);
    }

    #[test]
    fn ignores_what_is_not_a_literal_jump() {
        let body = quote! {{
            let _ = Flow::Continue;
            let _ = Flow::end;              // a function value, not a jump
            let _ = Flow::end(x);           // not `Flow::end()`
            let _ = MyJump::End;            // another type
            let _ = Jump::Elsewhere;        // not a target
            let _ = Jump:End;               // not a path
            let _ = self.target;            // known at run time only
            Flow::Jump(target)
        }};
        assert!(found(body).is_empty());
    }
}
