//! [`DynCheckpointer`]: a [`Checkpointer`] as a trait object.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use super::{Checkpoint, CheckpointError, Checkpointer, Claim, Lease, Record, Stored, Tombstone};

/// A boxed future of a [`DynCheckpointer`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`Checkpointer`] as an object: every store is one (`Arc<dyn DynCheckpointer>`,
/// `Box<dyn DynCheckpointer>`), and the object is a [`Checkpointer`] again, under the same
/// rules — for code that picks its store at run time.
///
/// ```
/// use std::sync::Arc;
/// use hookchain::interrupt::{Checkpointer, DynCheckpointer, FileCheckpointer, InMemoryCheckpointer};
///
/// fn store(dir: Option<&str>) -> Arc<dyn DynCheckpointer> {
///     match dir {
///         Some(dir) => Arc::new(FileCheckpointer::new(dir)),
///         None => Arc::new(InMemoryCheckpointer::new()),
///     }
/// }
///
/// fn takes_any(_: impl Checkpointer + 'static) {}
/// takes_any(store(None));
/// ```
///
/// Its methods are named `dyn_…` so that they never clash with [`Checkpointer`]'s: call
/// those on the object. Each call boxes its future (one allocation, next to a store's I/O).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a checkpointer",
    label = "not a checkpointer",
    note = "every checkpointer is a `DynCheckpointer`: an `InMemoryCheckpointer`, a \
            `FileCheckpointer::new(dir)`, a database's, or a type with a hand-written \
            `impl Checkpointer`"
)]
pub trait DynCheckpointer: Send + Sync {
    /// [`Checkpointer::claim`].
    fn dyn_claim<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Claim, CheckpointError>>;
    /// [`Checkpointer::get`].
    fn dyn_get<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Record>, CheckpointError>>;
    /// [`Checkpointer::list`].
    fn dyn_list(&self) -> BoxFuture<'_, Result<Vec<Stored>, CheckpointError>>;
    /// [`Checkpointer::put`].
    fn dyn_put<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a Checkpoint,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;
    /// [`Checkpointer::renew`].
    fn dyn_renew<'a>(
        &'a self,
        key: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<SystemTime, CheckpointError>>;
    /// [`Checkpointer::release`].
    fn dyn_release<'a>(
        &'a self,
        key: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<bool, CheckpointError>>;
    /// [`Checkpointer::end`].
    fn dyn_end<'a>(
        &'a self,
        key: &'a str,
        lease: &'a Lease,
        tombstone: Option<&'a Tombstone>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;
}

#[diagnostic::do_not_recommend]
impl<T: Checkpointer> DynCheckpointer for T {
    fn dyn_claim<'a>(
        &'a self,
        key: &'a str,
        worker: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Claim, CheckpointError>> {
        Box::pin(Checkpointer::claim(self, key, worker, ttl))
    }

    fn dyn_get<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Record>, CheckpointError>> {
        Box::pin(Checkpointer::get(self, key))
    }

    fn dyn_list(&self) -> BoxFuture<'_, Result<Vec<Stored>, CheckpointError>> {
        Box::pin(Checkpointer::list(self))
    }

    fn dyn_put<'a>(
        &'a self,
        key: &'a str,
        checkpoint: &'a Checkpoint,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::put(self, key, checkpoint, lease))
    }

    fn dyn_renew<'a>(
        &'a self,
        key: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<SystemTime, CheckpointError>> {
        Box::pin(Checkpointer::renew(self, key, lease))
    }

    fn dyn_release<'a>(
        &'a self,
        key: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<bool, CheckpointError>> {
        Box::pin(Checkpointer::release(self, key, lease))
    }

    fn dyn_end<'a>(
        &'a self,
        key: &'a str,
        lease: &'a Lease,
        tombstone: Option<&'a Tombstone>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::end(self, key, lease, tombstone))
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl Checkpointer for dyn DynCheckpointer {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        DynCheckpointer::dyn_claim(self, key, worker, ttl).await
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        DynCheckpointer::dyn_get(self, key).await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        DynCheckpointer::dyn_list(self).await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        DynCheckpointer::dyn_put(self, key, checkpoint, lease).await
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        DynCheckpointer::dyn_renew(self, key, lease).await
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        DynCheckpointer::dyn_release(self, key, lease).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        DynCheckpointer::dyn_end(self, key, lease, tombstone).await
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl Checkpointer for Box<dyn DynCheckpointer> {
    async fn claim(
        &self,
        key: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Claim, CheckpointError> {
        DynCheckpointer::dyn_claim(&**self, key, worker, ttl).await
    }

    async fn get(&self, key: &str) -> Result<Option<Record>, CheckpointError> {
        DynCheckpointer::dyn_get(&**self, key).await
    }

    async fn list(&self) -> Result<Vec<Stored>, CheckpointError> {
        DynCheckpointer::dyn_list(&**self).await
    }

    async fn put(
        &self,
        key: &str,
        checkpoint: &Checkpoint,
        lease: &Lease,
    ) -> Result<(), CheckpointError> {
        DynCheckpointer::dyn_put(&**self, key, checkpoint, lease).await
    }

    async fn renew(&self, key: &str, lease: &Lease) -> Result<SystemTime, CheckpointError> {
        DynCheckpointer::dyn_renew(&**self, key, lease).await
    }

    async fn release(&self, key: &str, lease: &Lease) -> Result<bool, CheckpointError> {
        DynCheckpointer::dyn_release(&**self, key, lease).await
    }

    async fn end(
        &self,
        key: &str,
        lease: &Lease,
        tombstone: Option<&Tombstone>,
    ) -> Result<(), CheckpointError> {
        DynCheckpointer::dyn_end(&**self, key, lease, tombstone).await
    }
}
