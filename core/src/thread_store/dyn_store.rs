//! [`DynThreadStore`]: a [`ThreadStore`] as a trait object.

use super::{EncodedThread, ThreadStore, ThreadStoreError};
use crate::ids::ThreadId;
use crate::interrupt::BoxFuture;

/// [`ThreadStore`] as an object: every store is one (`Arc<dyn DynThreadStore>`,
/// `Box<dyn DynThreadStore>`), and the object is a [`ThreadStore`] again, under the same rules
/// — for a server that picks its store at run time, as
/// [`DynCheckpointer`](crate::interrupt::DynCheckpointer) is for checkpointers.
///
/// ```
/// use std::sync::Arc;
/// use hookchain::thread_store::{DynThreadStore, FileThreadStore, InMemoryThreadStore, ThreadStore};
///
/// fn store(dir: Option<&str>) -> Arc<dyn DynThreadStore> {
///     match dir {
///         Some(dir) => Arc::new(FileThreadStore::new(dir)),
///         None => Arc::new(InMemoryThreadStore::new()),
///     }
/// }
///
/// fn takes_any(_: impl ThreadStore + 'static) {}
/// takes_any(store(None));
/// ```
///
/// Its methods are named `dyn_…` so that they never clash with [`ThreadStore`]'s: call those
/// (`load`, `save`, …) on the object. Each call boxes its future (one allocation, next to a
/// store's I/O).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a thread store",
    label = "not a thread store",
    note = "every thread store is a `DynThreadStore`: an `InMemoryThreadStore`, a \
            `FileThreadStore::new(dir)`, a database's, or a type with a hand-written \
            `impl ThreadStore`"
)]
pub trait DynThreadStore: Send + Sync {
    /// [`ThreadStore::load_encoded`].
    fn dyn_load_encoded<'a>(
        &'a self,
        id: &'a ThreadId,
    ) -> BoxFuture<'a, Result<Option<EncodedThread>, ThreadStoreError>>;
    /// [`ThreadStore::save_encoded`].
    fn dyn_save_encoded<'a>(
        &'a self,
        id: &'a ThreadId,
        json: &'a str,
        expected: u64,
    ) -> BoxFuture<'a, Result<u64, ThreadStoreError>>;
    /// [`ThreadStore::list`].
    fn dyn_list<'a>(
        &'a self,
        after: Option<&'a ThreadId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadId>, ThreadStoreError>>;
    /// [`ThreadStore::delete`].
    fn dyn_delete<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, Result<bool, ThreadStoreError>>;
    /// [`ThreadStore::list_owned`].
    fn dyn_list_owned<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a ThreadId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadId>, ThreadStoreError>>;
}

#[diagnostic::do_not_recommend]
impl<T: ThreadStore> DynThreadStore for T {
    fn dyn_load_encoded<'a>(
        &'a self,
        id: &'a ThreadId,
    ) -> BoxFuture<'a, Result<Option<EncodedThread>, ThreadStoreError>> {
        Box::pin(ThreadStore::load_encoded(self, id))
    }

    fn dyn_save_encoded<'a>(
        &'a self,
        id: &'a ThreadId,
        json: &'a str,
        expected: u64,
    ) -> BoxFuture<'a, Result<u64, ThreadStoreError>> {
        Box::pin(ThreadStore::save_encoded(self, id, json, expected))
    }

    fn dyn_list<'a>(
        &'a self,
        after: Option<&'a ThreadId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadId>, ThreadStoreError>> {
        Box::pin(ThreadStore::list(self, after, limit))
    }

    fn dyn_delete<'a>(&'a self, id: &'a ThreadId) -> BoxFuture<'a, Result<bool, ThreadStoreError>> {
        Box::pin(ThreadStore::delete(self, id))
    }

    fn dyn_list_owned<'a>(
        &'a self,
        owner: &'a str,
        after: Option<&'a ThreadId>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<ThreadId>, ThreadStoreError>> {
        Box::pin(ThreadStore::list_owned(self, owner, after, limit))
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl ThreadStore for dyn DynThreadStore {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        self.dyn_load_encoded(id).await
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        self.dyn_save_encoded(id, json, expected).await
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        self.dyn_list(after, limit).await
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        self.dyn_delete(id).await
    }

    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        self.dyn_list_owned(owner, after, limit).await
    }
}

// Not listed in the message of a value that is not one (the trait's note names the choices).
#[diagnostic::do_not_recommend]
impl ThreadStore for Box<dyn DynThreadStore> {
    async fn load_encoded(&self, id: &ThreadId) -> Result<Option<EncodedThread>, ThreadStoreError> {
        (**self).dyn_load_encoded(id).await
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        (**self).dyn_save_encoded(id, json, expected).await
    }

    async fn list(
        &self,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        (**self).dyn_list(after, limit).await
    }

    async fn delete(&self, id: &ThreadId) -> Result<bool, ThreadStoreError> {
        (**self).dyn_delete(id).await
    }

    async fn list_owned(
        &self,
        owner: &str,
        after: Option<&ThreadId>,
        limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        (**self).dyn_list_owned(owner, after, limit).await
    }
}
