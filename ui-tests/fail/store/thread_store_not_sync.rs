//! A hand-written thread store that is not `Sync` (a `RefCell`): every method's future holds
//! `&self`. One error, rustc's, at the impl: the `RefCell` is not `Sync` (use a `Mutex` or an
//! `RwLock`). Each method of the store traits (`ThreadStore`, `Checkpointer`, `CacheStore`, and
//! `Model`, `Tool`) that returns a future has `where Self: Sync`, implied by the supertrait, so
//! the check of each method assumes it: without it, one more error per method, before this one
//! (5 errors, 94 lines).

use std::cell::RefCell;

use hookchain::ThreadId;
use hookchain::thread_store::{EncodedThread, ThreadStore, ThreadStoreError};

struct MyStore(RefCell<Vec<(ThreadId, String)>>);

impl ThreadStore for MyStore {
    async fn load_encoded(
        &self,
        _id: &ThreadId,
    ) -> Result<Option<EncodedThread>, ThreadStoreError> {
        Ok(None)
    }

    async fn save_encoded(
        &self,
        id: &ThreadId,
        json: &str,
        _expected: u64,
    ) -> Result<u64, ThreadStoreError> {
        self.0.borrow_mut().push((id.clone(), json.to_owned()));
        Ok(1)
    }

    async fn list(
        &self,
        _after: Option<&ThreadId>,
        _limit: usize,
    ) -> Result<Vec<ThreadId>, ThreadStoreError> {
        Ok(Vec::new())
    }

    async fn delete(&self, _id: &ThreadId) -> Result<bool, ThreadStoreError> {
        Ok(false)
    }
}

fn main() {}
