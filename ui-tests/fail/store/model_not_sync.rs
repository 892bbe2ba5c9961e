//! A hand-written model that is not `Sync` (a `Cell` counting calls): one error, rustc's, at the
//! impl, naming the `Cell` (an atomic, or a `Mutex`). `Model::invoke` and `Model::stream` have
//! `where Self: Sync` (implied by the supertrait), so their check assumes it: without it, one
//! more error for `invoke`, before this one (2 errors, 38 lines).

use std::cell::Cell;

use hookchain::{Model, ModelError, ModelRequest, ModelResponse};

struct MyModel {
    calls: Cell<u32>,
}

impl Model for MyModel {
    async fn invoke(&self, _request: ModelRequest) -> Result<ModelResponse, ModelError> {
        self.calls.set(self.calls.get() + 1);
        Ok(ModelResponse::text("Hello!"))
    }
}

fn main() {}
