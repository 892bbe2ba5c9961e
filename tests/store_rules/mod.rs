//! The rules every `Checkpointer` follows, checked against each store by its own test file
//! (`checkpointers.rs`, and the SQLite and Postgres tests behind their features). Each store is
//! made on tokio's clock (`Clock::tokio`) and checked in a test that starts paused, so that
//! leases and tombstones expire when the test advances the clock, not after real waits.
//!
//! A store may judge time by another clock than the test's, moved by it: Postgres judges by
//! the database's, moved on as tokio's clock is advanced, give or take the few milliseconds
//! its statements take. So the rules look for an expiry [`PAST`] it, not at it (the exact
//! boundary is the unit tests' of `Slot`), and read a tombstone's times (the store's) to
//! within a second of the test's clock.

#![allow(dead_code)] // Each test file uses what its store needs.

use std::time::Duration;

use hookchain::interrupt::{
    CheckpointError, Checkpointer, Claim, Lease, Record, Stored, Tombstone,
};
use hookchain::prelude::*;
use hookchain::{Checkpoint, chain, hook};
use serde_json::{Value, json};

/// The time to live of the leases the rules take.
pub(crate) const TTL: Duration = Duration::from_secs(30);

/// How far past an expiry (a lease's, a tombstone's) the rules look for it to have passed.
const PAST: Duration = Duration::from_secs(1);

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
        .build()
        .unwrap();
    let output = agent.run("hello").await.expect("the run pauses");
    *output.checkpoint.expect("a paused run has a checkpoint")
}

/// A checkpoint of a run in progress (no pending interrupt: its key stays held once stored),
/// made from a pause; `marker` tells two of them apart.
pub(crate) async fn step(marker: &str) -> Checkpoint {
    let mut json: Value = serde_json::from_str(&pause().await.to_json().unwrap()).unwrap();
    json["interrupts"] = json!([]);
    json["id"] = json!(marker);
    let checkpoint = Checkpoint::from_json(&json.to_string()).unwrap();
    assert!(!checkpoint.is_pause());
    checkpoint
}

/// `worker`'s lease on `key`, which must be granted; with what the key held.
pub(crate) async fn claim(
    store: &impl Checkpointer,
    key: &str,
    worker: &str,
) -> (Lease, Option<Record>) {
    match store.claim(key, worker, TTL).await.unwrap() {
        Claim::Granted { lease, record } => (lease, record.unwrap()),
        Claim::Busy { holder, .. } => panic!("{key} is held by {holder}, not free for {worker}"),
    }
}

/// Who holds `key`, if `worker`'s claim is refused.
pub(crate) async fn busy(store: &impl Checkpointer, key: &str, worker: &str) -> String {
    match store.claim(key, worker, TTL).await.unwrap() {
        Claim::Busy { holder, .. } => holder,
        Claim::Granted { .. } => panic!("{key} was granted to {worker}, but should be held"),
    }
}

/// Stores `checkpoint` under `key` as `worker` would: claimed, then put.
pub(crate) async fn store_as(
    store: &impl Checkpointer,
    key: &str,
    checkpoint: &Checkpoint,
    worker: &str,
) -> Lease {
    let (lease, _) = claim(store, key, worker).await;
    store.put(key, checkpoint, &lease).await.unwrap();
    lease
}

fn refused(result: Result<impl std::fmt::Debug, CheckpointError>, holder: Option<&str>) {
    match (result, holder) {
        (Err(CheckpointError::Claimed { by, .. }), Some(holder)) => assert_eq!(by, holder),
        (Err(CheckpointError::LeaseLost { .. }), None) => {}
        (other, _) => panic!("expected the write refused (holder {holder:?}), got {other:?}"),
    }
}

/// "A corrupt entry reads as `Decode`, not as a panic or `None`": `key` of `store` was stored
/// as a pause and then corrupted by the test (each store its own way). A claim is granted with
/// the error as its record, so the claimer can end it; the key is then gone.
pub(crate) async fn corrupt_entry_reads_as_decode(store: &impl Checkpointer, key: &str) {
    let error = store.get(key).await.unwrap_err();
    assert!(matches!(error, CheckpointError::Decode(_)), "{error:?}");
    assert!(
        error.to_string().contains("not a valid checkpoint"),
        "{error}"
    );
    let Claim::Granted { lease, record } = store.claim(key, "w", TTL).await.unwrap() else {
        panic!("a corrupt key is granted");
    };
    assert!(
        matches!(record, Err(CheckpointError::Decode(_))),
        "{record:?}"
    );
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new(key, Some("w".to_owned()), false)]
    );
    store.end(key, &lease, None).await.unwrap();
    assert_eq!(store.list().await.unwrap(), []);
}

/// Every rule of the `Checkpointer` contract, on an empty `store` made on `Clock::tokio`, in a
/// test on tokio's paused clock.
pub(crate) async fn check(store: &impl Checkpointer) {
    put_get_end(store).await;
    leases_and_fences(store).await;
    expiry(store).await;
    tombstones(store).await;
    keys(store).await;
    concurrent_claims(store).await;
}

/// A claim of nothing takes the key; put stores, get reads back equal, put again replaces,
/// end without a tombstone removes the key.
async fn put_get_end(store: &impl Checkpointer) {
    let (paused, step) = (pause().await, step("s1").await);
    assert!(store.get("t-1").await.unwrap().is_none());
    assert_eq!(store.list().await.unwrap(), []);
    let (lease, record) = claim(store, "t-1", "w").await;
    assert!(record.is_none());
    assert_eq!(lease.worker(), "w");
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("t-1", Some("w".to_owned()), false)]
    );
    assert!(
        store.get("t-1").await.unwrap().is_none(),
        "a lease alone holds nothing"
    );
    store.put("t-1", &step, &lease).await.unwrap();
    assert_eq!(
        store.get("t-1").await.unwrap(),
        Some(Record::Checkpoint(Box::new(step.clone())))
    );
    assert!(store.get("t-2").await.unwrap().is_none());
    store.put("t-1", &step, &lease).await.unwrap();
    store.end("t-1", &lease, None).await.unwrap();
    assert!(store.get("t-1").await.unwrap().is_none());
    assert_eq!(store.list().await.unwrap(), []);
    // A pause frees the key; its writer no longer writes it.
    let lease = store_as(store, "t-1", &paused, "w").await;
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("t-1", None, false)]
    );
    refused(store.put("t-1", &paused, &lease).await, None);
    let (lease, record) = claim(store, "t-1", "x").await;
    assert_eq!(record, Some(Record::Checkpoint(Box::new(paused))));
    store.end("t-1", &lease, None).await.unwrap();
}

/// A live lease keeps everyone else out, its own worker too; a write with a lease that is not
/// the key's is refused; a released key is claimed by another, who then holds it.
async fn leases_and_fences(store: &impl Checkpointer) {
    let (paused, step) = (pause().await, step("s2").await);
    let a = store_as(store, "run", &step, "a").await;
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("run", Some("a".to_owned()), false)]
    );
    assert_eq!(busy(store, "run", "b").await, "a");
    assert_eq!(
        busy(store, "run", "a").await,
        "a",
        "one worker never holds a key twice"
    );
    assert_eq!(
        store.get("run").await.unwrap(),
        Some(Record::Checkpoint(Box::new(step.clone())))
    );

    // Released (its run failed): another claims it, and the first is fenced out.
    assert!(store.release("run", &a).await.unwrap());
    assert!(!store.release("run", &a).await.unwrap(), "released once");
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("run", None, false)]
    );
    let (b, record) = claim(store, "run", "b").await;
    assert_eq!(record, Some(Record::Checkpoint(Box::new(step.clone()))));
    assert!(b.token() > a.token(), "tokens grow");
    refused(store.put("run", &step, &a).await, Some("b"));
    refused(store.renew("run", &a).await, Some("b"));
    refused(store.end("run", &a, None).await, Some("b"));
    assert!(!store.release("run", &a).await.unwrap());
    assert_eq!(
        store.get("run").await.unwrap(),
        Some(Record::Checkpoint(Box::new(step)))
    );

    // A pause frees it: whoever has the answers claims it.
    store.put("run", &paused, &b).await.unwrap();
    let (c, record) = claim(store, "run", "c").await;
    assert_eq!(record, Some(Record::Checkpoint(Box::new(paused))));
    assert_eq!(busy(store, "run", "d").await, "c");
    store.end("run", &c, None).await.unwrap();
    assert_eq!(store.list().await.unwrap(), []);
}

/// A lease expires unless renewed: then anyone claims the key, with no release, and the old
/// holder's writes are refused. Before anyone claims it, the old holder still writes.
async fn expiry(store: &impl Checkpointer) {
    let step = step("s3").await;
    let a = store_as(store, "exp", &step, "a").await;
    tokio::time::advance(TTL - Duration::from_secs(1)).await;
    assert_eq!(busy(store, "exp", "b").await, "a");
    // A renewal moves the expiry on.
    let until = store.renew("exp", &a).await.unwrap();
    assert!(until > a.expires_at());
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(busy(store, "exp", "b").await, "a", "renewed");
    // A put moves it on too.
    store.put("exp", &step, &a).await.unwrap();
    tokio::time::advance(TTL - Duration::from_secs(1)).await;
    assert_eq!(busy(store, "exp", "b").await, "a", "the put renewed it");
    tokio::time::advance(Duration::from_secs(1) + PAST).await;
    // Expired: listed free; the holder still writes while nobody claimed it.
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("exp", None, false)]
    );
    store.put("exp", &step, &a).await.unwrap();
    tokio::time::advance(TTL + PAST).await;
    let (b, record) = claim(store, "exp", "b").await;
    assert_eq!(record, Some(Record::Checkpoint(Box::new(step.clone()))));
    refused(store.put("exp", &step, &a).await, Some("b"));
    store.end("exp", &b, None).await.unwrap();
}

/// A run that ended leaves its tombstone for its retention: read back as it was written (its
/// times the store's), listed as ended and free, granted to a new claim with the tombstone as its record; gone
/// after its retention.
async fn tombstones(store: &impl Checkpointer) {
    let step = step("s4").await;
    let a = store_as(store, "done", &step, "a").await;
    // The worker's time when it took the lease (a lease's expiry is in the worker's clock).
    let now = a.expires_at() - TTL;
    let ended = Tombstone::new(
        "run-1",
        "run-1:1",
        "finished",
        "a",
        now,
        Duration::from_secs(3600),
    );
    store.end("done", &a, Some(&ended)).await.unwrap();
    let kept = kept(store.get("done").await.unwrap(), &ended);
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("done", None, true)]
    );
    refused(store.put("done", &step, &a).await, None);
    let (b, record) = claim(store, "done", "b").await;
    assert_eq!(record, Some(Record::Ended(kept.clone())));
    assert!(store.release("done", &b).await.unwrap());
    assert_eq!(store.get("done").await.unwrap(), Some(Record::Ended(kept)));
    tokio::time::advance(Duration::from_secs(3600) + PAST).await;
    assert!(
        store.get("done").await.unwrap().is_none(),
        "past its retention"
    );
    assert_eq!(store.list().await.unwrap(), []);
    let (c, record) = claim(store, "done", "c").await;
    assert!(record.is_none());
    store.end("done", &c, None).await.unwrap();
}

/// The tombstone `record` is, which must be `written` as the store keeps it: its times the
/// store's (within a second of the test's clock, the writer's), its retention as written.
fn kept(record: Option<Record>, written: &Tombstone) -> Tombstone {
    let Some(Record::Ended(kept)) = record else {
        panic!("not a tombstone: {record:?}");
    };
    let mut expected = written.clone();
    (expected.ended_at, expected.keep_until) = (kept.ended_at, kept.keep_until);
    assert_eq!(kept, expected);
    assert!(
        kept.ended_at.abs_diff(written.ended_at) < 1000,
        "ended at {} by the store's clock, {} by the test's",
        kept.ended_at,
        written.ended_at
    );
    assert_eq!(
        kept.keep_until - kept.ended_at,
        written.keep_until - written.ended_at
    );
    kept
}

/// Any non-empty key of at most 512 bytes, whatever its characters; others refused.
async fn keys(store: &impl Checkpointer) {
    let paused = pause().await;
    // The longest keys, two of them alike but for their last character (a file store's names
    // are cut: the keys must still be told apart).
    let (longest_a, longest_b) = (
        format!("{}a", "ü".repeat(255)),
        format!("{}b", "ü".repeat(255)),
    );
    let odd = [
        "thread:42/a b",
        "../escape",
        "ünï",
        ".hidden",
        "%41",
        "A",
        longest_a.as_str(),
        longest_b.as_str(),
    ];
    for key in odd {
        store_as(store, key, &paused, "w").await;
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
        let (lease, record) = claim(store, key, "w").await;
        assert_eq!(
            record,
            Some(Record::Checkpoint(Box::new(paused.clone()))),
            "{key}"
        );
        store.end(key, &lease, None).await.unwrap();
    }
    let long = "k".repeat(513);
    for key in ["", long.as_str()] {
        let refused = store.claim(key, "w", TTL).await;
        assert!(
            matches!(refused, Err(CheckpointError::Key { .. })),
            "{key:?}"
        );
        assert!(store.get(key).await.is_err());
    }
    assert_eq!(store.list().await.unwrap(), []);
}

/// Eight claims of one free key at once: exactly one is granted it.
async fn concurrent_claims(store: &impl Checkpointer) {
    store_as(store, "race", &pause().await, "w").await;
    let claims = (0..8).map(|i| {
        let worker = format!("w{i}");
        async move { store.claim("race", &worker, TTL).await.unwrap() }
    });
    let mut granted: Vec<Lease> = futures::future::join_all(claims)
        .await
        .into_iter()
        .filter_map(|claim| match claim {
            Claim::Granted { lease, .. } => Some(lease),
            Claim::Busy { .. } => None,
        })
        .collect();
    assert_eq!(granted.len(), 1);
    store.end("race", &granted.remove(0), None).await.unwrap();
}
