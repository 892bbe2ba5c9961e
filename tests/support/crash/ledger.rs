//! The external ledger the tools write their effects to (a Postgres table), and the journal of
//! the tools' own notes.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use hookchain::interrupt::PostgresCheckpointer;
use hookchain::interrupt::postgres::deadpool_postgres::Pool;

/// The external ledger: `ledger(idempotency_key text, effect text, at timestamptz)` in the
/// test's Postgres server, with **no unique constraint** — a tool inserts a row each time it
/// acts, so a duplicate shows.
#[derive(Clone)]
pub(crate) struct Ledger {
    pool: Pool,
}

impl Ledger {
    /// The ledger of the server `config` names (the table created if missing).
    pub(crate) async fn connect(config: &str) -> Ledger {
        let manager = PostgresCheckpointer::manager(config)
            .await
            .expect("the ledger's connection manager");
        let pool = Pool::builder(manager)
            .max_size(4)
            .build()
            .expect("the ledger's pool");
        let ledger = Ledger { pool };
        ledger
            .client()
            .await
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS ledger \
                 (idempotency_key text NOT NULL, effect text NOT NULL, at timestamptz NOT NULL)",
            )
            .await
            .expect("create the ledger");
        ledger
    }

    async fn client(&self) -> hookchain::interrupt::postgres::deadpool_postgres::Object {
        self.pool.get().await.expect("a connection to the ledger")
    }

    /// Records that `effect` happened under `key`.
    pub(crate) async fn act(&self, key: &str, effect: &str) {
        self.client()
            .await
            .execute(
                "INSERT INTO ledger (idempotency_key, effect, at) VALUES ($1, $2, clock_timestamp())",
                &[&key, &effect],
            )
            .await
            .expect("write to the ledger");
    }

    /// The rows of the effects of schedule `sid` (`<sid>/…`), as `(key, effect)`, in order.
    pub(crate) async fn rows(&self, sid: &str) -> Vec<(String, String)> {
        self.client()
            .await
            .query(
                "SELECT idempotency_key, effect FROM ledger WHERE starts_with(effect, $1) \
                 ORDER BY at",
                &[&format!("{sid}/")],
            )
            .await
            .expect("read the ledger")
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect()
    }
}

/// A note of the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Note {
    /// The await point a model or a tool reached (the site a crash falls at).
    Point(String),
    /// A call of the tool of `effect` is about to act, with `key`.
    Start { effect: String, key: String },
    /// It acted (its ledger row is written) and returns.
    Done { effect: String, key: String },
    /// Worker number `n` died; `in_flight`: the effects started whose results the store did not
    /// keep (each may act once more, with its key).
    Crash { n: usize, in_flight: Vec<String> },
}

impl Note {
    fn line(&self) -> String {
        match self {
            Note::Point(label) => format!("point {label}"),
            Note::Start { effect, key } => format!("start {effect} {key}"),
            Note::Done { effect, key } => format!("done {effect} {key}"),
            Note::Crash { n, in_flight } => format!("crash {n} {}", in_flight.join(",")),
        }
    }

    fn parse(line: &str) -> Option<Note> {
        let mut words = line.splitn(3, ' ');
        let (what, first, second) = (words.next()?, words.next()?, words.next());
        Some(match what {
            "point" => Note::Point(first.to_owned()),
            "start" => Note::Start {
                effect: first.to_owned(),
                key: second?.to_owned(),
            },
            "done" => Note::Done {
                effect: first.to_owned(),
                key: second?.to_owned(),
            },
            "crash" => Note::Crash {
                n: first.parse().ok()?,
                in_flight: second
                    .unwrap_or_default()
                    .split(',')
                    .filter(|effect| !effect.is_empty())
                    .map(str::to_owned)
                    .collect(),
            },
            _ => return None,
        })
    }
}

/// The tools' and models' notes, in the order written: in memory, or appended to a file when
/// the worker is another process (which may be killed at any moment: each note is one
/// `write`, which the kernel keeps).
#[derive(Clone)]
pub(crate) enum Journal {
    Memory(Arc<Mutex<Vec<Note>>>),
    File(PathBuf),
}

impl Journal {
    pub(crate) fn memory() -> Journal {
        Journal::Memory(Arc::default())
    }

    pub(crate) fn file(path: PathBuf) -> Journal {
        Journal::File(path)
    }

    pub(crate) fn note(&self, note: Note) {
        match self {
            Journal::Memory(notes) => notes.lock().unwrap().push(note),
            Journal::File(path) => {
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("open the journal");
                file.write_all(format!("{}\n", note.line()).as_bytes())
                    .expect("write the journal");
            }
        }
    }

    pub(crate) fn notes(&self) -> Vec<Note> {
        match self {
            Journal::Memory(notes) => notes.lock().unwrap().clone(),
            Journal::File(path) => std::fs::read_to_string(path)
                .unwrap_or_default()
                .lines()
                .filter_map(Note::parse)
                .collect(),
        }
    }

    /// The await point reached last, if any.
    pub(crate) fn last_point(&self) -> Option<String> {
        self.notes().into_iter().rev().find_map(|note| match note {
            Note::Point(label) => Some(label),
            _ => None,
        })
    }
}

/// What a schedule's tools and models share: its id (the prefix of its effects), the ledger,
/// the journal, and the outside world's one-time failures.
#[derive(Clone)]
pub(crate) struct Tag {
    /// The schedule's id, unique in the ledger: `<test>-<n>`.
    pub(crate) sid: String,
    pub(crate) ledger: Ledger,
    pub(crate) journal: Journal,
    /// The primary model is overloaded once (then answers).
    pub(crate) overloaded_once: Arc<AtomicBool>,
    /// The flaky tool fails once (before it acts), then works.
    pub(crate) flaky_once: Arc<AtomicBool>,
}

impl Tag {
    pub(crate) fn new(sid: String, ledger: &Ledger, journal: Journal) -> Tag {
        Tag {
            sid,
            ledger: ledger.clone(),
            journal,
            overloaded_once: Arc::new(AtomicBool::new(true)),
            flaky_once: Arc::new(AtomicBool::new(true)),
        }
    }

    /// The effect of `tool` in this schedule: `<sid>/<tool>`.
    pub(crate) fn effect(&self, tool: &str) -> String {
        format!("{}/{tool}", self.sid)
    }

    /// Notes that a model or tool reached the await point `label`.
    pub(crate) fn point(&self, label: impl Into<String>) {
        self.journal.note(Note::Point(label.into()));
    }

    /// Whether the one-time failure `flag` is still to happen (and it happens now).
    pub(crate) fn once(flag: &AtomicBool) -> bool {
        flag.swap(false, Ordering::SeqCst)
    }
}
