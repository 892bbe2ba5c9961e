//! The rules every `ThreadStore` follows, checked against each store by its own test file
//! (`thread_stores.rs` for the stores of the core, and the SQLite and Postgres tests behind
//! their features): versions and conflicts, two writers racing on one thread, listing by pages,
//! deletion, refused ids and sizes, stored threads that do not read, owners (`owners`) and
//! namespaces (`namespaces`).

#![allow(dead_code)] // Each test file uses what its store needs.

mod namespaces;
pub(crate) mod owners;

use hookchain::agent::THREAD_FORMAT;
use hookchain::prelude::*;
use hookchain::thread_store::{MAX_THREAD_LEN, StoredThread, ThreadStore, ThreadStoreError};
use hookchain::{Thread, ThreadId};

/// An agent answering `answers` in order, with no middleware (its thread state is `()`).
pub(crate) fn agent(answers: &[&str]) -> Agent<ScriptedModel, ()> {
    let answers: Vec<_> = answers
        .iter()
        .map(|&text| ModelResponse::text(text))
        .collect();
    Agent::builder(ScriptedModel::new(answers)).build().unwrap()
}

/// A thread of `id` in which `agent` answered `input` once.
pub(crate) async fn conversation(id: &str, input: &str) -> Thread<()> {
    let mut thread = Thread::with_id(ThreadId::new(id));
    agent(&["ok"]).run_in(&mut thread, input).await.unwrap();
    thread
}

/// The texts of `thread`'s messages.
pub(crate) fn texts(thread: &Thread<()>) -> Vec<String> {
    thread
        .messages()
        .iter()
        .map(|message| message.text().into_owned())
        .collect()
}

/// The thread `id`, which must be stored.
pub(crate) async fn load(store: &impl ThreadStore, id: &str) -> StoredThread<()> {
    store
        .load(&ThreadId::new(id))
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("thread {id} is stored"))
}

/// Asserts that `result` is the conflict of thread `id`, expected at `expected`, found at
/// `found`.
pub(crate) fn conflict(result: Result<u64, ThreadStoreError>, id: &str, expected: u64, found: u64) {
    match result {
        Err(ThreadStoreError::Conflict {
            id: refused,
            expected: e,
            found: f,
        }) if refused.as_str() == id && e == expected && f == found => {}
        other => panic!("expected a conflict on {id} ({expected} -> {found}), got {other:?}"),
    }
}

/// Every rule of the `ThreadStore` contract, on an empty `store`.
pub(crate) async fn check(store: &(impl ThreadStore + 'static)) {
    versions(store).await;
    two_writers_one_wins(store).await;
    racing_saves(store).await;
    deletion(store).await;
    paging(store).await;
    refused_ids_and_sizes(store).await;
    unreadable_threads(store).await;
    owners::owners(store).await;
    namespaces::namespaces(store).await;
    assert_eq!(store.list(None, 100).await.unwrap(), [] as [ThreadId; 0]);
}

/// A new thread saves at version 0 and is then at 1; each save adds one; what is loaded is
/// what was saved; a save at a version that is not the stored one is a conflict, and writes
/// nothing.
async fn versions(store: &impl ThreadStore) {
    let id = ThreadId::new("versions");
    assert!(store.load::<()>(&id).await.unwrap().is_none());
    let thread = conversation("versions", "first").await;
    assert_eq!(store.save(&thread, 0).await.unwrap(), 1);
    let stored = load(store, "versions").await;
    assert_eq!((stored.version, &stored.thread), (1, &thread));

    // Created by another writer in between: a second creation is refused.
    conflict(store.save(&thread, 0).await, "versions", 0, 1);
    // A version the store never had.
    conflict(store.save(&thread, 7).await, "versions", 7, 1);

    let mut next = stored.thread;
    agent(&["again"]).run_in(&mut next, "second").await.unwrap();
    assert_eq!(store.save(&next, 1).await.unwrap(), 2);
    conflict(store.save(&thread, 1).await, "versions", 1, 2);
    let stored = load(store, "versions").await;
    assert_eq!((stored.version, texts(&stored.thread)), (2, texts(&next)));

    // Read as the state of a chain that changed since: JSON.
    let value = store.load::<serde_json::Value>(&id).await.unwrap().unwrap();
    assert_eq!(value.version, 2);
    assert_eq!(value.thread.messages(), next.messages());
    assert!(store.delete(&id).await.unwrap());
}

/// "Two requests on one thread never both append": two writers load the thread at one
/// version, each runs the agent in it (appending a turn), and both save at once. Exactly one
/// save wins; the other is a conflict naming the winner's version; the stored thread holds the
/// winner's turn and not the loser's.
async fn two_writers_one_wins(store: &impl ThreadStore) {
    store
        .save(&conversation("race", "hello").await, 0)
        .await
        .unwrap();
    let (mut first, mut second) = (load(store, "race").await, load(store, "race").await);
    assert_eq!((first.version, second.version), (1, 1));
    agent(&["to A"])
        .run_in(&mut first.thread, "from A")
        .await
        .unwrap();
    agent(&["to B"])
        .run_in(&mut second.thread, "from B")
        .await
        .unwrap();

    let (a, b) = futures::future::join(
        store.save(&first.thread, first.version),
        store.save(&second.thread, second.version),
    )
    .await;
    let (winner, loser) = match (a, b) {
        (Ok(2), loser) => ("A", loser),
        (loser, Ok(2)) => ("B", loser),
        other => panic!("exactly one save wins, at version 2: {other:?}"),
    };
    conflict(loser, "race", 1, 2);

    let stored = load(store, "race").await;
    assert_eq!(stored.version, 2);
    let texts = texts(&stored.thread);
    let other = if winner == "A" { "B" } else { "A" };
    assert_eq!(
        texts,
        [
            "hello",
            "ok",
            &format!("from {winner}"),
            &format!("to {winner}")
        ]
    );
    assert!(!texts.iter().any(|text| text.contains(other)), "{texts:?}");
    assert!(store.delete(&ThreadId::new("race")).await.unwrap());
}

/// Eight writers save at one version at once: one wins, seven conflict.
async fn racing_saves(store: &impl ThreadStore) {
    let thread = conversation("eight", "hello").await;
    store.save(&thread, 0).await.unwrap();
    let saves = (0..8).map(|_| store.save(&thread, 1));
    let results = futures::future::join_all(saves).await;
    let won = results.iter().filter(|result| result.is_ok()).count();
    assert_eq!(won, 1, "{results:?}");
    for result in results.into_iter().filter(Result::is_err) {
        conflict(result, "eight", 1, 2);
    }
    assert!(store.delete(&ThreadId::new("eight")).await.unwrap());
}

/// Deleting removes the thread whatever its version, and says whether there was one: a
/// missing thread is not an error. A thread saved again after its deletion starts at 1, and a
/// writer of the deleted one conflicts with it.
async fn deletion(store: &impl ThreadStore) {
    let id = ThreadId::new("deleted");
    assert!(!store.delete(&id).await.unwrap());
    let thread = conversation("deleted", "hello").await;
    store.save(&thread, 0).await.unwrap();
    store.save(&thread, 1).await.unwrap();
    assert!(store.delete(&id).await.unwrap());
    assert!(!store.delete(&id).await.unwrap());
    assert!(store.load::<()>(&id).await.unwrap().is_none());
    // A writer that loaded it before the deletion conflicts: nothing stored.
    conflict(store.save(&thread, 2).await, "deleted", 2, 0);
    assert_eq!(store.save(&thread, 0).await.unwrap(), 1);
    assert!(store.delete(&id).await.unwrap());
}

/// Ids listed in the order of their bytes (upper case before lower case, ASCII before
/// other characters, whatever the database's collation), a page at a time: each page starts
/// after the last id of the one before, an empty page is the end; a page never holds more
/// than asked.
async fn paging(store: &impl ThreadStore) {
    let ids = ["b", "a", "B", "a-1", "é", "z", "a/b", "0"];
    for id in ids {
        let thread: Thread<()> = Thread::with_id(ThreadId::new(id));
        store.save(&thread, 0).await.unwrap();
    }
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, ["0", "B", "a", "a-1", "a/b", "b", "z", "é"]);

    let mut listed = Vec::new();
    let mut after: Option<ThreadId> = None;
    loop {
        let page = store.list(after.as_ref(), 3).await.unwrap();
        assert!(page.len() <= 3, "{page:?}");
        let Some(last) = page.last().cloned() else {
            break;
        };
        listed.extend(page.iter().map(|id| id.as_str().to_owned()));
        after = Some(last);
    }
    assert_eq!(listed, sorted);
    assert_eq!(store.list(None, 0).await.unwrap(), [] as [ThreadId; 0]);
    assert_eq!(
        store.list(Some(&ThreadId::new("a")), 2).await.unwrap(),
        [ThreadId::new("a-1"), ThreadId::new("a/b")]
    );
    // After an id that is not stored: the ids after it.
    assert_eq!(
        store.list(Some(&ThreadId::new("y")), 10).await.unwrap(),
        [ThreadId::new("z"), ThreadId::new("é")]
    );
    for id in ids {
        assert!(store.delete(&ThreadId::new(id)).await.unwrap());
    }
}

/// An id no store takes (empty, too long, with NUL) is refused by every operation; a thread
/// larger than a store keeps is refused when saved, and nothing is written. The longest id
/// is taken.
async fn refused_ids_and_sizes(store: &impl ThreadStore) {
    for id in [String::new(), "x".repeat(513), "nul\0".to_owned()] {
        let id = ThreadId::new(id);
        let thread: Thread<()> = Thread::with_id(id.clone());
        let is_id = |error: ThreadStoreError| matches!(error, ThreadStoreError::Id { .. });
        assert!(is_id(store.save(&thread, 0).await.unwrap_err()));
        assert!(is_id(store.load::<()>(&id).await.unwrap_err()));
        assert!(is_id(store.delete(&id).await.unwrap_err()));
    }
    let longest = ThreadId::new("é".repeat(256));
    store
        .save(&Thread::<()>::with_id(longest.clone()), 0)
        .await
        .unwrap();
    assert_eq!(
        store.list(None, 10).await.unwrap(),
        std::slice::from_ref(&longest)
    );
    assert_eq!(load(store, longest.as_str()).await.thread.id(), &longest);
    assert!(store.delete(&longest).await.unwrap());

    let huge = format!("\"{}\"", "x".repeat(MAX_THREAD_LEN));
    let error = store
        .save_encoded(&ThreadId::new("huge"), &huge, 0)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ThreadStoreError::TooLarge { id, .. } if id.as_str() == "huge"),
        "{error:?}"
    );
    assert!(
        store
            .load::<()>(&ThreadId::new("huge"))
            .await
            .unwrap()
            .is_none()
    );
}

/// A stored thread that does not read is an error naming it, never a panic or `None`, and is
/// left as it is (deleting removes it): text that is not JSON, a thread missing a field, a
/// thread of a newer format, another thread's entry.
async fn unreadable_threads(store: &impl ThreadStore) {
    let id = ThreadId::new("unreadable");
    let good = serde_json::to_string(&Thread::<()>::with_id(id.clone())).unwrap();
    let other = serde_json::to_string(&Thread::<()>::with_id(ThreadId::new("other"))).unwrap();
    let format = format!("\"format\":{THREAD_FORMAT}");
    let newer = good.replacen(&format, "\"format\":99", 1);
    assert_ne!(newer, good);
    let newer_message =
        format!("format 99, newer than this version reads (format {THREAD_FORMAT})");
    let cases = [
        ("{not json", "not a valid thread"),
        ("{\"id\":\"unreadable\",\"format\":2}", "not a valid thread"),
        (&other, "not a valid thread"),
        (&newer, &newer_message),
    ];
    for (json, message) in cases {
        store.save_encoded(&id, json, 0).await.unwrap();
        let error = store.load::<()>(&id).await.unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("`unreadable`") && text.contains(message),
            "{json}: {text}"
        );
        if message.starts_with("format") {
            assert!(
                matches!(error, ThreadStoreError::Format { found: 99, .. }),
                "{error:?}"
            );
        } else {
            assert!(
                matches!(error, ThreadStoreError::Decode { .. }),
                "{error:?}"
            );
        }
        // Still there, as it was.
        assert_eq!(
            store.list(None, 10).await.unwrap(),
            std::slice::from_ref(&id)
        );
        match store.load_encoded(&id).await {
            Ok(Some(stored)) => assert_eq!(stored.json, json),
            // A file store's entry around text that is not JSON does not read either.
            Err(ThreadStoreError::Decode { .. }) => {}
            other => panic!("{json}: {other:?}"),
        }
        assert!(store.delete(&id).await.unwrap());
    }
    // A thread stored before threads had ids is the thread its key names.
    let legacy = good.replacen("\"id\":\"unreadable\",", "", 1);
    assert_ne!(legacy, good);
    store.save_encoded(&id, &legacy, 0).await.unwrap();
    assert_eq!(load(store, "unreadable").await.thread.id(), &id);
    assert!(store.delete(&id).await.unwrap());
}

/// "A corrupt entry is refused, naming the thread": `id` of `store` was saved and then damaged
/// by the test (each store its own way). Loading it is an error naming it, its id is still
/// listed, and deleting it removes it.
pub(crate) async fn damaged_entry_is_refused(store: &impl ThreadStore, id: &str) {
    let thread_id = ThreadId::new(id);
    let error = store.load::<()>(&thread_id).await.unwrap_err();
    assert!(
        matches!(&error, ThreadStoreError::Decode { id: named, .. } if named == &thread_id),
        "{error:?}"
    );
    assert!(error.to_string().contains(&format!("`{id}`")), "{error}");
    assert_eq!(
        store.list(None, 10).await.unwrap(),
        std::slice::from_ref(&thread_id)
    );
    assert!(store.delete(&thread_id).await.unwrap());
    assert!(store.load::<()>(&thread_id).await.unwrap().is_none());
}
