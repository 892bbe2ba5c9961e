//! A provider's calls, written once: what differs between providers on the wire is a
//! [`Protocol`]; [`ProviderClient`] does the rest (plain and streamed calls over one client).

use std::fmt;
use std::future::Future;

use futures::Stream;
use hookchain_core::model::ModelEvent;
use hookchain_core::{ModelError, ModelRequest, ModelResponse};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Decoder, EventStream, Framing, HttpClient, events};

/// What a provider's wire format is: how a request is written, and how an answer is read,
/// whole or streamed.
pub(crate) trait Protocol: Send + Sync + 'static {
    /// The model's own settings that shape each request (its name, its limits).
    type Settings: fmt::Debug + Clone + Send + Sync;
    /// An unstreamed answer, as the server sends it.
    type Answer: DeserializeOwned;
    /// Reads a streamed answer.
    type Decoder: Decoder;
    /// How a streamed answer's body is cut into events.
    const FRAMING: Framing = Framing::Sse;

    /// The body of `request`, asking for a streamed answer if `stream`.
    fn body<'a>(
        settings: &'a Self::Settings,
        request: &'a ModelRequest,
        stream: bool,
    ) -> impl Serialize + 'a;

    /// Our response for an unstreamed answer.
    fn answer(wire: Self::Answer) -> Result<ModelResponse, ModelError>;

    /// A decoder for a new streamed answer.
    fn decoder() -> Self::Decoder;
}

/// A model's client for the provider speaking `P`: the settings, the HTTP client, and whether
/// `invoke` streams.
pub(crate) struct ProviderClient<P: Protocol> {
    pub(crate) http: HttpClient,
    pub(crate) settings: P::Settings,
    pub(crate) streaming: bool,
}

// By hand: a derive would ask `P` itself for `Clone` and `Debug`.
impl<P: Protocol> Clone for ProviderClient<P> {
    fn clone(&self) -> Self {
        Self {
            http: self.http.clone(),
            settings: self.settings.clone(),
            streaming: self.streaming,
        }
    }
}

impl<P: Protocol> fmt::Debug for ProviderClient<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderClient")
            .field("http", &self.http)
            .field("settings", &self.settings)
            .field("streaming", &self.streaming)
            .finish()
    }
}

impl<P: Protocol> ProviderClient<P> {
    /// Opens a streamed call: the connection, then its events, decoded and checked as they
    /// come. A request with a URL the application did not allow in a user message fails here,
    /// before anything is sent (as does a plain [`call`](Self::call)).
    fn open(
        &self,
        request: &ModelRequest,
    ) -> Result<
        impl Future<Output = Result<EventStream<P::Decoder>, ModelError>> + Send + use<P>,
        ModelError,
    > {
        self.http.check_user_urls(request)?;
        let body = self.http.encode(&P::body(&self.settings, request, true))?;
        Ok(self.http.open_stream(body, P::decoder(), P::FRAMING))
    }

    /// The streamed call (see `Model::stream`): owns what it needs, so it outlives the model's
    /// borrow.
    pub(crate) fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send + use<P> {
        let opened = self.open(request);
        events(async move { opened?.await })
    }

    /// The whole answer: read at once, or assembled from a stream when the model streams.
    pub(crate) async fn call(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.streaming {
            // `open` checks the request's URLs.
            return self.open(&request)?.await?.into_response().await;
        }
        self.http.check_user_urls(&request)?;
        self.http
            .post_json(&P::body(&self.settings, &request, false), P::answer)
            .await
    }
}

/// A model whose plain and streamed calls go to two URLs (Gemini's `:generateContent` and
/// `:streamGenerateContent`, Bedrock's `converse` and `converse-stream`): a client for each,
/// the streamed one also serving `invoke` on a model that streams.
#[cfg(any(feature = "gemini", feature = "bedrock"))]
pub(crate) struct SplitEndpoints<P: Protocol> {
    plain: ProviderClient<P>,
    streamed: ProviderClient<P>,
}

#[cfg(any(feature = "gemini", feature = "bedrock"))]
impl<P: Protocol> Clone for SplitEndpoints<P> {
    fn clone(&self) -> Self {
        Self {
            plain: self.plain.clone(),
            streamed: self.streamed.clone(),
        }
    }
}

#[cfg(any(feature = "gemini", feature = "bedrock"))]
impl<P: Protocol> fmt::Debug for SplitEndpoints<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SplitEndpoints")
            .field("plain", &self.plain)
            .field("streamed", &self.streamed)
            .finish()
    }
}

#[cfg(any(feature = "gemini", feature = "bedrock"))]
impl<P: Protocol> SplitEndpoints<P> {
    /// Clients of `config` for `plain_path` and `streamed_path`; `streaming`: whether `invoke`
    /// streams.
    pub(crate) fn build(
        config: &super::HttpConfig,
        provider: &'static str,
        (plain_path, streamed_path): (&str, &str),
        settings: P::Settings,
        streaming: bool,
    ) -> Result<Self, super::BuildError> {
        Ok(Self {
            plain: ProviderClient {
                http: config.build(provider, plain_path)?,
                settings: settings.clone(),
                streaming,
            },
            streamed: ProviderClient {
                http: config.build(provider, streamed_path)?,
                settings,
                streaming: true,
            },
        })
    }

    /// The whole answer (see `Model::invoke`): streamed and assembled when the model streams.
    pub(crate) fn call(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + '_ {
        let client = if self.plain.streaming {
            &self.streamed
        } else {
            &self.plain
        };
        client.call(request)
    }

    /// The streamed answer (see `Model::stream`).
    pub(crate) fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send + use<P> {
        self.streamed.stream(request)
    }
}
