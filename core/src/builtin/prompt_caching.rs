//! Prompt caching: each model request asks the provider to cache its prompt, with breakpoints
//! placed so that a growing agent history keeps hitting the cache.
//!
//! ```
//! use hookchain::builtin::PromptCaching;
//! use hookchain::model::CacheTtl;
//! use hookchain::prelude::*;
//!
//! # futures::executor::block_on(async {
//! let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("Hi!")]))
//!     .system_prompt("You are a patient tutor.")
//!     .chain(PromptCaching::new().ttl(CacheTtl::OneHour))
//!     .build()?;
//! agent.run("Hello").await?;
//! let cache = agent.model().requests()[0].prompt_cache.clone().unwrap();
//! assert!(cache.prefix);
//! assert_eq!(cache.breakpoints, [0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Rules
//!
//! - Every request gets a [`PromptCache`] (unless a hook before set one): the tools and the
//!   system prompt cached as a prefix; a breakpoint after the last message (what this call
//!   writes to the cache), and one after the last message before the latest answer of the
//!   model — where the previous call's prompt ended, which that call wrote: so each call reads
//!   everything the previous one sent, however many messages the step added (Anthropic looks
//!   back only about 20 blocks from a breakpoint).
//! - The key is the thread's id (else the run's), so that the requests of one conversation
//!   share a cache where the provider routes by key (OpenAI's `prompt_cache_key`); or
//!   [`key`](PromptCaching::key) for one of your own (a tenant, a prompt version).
//! - List it last in the chain: it marks the request as the hooks before it left it (a hook
//!   after it that removes messages would move the breakpoints).
//! - Each provider sends what it supports (see [`PromptCache`]); cached tokens are in
//!   [`Usage::cache_read_tokens`](crate::Usage::cache_read_tokens) and
//!   [`cache_write_tokens`](crate::Usage::cache_write_tokens).

use hookchain_macros::middleware;

use crate::context::Context;
use crate::message::Role;
use crate::model::{CacheTtl, ModelRequest, PromptCache};

/// Asks providers to cache each request's prompt: see [the module's docs](self).
#[derive(Debug, Clone, Default)]
pub struct PromptCaching {
    ttl: CacheTtl,
    key: Option<String>,
}

impl PromptCaching {
    /// The providers' default TTL, the thread's (or run's) id as the key.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a cached prefix lives without a hit.
    #[must_use]
    pub fn ttl(mut self, ttl: CacheTtl) -> Self {
        self.ttl = ttl;
        self
    }

    /// The cache key of every request (instead of the thread's id).
    #[must_use]
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The cache of `request`, in the run `cx`.
    fn plan(&self, cx: &Context, request: &ModelRequest) -> PromptCache {
        let key = match &self.key {
            Some(key) => key.clone(),
            None => cx
                .thread_id()
                .map_or_else(|| cx.run_id().to_owned(), |thread| thread.to_string()),
        };
        let mut cache = PromptCache::new().ttl(self.ttl).key(key);
        if request.system_prompt.is_some() || !request.tools.is_empty() {
            cache = cache.with_prefix();
        }
        let messages = &request.messages;
        if let Some(last) = messages.len().checked_sub(1) {
            cache = cache.breakpoint(last);
        }
        let previous_end = messages
            .iter()
            .rposition(|message| message.role == Role::Assistant)
            .and_then(|answer| answer.checked_sub(1));
        if let Some(previous_end) = previous_end {
            cache = cache.breakpoint(previous_end);
        }
        cache
    }
}

#[middleware(crate = crate, live_stream)]
impl PromptCaching {
    /// Marks the request.
    #[hook(before_model)]
    fn mark(&self, cx: &mut Context, request: &mut ModelRequest) {
        if request.prompt_cache.is_none() {
            request.prompt_cache = Some(Box::new(self.plan(cx, request)));
        }
    }
}
