//! The rules of owners: a thread keeps the owner it was saved with, and `list_owned` lists an
//! owner's threads, and only theirs, in the order of their ids' bytes, a page at a time.

use hookchain::thread_store::ThreadStore;
use hookchain::{Thread, ThreadId};

use super::{agent, load};

/// The ids and owners of the threads `owners` saves: byte order, case, an owner that is the
/// prefix of another, threads of no one among them.
const THREADS: [(&str, Option<&str>); 10] = [
    ("0", Some("alice")),
    ("B", Some("alice")),
    ("a", Some("bob")),
    ("a-1", Some("alice")),
    ("a/b", None),
    ("b", Some("alice2")),
    ("x", Some("alice")),
    ("y", Some("alic")),
    ("z", Some("Alice")),
    ("é", Some("alice")),
];

/// Saves the new thread `id`, owned by `owner` (by no one for `None`).
async fn save_owned(store: &impl ThreadStore, id: &str, owner: Option<&str>) {
    let thread = Thread::<()>::with_id(ThreadId::new(id));
    let thread = match owner {
        Some(owner) => thread.with_owner(owner),
        None => thread,
    };
    assert_eq!(store.save(&thread, 0).await.unwrap(), 1, "{id}");
}

/// One page of `owner`'s threads, as text.
async fn owned(
    store: &impl ThreadStore,
    owner: &str,
    after: Option<&str>,
    limit: usize,
) -> Vec<String> {
    let after = after.map(ThreadId::new);
    let page = store
        .list_owned(owner, after.as_ref(), limit)
        .await
        .unwrap();
    page.iter().map(|id| id.as_str().to_owned()).collect()
}

/// Every page of `owner`'s threads, `limit` at a time, each starting after the last id of the
/// one before: no page larger than asked, and an empty page at the end.
async fn every_page(store: &impl ThreadStore, owner: &str, limit: usize) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = owned(store, owner, after.as_deref(), limit).await;
        assert!(page.len() <= limit, "{page:?}");
        let Some(last) = page.last().cloned() else {
            return pages;
        };
        pages.push(page);
        after = Some(last);
    }
}

/// A thread saved with an owner reads back with it, one saved without reads back without;
/// `list_owned` returns exactly the owner's threads (not those of no one, nor of an owner
/// that differs by case or is a prefix of theirs), in the order of their ids' bytes, a page
/// at a time, after an id stored or not; a deleted thread is not listed; a thread saved again
/// keeps its owner, and is listed under the owner its last save records.
pub(crate) async fn owners(store: &impl ThreadStore) {
    for (id, owner) in THREADS {
        save_owned(store, id, owner).await;
    }
    for (id, owner) in THREADS {
        assert_eq!(load(store, id).await.thread.owner(), owner, "{id}");
    }

    assert_eq!(
        owned(store, "alice", None, 10).await,
        ["0", "B", "a-1", "x", "é"]
    );
    assert_eq!(
        every_page(store, "alice", 2).await,
        [vec!["0", "B"], vec!["a-1", "x"], vec!["é"]]
    );
    // After an id that is not the owner's, or not stored: their ids after it.
    assert_eq!(
        owned(store, "alice", Some("a"), 10).await,
        ["a-1", "x", "é"]
    );
    assert_eq!(owned(store, "alice", Some("c"), 10).await, ["x", "é"]);
    assert_eq!(owned(store, "alice", Some("é"), 10).await, [] as [&str; 0]);
    assert_eq!(owned(store, "alice", None, 0).await, [] as [&str; 0]);
    for (owner, ids) in [
        ("bob", &["a"][..]),
        ("alice2", &["b"]),
        ("alic", &["y"]),
        ("Alice", &["z"]),
        ("nobody", &[]),
        ("", &[]),
    ] {
        assert_eq!(owned(store, owner, None, 10).await, ids, "{owner}");
    }

    assert!(store.delete(&ThreadId::new("x")).await.unwrap());
    assert_eq!(
        owned(store, "alice", None, 10).await,
        ["0", "B", "a-1", "é"]
    );

    // Run in and saved again: still the owner's.
    let mut stored = load(store, "B").await;
    agent(&["again"])
        .run_in(&mut stored.thread, "more")
        .await
        .unwrap();
    assert_eq!(store.save(&stored.thread, stored.version).await.unwrap(), 2);
    assert_eq!(load(store, "B").await.thread.owner(), Some("alice"));
    assert_eq!(
        owned(store, "alice", None, 10).await,
        ["0", "B", "a-1", "é"]
    );

    // Saved with another owner, or with one where it had none: listed under that one.
    let stored = load(store, "a").await;
    let thread = stored.thread.with_owner("carol");
    store.save(&thread, stored.version).await.unwrap();
    let stored = load(store, "a/b").await;
    let thread = stored.thread.with_owner("carol");
    store.save(&thread, stored.version).await.unwrap();
    assert_eq!(owned(store, "bob", None, 10).await, [] as [&str; 0]);
    assert_eq!(owned(store, "carol", None, 10).await, ["a", "a/b"]);

    for (id, _) in THREADS {
        store.delete(&ThreadId::new(id)).await.unwrap();
    }
}

/// A stored thread that does not read (text that is no JSON, though it names an owner) is not
/// one of the owner's threads: `list_owned` skips it, and lists the others.
pub(crate) async fn unreadable_threads_are_not_owned(store: &impl ThreadStore) {
    let cut = ThreadId::new("cut");
    store
        .save_encoded(&cut, "{\"owner\":\"alice\",\"id\":\"cut\",\"mess", 0)
        .await
        .unwrap();
    save_owned(store, "whole", Some("alice")).await;
    assert_eq!(owned(store, "alice", None, 10).await, ["whole"]);
    assert!(store.delete(&cut).await.unwrap());
    assert!(store.delete(&ThreadId::new("whole")).await.unwrap());
}
