//! Several models behind one: [`ModelRouter`] sends each request to the model it names, and
//! [`DynModel`] holds a model whose type is chosen at run time.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;

use futures::future::BoxFuture;
use futures::future::Either;
use futures::stream::{self, BoxStream, Stream, StreamExt};

use super::ModelError;
use super::{Model, ModelEvent, ModelRequest, ModelResponse};

/// The object-safe form of [`Model`], for models chosen at run time (from a configuration
/// file, say) or kept side by side in a [`ModelRouter`]. Every [`Model`] is one; a
/// `Box<dyn DynModel>` is a [`Model`] again. It costs one boxed future per call: keep static
/// models static where their type is known.
pub trait DynModel: Send + Sync {
    /// [`Model::invoke`], boxed.
    fn invoke_boxed(
        &self,
        request: ModelRequest,
    ) -> BoxFuture<'_, Result<ModelResponse, ModelError>>;

    /// [`Model::stream`], boxed.
    fn stream_boxed(&self, request: ModelRequest) -> BoxStream<'_, Result<ModelEvent, ModelError>>;

    /// [`Model::provider_name`] (named apart so that calls on a type that is both stay
    /// unambiguous).
    fn dyn_provider_name(&self) -> &str {
        "unknown"
    }

    /// [`Model::model_name`].
    fn dyn_model_name(&self) -> Option<&str> {
        None
    }
}

impl<M: Model> DynModel for M {
    fn invoke_boxed(
        &self,
        request: ModelRequest,
    ) -> BoxFuture<'_, Result<ModelResponse, ModelError>> {
        Box::pin(self.invoke(request))
    }

    fn stream_boxed(&self, request: ModelRequest) -> BoxStream<'_, Result<ModelEvent, ModelError>> {
        self.stream(request).boxed()
    }

    fn dyn_provider_name(&self) -> &str {
        self.provider_name()
    }

    fn dyn_model_name(&self) -> Option<&str> {
        self.model_name()
    }
}

// Not listed in a "not a model" error, which names the usual fixes instead.
#[diagnostic::do_not_recommend]
impl Model for Box<dyn DynModel> {
    fn invoke(
        &self,
        request: ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        (**self).invoke_boxed(request)
    }

    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        (**self).stream_boxed(request)
    }

    fn provider_name(&self) -> &str {
        (**self).dyn_provider_name()
    }

    fn model_name(&self) -> Option<&str> {
        (**self).dyn_model_name()
    }
}

/// A model made of several: a request goes to the model named by its
/// [`model`](ModelRequest::model) field, or to the default model when it names none.
///
/// An agent built on a router lets a `wrap_model_call` hook send a request to another model by
/// setting `request.model` and calling `next`: the inner middleware then run for that call as
/// they did for the first (a fallback, a cheaper model for a simple step).
///
/// ```
/// use hookchain::model::ModelRouter;
/// use hookchain::prelude::*;
///
/// # futures::executor::block_on(async {
/// let router = ModelRouter::new(ScriptedModel::new([ModelResponse::text("from the main model")]))
///     .route("backup", ScriptedModel::new([ModelResponse::text("from the backup")]));
/// let mut request = ModelRequest::new(vec![Message::user("hi")]);
/// request.model = Some("backup".into());
/// use hookchain::Model;
/// assert_eq!(router.invoke(request).await?.message.content, "from the backup");
/// # Ok::<(), hookchain::ModelError>(())
/// # }).unwrap();
/// ```
pub struct ModelRouter<M> {
    default: M,
    routes: BTreeMap<String, Box<dyn DynModel>>,
}

impl<M: Model> ModelRouter<M> {
    /// A router whose requests go to `default` unless they name another model.
    pub fn new(default: M) -> Self {
        ModelRouter {
            default,
            routes: BTreeMap::new(),
        }
    }

    /// Requests naming `name` go to `model` (replacing a model of the same name).
    #[must_use]
    pub fn route(mut self, name: impl Into<String>, model: impl Model + 'static) -> Self {
        self.routes.insert(name.into(), Box::new(model));
        self
    }

    /// The names of the routed models.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.routes.keys().map(String::as_str)
    }

    /// The default model (a [`ScriptedModel`](super::ScriptedModel)'s recorded requests are
    /// read through it).
    pub fn default_model(&self) -> &M {
        &self.default
    }

    /// The model routed as `name`, as the router holds it (type-erased). To read a routed
    /// model as its own type later (a scripted model's recorded requests), route it in an
    /// [`Arc`](std::sync::Arc) and keep a clone:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hookchain::model::ModelRouter;
    /// use hookchain::prelude::*;
    ///
    /// # futures::executor::block_on(async {
    /// let backup = Arc::new(ScriptedModel::new([ModelResponse::text("from the backup")]));
    /// let router = ModelRouter::new(ScriptedModel::new([]))
    ///     .route("backup", Arc::clone(&backup));
    /// let mut request = ModelRequest::new(vec![Message::user("hi")]);
    /// request.model = Some("backup".into());
    /// use hookchain::Model;
    /// router.invoke(request).await?;
    /// assert_eq!(backup.requests().len(), 1);
    /// assert_eq!(router.routed("backup").unwrap().dyn_provider_name(), "scripted");
    /// assert!(router.routed("nope").is_none());
    /// assert_eq!(router.default_model().calls(), 0);
    /// # Ok::<(), hookchain::ModelError>(())
    /// # }).unwrap();
    /// ```
    pub fn routed(&self, name: &str) -> Option<&dyn DynModel> {
        self.routes.get(name).map(|model| &**model)
    }
}

// Not listed in a "not a model" error, which names the usual fixes instead.
#[diagnostic::do_not_recommend]
impl<M: Model> Model for ModelRouter<M> {
    async fn invoke(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let Some(name) = request.model.as_deref() else {
            return self.default.invoke(request).await;
        };
        match self.routes.get(name) {
            Some(model) => model.invoke_boxed(request).await,
            None => Err(self.unrouted(name)),
        }
    }

    /// The default model's: a request that names a routed model still names it itself (the
    /// `chat` span's `gen_ai.request.model` is the request's `model` when it has one).
    fn provider_name(&self) -> &str {
        self.default.provider_name()
    }

    fn model_name(&self) -> Option<&str> {
        self.default.model_name()
    }

    fn stream(
        &self,
        request: ModelRequest,
    ) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
        let Some(name) = request.model.as_deref() else {
            return Either::Left(self.default.stream(request));
        };
        Either::Right(match self.routes.get(name) {
            Some(model) => model.stream_boxed(request),
            None => stream::iter([Err(self.unrouted(name))]).boxed(),
        })
    }
}

impl<M> ModelRouter<M> {
    /// The error of a request naming a model that is not routed.
    fn unrouted(&self, name: &str) -> ModelError {
        ModelError::invalid_request(format!(
            "no model is routed as `{name}`; routed: [{}]",
            self.routes
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

impl<M: fmt::Debug> fmt::Debug for ModelRouter<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelRouter")
            .field("default", &self.default)
            .field("routes", &self.routes.keys().collect::<Vec<_>>())
            .finish()
    }
}
