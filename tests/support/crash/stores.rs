//! The checkpoint stores a crash schedule runs on, each with a clock the test moves.

use std::sync::Arc;
use std::time::Duration;

use hookchain::interrupt::{
    Checkpointer, Clock, DynCheckpointer, InMemoryCheckpointer, PostgresCheckpointer, Record,
    SqliteCheckpointer,
};

use crate::support::ManualClock;

/// How long a worker's lease lasts: judged by the store's [`ManualClock`], which stands still
/// unless the test moves it, so a run is never taken over while it goes on, and a dead
/// worker's run is, once the clock moved past it.
pub(crate) const LEASE: Duration = Duration::from_secs(30);

/// A checkpoint store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Memory,
    Sqlite,
    Postgres,
}

impl Kind {
    pub(crate) const ALL: [Kind; 3] = [Kind::Memory, Kind::Sqlite, Kind::Postgres];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::Sqlite => "sqlite",
            Kind::Postgres => "postgres",
        }
    }
}

/// A handle on a store, as workers share it.
type Handle = Arc<dyn DynCheckpointer>;

/// One store as the workers of a test share it: a handle on the clock every worker reads
/// (`normal`), and — SQLite and Postgres, where each worker has a handle of its own — handles
/// whose clocks are skewed, one an hour ahead, one ten minutes behind. (The memory store is one
/// object with one clock: a worker cannot read another time from it.)
pub(crate) struct Stores {
    pub(crate) kind: Kind,
    pub(crate) clock: ManualClock,
    pub(crate) normal: Arc<dyn DynCheckpointer>,
    pub(crate) skewed: Vec<(&'static str, Arc<dyn DynCheckpointer>)>,
}

/// The skews of the skewed handles.
const AHEAD: Duration = Duration::from_secs(60 * 60);
const BEHIND: Duration = Duration::from_secs(10 * 60);

fn skewed(clock: &ManualClock, ahead: bool) -> Clock {
    let base = clock.clock();
    Clock::from_fn(move || {
        if ahead {
            base.now() + AHEAD
        } else {
            base.now() - BEHIND
        }
    })
}

impl Stores {
    /// The store `kind`: SQLite in `<dir>/store.db`, Postgres in the server `postgres` names.
    pub(crate) async fn open(kind: Kind, dir: &std::path::Path, postgres: &str) -> Stores {
        let clock = ManualClock::new();
        let (normal, skewed): (Handle, Vec<(&str, Handle)>) = match kind {
            Kind::Memory => (
                Arc::new(InMemoryCheckpointer::new().with_clock(clock.clock())),
                Vec::new(),
            ),
            Kind::Sqlite => {
                let path = dir.join("store.db");
                let open = |clock: Clock| -> Arc<dyn DynCheckpointer> {
                    Arc::new(
                        SqliteCheckpointer::open(&path)
                            .expect("open the SQLite store")
                            .with_clock(clock),
                    )
                };
                (
                    open(clock.clock()),
                    vec![
                        ("an hour ahead", open(skewed(&clock, true))),
                        ("ten minutes behind", open(skewed(&clock, false))),
                    ],
                )
            }
            Kind::Postgres => {
                // Made together: a Postgres store judges leases by the database's clock,
                // moved by how far its clock's pace left real time's since it was given, so
                // handles of one manual clock agree when they are given it at once.
                let (normal, ahead, behind) = tokio::join!(
                    PostgresCheckpointer::connect(postgres),
                    PostgresCheckpointer::connect(postgres),
                    PostgresCheckpointer::connect(postgres),
                );
                let connected = |store: Result<PostgresCheckpointer, _>| {
                    store.expect("connect to the test's Postgres")
                };
                let (normal, ahead, behind) =
                    (connected(normal), connected(ahead), connected(behind));
                (
                    Arc::new(normal.with_clock(clock.clock())),
                    vec![
                        (
                            "an hour ahead",
                            Arc::new(ahead.with_clock(skewed(&clock, true))) as Arc<_>,
                        ),
                        (
                            "ten minutes behind",
                            Arc::new(behind.with_clock(skewed(&clock, false))) as Arc<_>,
                        ),
                    ],
                )
            }
        };
        Stores {
            kind,
            clock,
            normal,
            skewed,
        }
    }

    /// Time passes beyond any lease taken so far (by the normal clock and the skewed ones).
    pub(crate) fn pass_the_leases(&self) {
        self.clock.advance(LEASE + BEHIND + Duration::from_secs(1));
    }

    /// What `key` holds, as JSON (a checkpoint) or a word (`ended <how>`, `nothing`), once
    /// writes of a dead worker still in flight landed (a SQLite write on a blocking thread, a
    /// Postgres statement sent): read until two reads agree.
    pub(crate) async fn settled_record(&self, key: &str) -> (Option<Record>, String) {
        let mut last = self.read(key).await;
        if self.kind == Kind::Memory {
            return last;
        }
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(3)).await;
            let now = self.read(key).await;
            if now.1 == last.1 {
                return now;
            }
            last = now;
        }
        last
    }

    async fn read(&self, key: &str) -> (Option<Record>, String) {
        let record = self.normal.get(key).await.expect("read the store");
        let text = match &record {
            None => "nothing".to_owned(),
            Some(Record::Ended(tombstone)) => format!("ended {}", tombstone.how),
            Some(Record::Checkpoint(checkpoint)) => checkpoint.to_json().expect("a checkpoint"),
            Some(other) => format!("{other:?}"),
        };
        (record, text)
    }
}
