//! The rules every `Checkpointer` follows, checked against each store by its own test file
//! (`checkpointers.rs`, and the SQLite and Postgres tests behind their features).

#![allow(dead_code)] // Each test file uses what its store needs.

use hookchain::interrupt::{CheckpointError, Checkpointer, Stored};
use hookchain::prelude::*;
use hookchain::{Checkpoint, chain, hook};
use serde_json::{Value, json};

/// Pauses before every model call.
#[hook(before_model)]
fn ask_first(cx: &mut Context) -> Flow {
    match cx.resume_value() {
        Some(_) => Flow::Continue,
        None => Flow::interrupt(json!("go?")),
    }
}

/// A checkpoint of a paused run (its key is free once stored).
pub(crate) async fn pause() -> Checkpoint {
    let agent = Agent::builder(ScriptedModel::new([ModelResponse::text("hi")]))
        .chain(chain![ask_first])
        .build();
    let output = agent.run("hello").await.expect("the run pauses");
    output.checkpoint.expect("a paused run has a checkpoint")
}

/// A checkpoint of a run in progress (no pending interrupt: its key is held once stored),
/// made from a pause; `marker` tells two of them apart.
pub(crate) async fn step(marker: &str) -> Checkpoint {
    let mut json: Value = serde_json::from_str(&pause().await.to_json().unwrap()).unwrap();
    json["interrupts"] = json!([]);
    json["id"] = json!(marker);
    let checkpoint = Checkpoint::from_json(&json.to_string()).unwrap();
    assert!(!checkpoint.is_pause());
    checkpoint
}

fn claimed(result: Result<(), CheckpointError>, key: &str, by: &str) -> bool {
    matches!(result, Err(CheckpointError::Claimed { key: k, by: b }) if k == key && b == by)
}

/// "A corrupt entry reads as `Decode`, not as a panic or `None`": `key` of `store` was put by
/// `w` as a pause and then corrupted by the test (each store its own way). Claiming it fails
/// the same way and leaves it held by the claimer, who can release it and delete it.
pub(crate) async fn corrupt_entry_reads_as_decode(store: &impl Checkpointer, key: &str) {
    let error = store.get(key).await.unwrap_err();
    assert!(matches!(error, CheckpointError::Decode(_)), "{error:?}");
    assert!(
        error.to_string().contains("not a valid checkpoint"),
        "{error}"
    );
    let error = store.claim(key, "w").await.unwrap_err();
    assert!(matches!(error, CheckpointError::Decode(_)), "{error:?}");
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key, Some("w".to_owned()))]
    );
    assert!(store.release(key, "w").await.unwrap());
    store.delete(key, "w").await.unwrap();
    assert_eq!(store.list().await.unwrap(), []);
}

/// Every rule of the `Checkpointer` contract, on an empty `store`.
pub(crate) async fn check(store: &impl Checkpointer) {
    put_get_delete(store).await;
    claims_and_fences(store).await;
    keys(store).await;
    concurrent_claims(store).await;
}

/// Put stores, get reads back equal, put again replaces, delete removes (twice is fine).
async fn put_get_delete(store: &impl Checkpointer) {
    let (paused, step) = (pause().await, step("s1").await);
    assert_eq!(store.get("t-1").await.unwrap(), None);
    assert_eq!(store.list().await.unwrap(), []);
    store.put("t-1", &paused, "w").await.unwrap();
    assert_eq!(store.get("t-1").await.unwrap(), Some(paused.clone()));
    assert_eq!(store.get("t-2").await.unwrap(), None);
    store.put("t-1", &step, "w").await.unwrap();
    assert_eq!(store.get("t-1").await.unwrap(), Some(step));
    store.delete("t-1", "w").await.unwrap();
    assert_eq!(store.get("t-1").await.unwrap(), None);
    store.delete("t-1", "w").await.unwrap();
    assert_eq!(store.list().await.unwrap(), []);
}

/// A step holds the key for its writer, a pause frees it; claims, releases and fences.
async fn claims_and_fences(store: &impl Checkpointer) {
    let (paused, step) = (pause().await, step("s2").await);
    assert_eq!(store.claim("absent", "a").await.unwrap(), None);

    // A run in progress holds its key: only its worker writes or deletes it.
    store.put("run", &step, "a").await.unwrap();
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("run", Some("a".to_owned()))]
    );
    assert!(claimed(store.put("run", &step, "b").await, "run", "a"));
    assert!(claimed(store.delete("run", "b").await, "run", "a"));
    assert_eq!(store.claim("run", "b").await.unwrap(), None);
    assert_eq!(store.get("run").await.unwrap(), Some(step.clone()));
    // Its own worker claims it again (a worker restarted under its name).
    assert_eq!(store.claim("run", "a").await.unwrap(), Some(step.clone()));
    assert!(
        !store.release("run", "b").await.unwrap(),
        "b does not hold it"
    );

    // Released (its worker died): another claims it, and now holds it.
    assert!(store.release("run", "a").await.unwrap());
    assert_eq!(store.list().await.unwrap(), [Stored::new("run", None)]);
    assert_eq!(store.claim("run", "b").await.unwrap(), Some(step.clone()));
    assert!(claimed(store.put("run", &step, "a").await, "run", "b"));

    // A pause frees the key: whoever has the answers claims it.
    store.put("run", &paused, "b").await.unwrap();
    assert_eq!(store.list().await.unwrap(), [Stored::new("run", None)]);
    assert_eq!(store.claim("run", "c").await.unwrap(), Some(paused.clone()));
    assert_eq!(store.claim("run", "d").await.unwrap(), None, "c holds it");
    store.delete("run", "c").await.unwrap();

    // A free key is written by anyone.
    store.put("free", &paused, "x").await.unwrap();
    store.put("free", &paused, "y").await.unwrap();
    store.delete("free", "z").await.unwrap();
    assert_eq!(store.list().await.unwrap(), []);
}

/// Any non-empty key of at most 512 bytes, whatever its characters; others refused.
async fn keys(store: &impl Checkpointer) {
    let paused = pause().await;
    let odd = ["thread:42/a b", "../escape", "ünï", ".hidden", "%41", "A"];
    for key in odd {
        store.put(key, &paused, "w").await.unwrap();
    }
    let mut expected: Vec<&str> = odd.to_vec();
    expected.sort_unstable();
    let listed: Vec<String> = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|stored| stored.key)
        .collect();
    assert_eq!(listed, expected);
    for key in odd {
        assert_eq!(store.get(key).await.unwrap(), Some(paused.clone()), "{key}");
        store.delete(key, "w").await.unwrap();
    }
    let long = "k".repeat(513);
    for key in ["", long.as_str()] {
        let refused = store.put(key, &paused, "w").await;
        assert!(
            matches!(refused, Err(CheckpointError::Key { .. })),
            "{key:?}"
        );
        assert!(store.get(key).await.is_err());
    }
    assert_eq!(store.list().await.unwrap(), []);
}

/// Eight claims of one free key at once: exactly one gets it.
async fn concurrent_claims(store: &impl Checkpointer) {
    store.put("race", &pause().await, "w").await.unwrap();
    let claims = (0..8).map(|i| {
        let worker = format!("w{i}");
        async move { store.claim("race", &worker).await.unwrap() }
    });
    let won = futures::future::join_all(claims)
        .await
        .into_iter()
        .filter(Option::is_some)
        .count();
    assert_eq!(won, 1);
    let holder = store.list().await.unwrap().remove(0).held_by.unwrap();
    store.delete("race", &holder).await.unwrap();
}
