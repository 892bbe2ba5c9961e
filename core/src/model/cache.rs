//! Where a provider should cache the prompt of a request.

use serde::{Deserialize, Serialize};

/// What of a request's prompt a provider should cache (set by the
/// [`PromptCaching`](crate::builtin::PromptCaching) built-in, or by hand): each provider reads
/// what it supports of it and ignores the rest.
///
/// - **Anthropic**: a `cache_control` breakpoint on the system prompt (with the tools before it)
///   when [`prefix`](Self::prefix), and on the last block of each message of
///   [`breakpoints`](Self::breakpoints) (at most 4 in all: the last ones are kept), with the
///   [`ttl`](Self::ttl).
/// - **Bedrock**: a `cachePoint` block after the system prompt (or after the tools, without
///   one) when [`prefix`](Self::prefix), and after each message of
///   [`breakpoints`](Self::breakpoints) (at most 4 in all: the last ones are kept), with
///   Bedrock's default TTL.
/// - **OpenAI** (Chat Completions and Responses): caching is automatic; [`key`](Self::key) is
///   sent as `prompt_cache_key`, which routes requests that share a prefix to the same cache.
/// - **Gemini**: caching is implicit; nothing is sent.
///
/// ```
/// use hookchain::model::{CacheTtl, PromptCache};
///
/// let cache = PromptCache::new().breakpoint(4).ttl(CacheTtl::OneHour).key("thread-7");
/// assert_eq!(cache.breakpoints, [4]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptCache {
    /// Cache the prompt up to and including these messages (indices into the request's
    /// messages, ascending).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakpoints: Vec<usize>,
    /// Cache the tools and the system prompt (a breakpoint after them).
    #[serde(default)]
    pub prefix: bool,
    /// How long a cached prefix lives without a hit.
    #[serde(default)]
    pub ttl: CacheTtl,
    /// A key shared by requests with the same prefix (a thread's id): where a provider routes
    /// by it, requests of one conversation find one cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// How long a cached prefix lives without a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CacheTtl {
    /// The providers' default (Anthropic: 5 minutes).
    #[default]
    Short,
    /// An hour (Anthropic's extended TTL, written at a higher price).
    OneHour,
}

impl PromptCache {
    /// No breakpoint, no prefix, the default TTL, no key.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a breakpoint after the message at `index`.
    #[must_use]
    pub fn breakpoint(mut self, index: usize) -> Self {
        if let Err(at) = self.breakpoints.binary_search(&index) {
            self.breakpoints.insert(at, index);
        }
        self
    }

    /// Caches the tools and the system prompt too.
    #[must_use]
    pub fn with_prefix(mut self) -> Self {
        self.prefix = true;
        self
    }

    /// The TTL.
    #[must_use]
    pub fn ttl(mut self, ttl: CacheTtl) -> Self {
        self.ttl = ttl;
        self
    }

    /// The key.
    #[must_use]
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}
