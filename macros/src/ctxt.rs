//! Collects every error of one macro invocation, so one build reports all the mistakes.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// The errors found so far (serde's `Ctxt`).
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Self {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error spanning `tokens`.
    pub(crate) fn error_spanned_by(&self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// An error at `span`.
    pub(crate) fn error_at(&self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// How many errors were reported so far: a rule that builds on an option can tell whether
    /// that option had a mistake, and stay quiet rather than add a follow-on error.
    pub(crate) fn error_count(&self) -> usize {
        self.errors.borrow().as_ref().map_or(0, Vec::len)
    }

    fn push(&self, error: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// All errors combined into one, or `Ok` if there were none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut errors = errors.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut combined) => {
                for rest in errors {
                    combined.combine(rest);
                }
                Err(combined)
            }
        }
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // A guard against our own bugs: every path must call `check`. Never reached from user
        // input.
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("hookchain-macros: an error context was dropped without `check()`");
        }
    }
}
