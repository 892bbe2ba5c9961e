//! `PostgresCheckpointer` (feature `postgres`) against a Postgres server the test starts itself
//! (`pg`: Debian's `postgresql`, on a loopback port, offering TLS with a certificate of the
//! test's own CA): every rule of the `Checkpointer` contract (`store_rules`), a corrupt row
//! read as `Decode`, workers starting at once, two stores (two pools) racing claims on one key;
//! and TLS: the certificate checked against the roots given or the public ones, no fall back to
//! plain text, plain text only when asked for (`connect_insecure`) and only on this machine, no
//! password in an error. Its thread store (`PostgresThreadStore`, same database and pool):
//! every rule of the `ThreadStore` contract (`thread_store_rules`), damaged and oversized rows
//! refused naming the thread, the table of threads added to a database of an earlier version,
//! and its column and index of owners too; `list_owned` reading the index.

mod pg;
mod store_rules;
mod thread_store_rules;

use std::error::Error;
use std::time::{Duration, Instant, SystemTime};

use hookchain::interrupt::{
    CheckpointError, Checkpointer, Claim, Clock, Lease, PostgresCheckpointer, Record, Stored,
};
use hookchain::thread_store::{MAX_THREAD_LEN, ThreadStore, ThreadStoreError};
use hookchain::{Thread, ThreadId};
use store_rules::store_as;

/// A store on `server`'s database, over TLS, the server's certificate checked against the
/// test's CA (`sslrootcert` in `server.config()`).
async fn connect(server: &pg::Postgres) -> PostgresCheckpointer {
    PostgresCheckpointer::connect(&server.config())
        .await
        .expect("the test's server takes connections")
}

#[tokio::test(start_paused = true)]
async fn postgres_checkpointer_follows_the_rules() {
    let server = pg::Postgres::start();
    let store = connect(&server).await.with_clock(Clock::tokio());
    store_rules::check(&store).await;
}

/// A row whose checkpoint is not one (edited by hand) reads as `Decode`, not as a panic or
/// `None`; a claim is granted with the error, and the claimer ends it.
#[tokio::test]
async fn a_corrupt_row_reads_as_decode() {
    let server = pg::Postgres::start();
    let store = connect(&server).await;
    store_as(&store, "t", &store_rules::pause().await, "w").await;
    let client = store.pool().get().await.unwrap();
    let edited = client
        .execute(
            "UPDATE hookchain_runs SET checkpoint = left(checkpoint, 40) WHERE key = $1",
            &[&"t"],
        )
        .await
        .unwrap();
    assert_eq!(edited, 1);
    store_rules::corrupt_entry_reads_as_decode(&store, "t").await;
}

/// Workers starting at once on an empty database all get a store: the table is created once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_starting_at_once_create_the_table_once() {
    let server = pg::Postgres::start();
    let config = server.config();
    let stores = futures::future::join_all((0..6).map(|_| PostgresCheckpointer::connect(&config)))
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let checkpoint = store_rules::pause().await;
    store_as(&stores[0], "k", &checkpoint, "w").await;
    for store in &stores {
        assert_eq!(
            store.get("k").await.unwrap(),
            Some(Record::Checkpoint(Box::new(checkpoint.clone())))
        );
    }
}

/// A database of the version before leases (the table `hookchain_checkpoints`) has its rows
/// copied into the new table once, as free keys, when a store is first made on it.
#[tokio::test]
async fn an_older_table_is_copied_over() {
    let server = pg::Postgres::start();
    let checkpoint = store_rules::pause().await;
    {
        let store = connect(&server).await;
        let client = store.pool().get().await.unwrap();
        client
            .batch_execute(
                "DROP TABLE hookchain_runs;
                 CREATE TABLE hookchain_checkpoints (key text PRIMARY KEY, checkpoint text NOT NULL,
                     held_by text, updated_at timestamptz NOT NULL DEFAULT now())",
            )
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO hookchain_checkpoints (key, checkpoint, held_by) VALUES ('old', $1, 'w')",
                &[&checkpoint.to_json().unwrap()],
            )
            .await
            .unwrap();
    }
    let store = connect(&server).await;
    assert_eq!(
        store.list().await.unwrap(),
        [Stored::new("old", None, false)]
    );
    assert_eq!(
        store.get("old").await.unwrap(),
        Some(Record::Checkpoint(Box::new(checkpoint)))
    );
}

/// Two stores with pools of their own (two workers' processes, as far as the server can tell)
/// race 8 claims each on one free key: exactly one claim in all wins, and the key is its
/// claimer's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_pools_racing_claims_on_one_key_give_it_to_one() {
    let server = pg::Postgres::start();
    let first = connect(&server).await;
    let second = connect(&server).await;
    store_as(&first, "race", &store_rules::pause().await, "api").await;

    let claims = (0..16).map(|i| {
        let store = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tokio::spawn(async move {
            let worker = format!("worker-{i}");
            let claim = store
                .claim("race", &worker, store_rules::TTL)
                .await
                .unwrap();
            matches!(claim, Claim::Granted { .. }).then_some(worker)
        })
    });
    let winners: Vec<String> = futures::future::join_all(claims)
        .await
        .into_iter()
        .filter_map(|claim| claim.unwrap())
        .collect();
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(
        second.list().await.unwrap(),
        [Stored::new("race", Some(winners[0].clone()), false)]
    );
}

/// Far more than a lease: how far the skewed workers' clocks are off.
const HOUR: Duration = Duration::from_secs(3600);

/// The leases of the tests of skew: short, as they expire in real time (the database's clock
/// cannot be paused), long enough for a claim or two to get through under load.
const LEASE: Duration = Duration::from_secs(1);

/// How often a waiting worker tries the key again.
const POLL: Duration = Duration::from_millis(20);

/// The system's clock moved by `skew`, ahead or behind.
fn skewed(skew: Duration, ahead: bool) -> Clock {
    Clock::from_fn(move || {
        if ahead {
            SystemTime::now() + skew
        } else {
            SystemTime::now() - skew
        }
    })
}

/// `worker`'s lease on `key` for [`LEASE`], which must be granted.
async fn leased(store: &PostgresCheckpointer, key: &str, worker: &str) -> Lease {
    match store.claim(key, worker, LEASE).await.unwrap() {
        Claim::Granted { lease, .. } => lease,
        Claim::Busy { holder, .. } => panic!("{key} is held by {holder}, not free for {worker}"),
    }
}

/// Claims `key` for `worker` until granted (bounded: a few leases): the key was busy until
/// then.
async fn claim_when_free(store: &PostgresCheckpointer, key: &str, worker: &str) {
    let start = Instant::now();
    loop {
        match store.claim(key, worker, LEASE).await.unwrap() {
            Claim::Granted { .. } => return,
            Claim::Busy { .. } => {
                assert!(
                    start.elapsed() < 10 * LEASE,
                    "{key} still busy for {worker} long after its lease"
                );
                tokio::time::sleep(POLL).await;
            }
        }
    }
}

/// Two workers (two pools) whose clocks are an hour apart, far more than a lease: the one
/// ahead finds the other's live lease busy (its `until` in its own clock), and gets the key
/// only once the lease expired by the database's clock, a lease's time after it was taken.
#[tokio::test]
async fn a_worker_an_hour_ahead_cannot_take_a_live_lease() {
    let server = pg::Postgres::start();
    let holder = connect(&server).await;
    let ahead_clock = skewed(HOUR, true);
    let ahead = connect(&server).await.with_clock(ahead_clock.clone());

    let taken = Instant::now();
    leased(&holder, "skew", "holder").await;
    let before = ahead_clock.now();
    match ahead.claim("skew", "ahead", LEASE).await.unwrap() {
        Claim::Busy { holder, until } => {
            assert_eq!(holder, "holder");
            assert!(
                until > before && until <= ahead_clock.now() + LEASE,
                "`until` is in the claimer's clock: {until:?}, its clock read {before:?}"
            );
        }
        Claim::Granted { .. } => panic!("a worker an hour ahead took a live lease"),
    }
    claim_when_free(&ahead, "skew", "ahead").await;
    // To the millisecond (the database keeps expiries in milliseconds), give or take the
    // system clock's slewing next to the monotonic one.
    assert!(
        taken.elapsed() + Duration::from_millis(5) >= LEASE,
        "granted {:?} after the lease was taken, before it expired",
        taken.elapsed()
    );
}

/// A worker whose clock is an hour behind gets its lease's expiry in its own clock (a lease's
/// time from when it asked), from a claim and from a renewal, which the database judges by its
/// own clock: while the worker counts the lease live, nobody else gets the key, and once
/// another does, the worker's clock has passed the expiry it was given (so a run stops in time
/// by its own clock) — and not long before.
#[tokio::test]
async fn a_worker_an_hour_behind_sees_its_lease_expire_when_the_database_does() {
    let server = pg::Postgres::start();
    let behind_clock = skewed(HOUR, false);
    let behind = connect(&server).await.with_clock(behind_clock.clone());
    let other = connect(&server).await;

    let before = behind_clock.now();
    let lease = leased(&behind, "skew", "behind").await;
    let in_its_clock = before + LEASE..=behind_clock.now() + LEASE;
    assert!(
        in_its_clock.contains(&lease.expires_at()),
        "{:?} is not in {in_its_clock:?}",
        lease.expires_at()
    );
    assert!(matches!(
        other.claim("skew", "other", LEASE).await.unwrap(),
        Claim::Busy { .. }
    ));

    // Renewed half way: live past the first expiry, by the database's clock.
    tokio::time::sleep(LEASE / 2).await;
    let before = behind_clock.now();
    let until = behind.renew("skew", &lease).await.unwrap();
    let in_its_clock = before + LEASE..=behind_clock.now() + LEASE;
    assert!(
        in_its_clock.contains(&until),
        "{until:?} is not in {in_its_clock:?}"
    );
    let lease = Lease::new(lease.worker(), lease.token(), lease.ttl(), until);
    tokio::time::sleep(LEASE * 3 / 4).await;
    assert!(behind_clock.now() < lease.expires_at());
    assert!(matches!(
        other.claim("skew", "other", LEASE).await.unwrap(),
        Claim::Busy { .. }
    ));

    claim_when_free(&other, "skew", "other").await;
    let now = behind_clock.now();
    assert!(
        now >= lease.expires_at(),
        "another worker took the key while its holder counted its lease live until {:?} \
         (its clock: {now:?})",
        lease.expires_at()
    );
    assert!(
        now.duration_since(lease.expires_at()).unwrap() < LEASE,
        "the holder counted its lease expired long before the database did"
    );
    // The first holder's writes are refused: the key is the other's.
    assert!(matches!(
        behind.renew("skew", &lease).await,
        Err(CheckpointError::Claimed { by, .. }) if by == "other"
    ));
}

/// A server that cannot be reached, or a connection string that does not parse, is a `Store`
/// error naming what failed.
#[tokio::test]
async fn connection_failures_are_store_errors() {
    let error = PostgresCheckpointer::connect("port=not-a-number")
        .await
        .unwrap_err();
    is_store_error(&error, "parse the connection string");
    // A port nothing listens on: refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let error = PostgresCheckpointer::connect(&format!(
        "host=127.0.0.1 port={port} user=postgres connect_timeout=5"
    ))
    .await
    .unwrap_err();
    is_store_error(&error, "connect");
}

/// Asserts that `error` is a `Store` error of `what` (what the store was doing).
fn is_store_error(error: &CheckpointError, what: &str) {
    assert!(
        matches!(error, CheckpointError::Store { what: failed, .. } if *failed == what),
        "not a store error of `{what}`: {error:?}"
    );
}

/// `error` and its sources, one after another.
fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(error) = source {
        text.push_str(": ");
        text.push_str(&error.to_string());
        source = error.source();
    }
    text
}

/// Whether the connection `store` hands out is encrypted (Postgres's `pg_stat_ssl`).
async fn over_tls(store: &PostgresCheckpointer) -> bool {
    let client = store.pool().get().await.unwrap();
    client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// A key stored and read back through the `Checkpointer` trait.
async fn round_trips(store: &PostgresCheckpointer) {
    let checkpoint = store_rules::pause().await;
    store_as(store, "tls", &checkpoint, "w").await;
    assert_eq!(
        store.get("tls").await.unwrap(),
        Some(Record::Checkpoint(Box::new(checkpoint)))
    );
}

/// The test's CA given as the root certificates (`sslrootcert`, as a key-value string and in a
/// URL): the connection is TLS, and the store works through it.
#[tokio::test]
async fn tls_with_the_server_s_ca_as_root_connects() {
    let server = pg::Postgres::start();
    let store = connect(&server).await;
    assert!(over_tls(&store).await);
    round_trips(&store).await;

    let url = format!(
        "postgresql://postgres@127.0.0.1:{}/postgres?sslmode=verify-full&sslrootcert={}",
        server.port(),
        server.ca_file().display()
    );
    let store = PostgresCheckpointer::connect(&url).await.unwrap();
    assert!(over_tls(&store).await);
}

/// Without `sslrootcert`, the store trusts the public roots only: a certificate of a CA of
/// one's own is refused, whatever `sslmode` asks (`require` checks it too).
#[tokio::test]
async fn the_public_roots_do_not_trust_a_ca_of_one_s_own() {
    let server = pg::Postgres::start();
    for sslmode in [
        "",
        " sslmode=require",
        " sslmode=verify-ca",
        " sslmode=prefer",
    ] {
        let error = PostgresCheckpointer::connect(&format!("{}{sslmode}", server.address()))
            .await
            .unwrap_err();
        is_store_error(&error, "connect");
        let text = chain(&error);
        assert!(
            text.contains("signed by no root certificate trusted")
                && text.contains("sslrootcert")
                && text.contains("UnknownIssuer"),
            "{sslmode}: {text}"
        );
    }
}

/// A certificate of a trusted CA, but for another host, is refused (`verify-ca` too: the host
/// is always checked). `hostaddr` connects to the server while `host` names another.
#[tokio::test]
async fn a_certificate_for_another_host_is_refused() {
    let server = pg::Postgres::start();
    for sslmode in ["", " sslmode=verify-ca"] {
        let config = format!(
            "{} host=db.example hostaddr=127.0.0.1{sslmode}",
            server.config().replace("host=127.0.0.1 ", "")
        );
        let error = PostgresCheckpointer::connect(&config).await.unwrap_err();
        let text = chain(&error);
        assert!(
            text.contains("not for the host") && text.contains("not valid for name"),
            "{config}: {text}"
        );
    }
}

/// A server that offers no TLS is refused, with `sslmode` unset or `prefer` (which would fall
/// back to plain text in libpq): never a plain text connection from `connect`.
#[tokio::test]
async fn connect_refuses_a_server_without_tls() {
    let server = pg::Postgres::start_without_tls();
    for sslmode in ["", " sslmode=prefer", " sslmode=allow"] {
        let error = PostgresCheckpointer::connect(&format!("{}{sslmode}", server.address()))
            .await
            .unwrap_err();
        is_store_error(&error, "connect");
        let text = chain(&error);
        assert!(
            text.contains("server does not support TLS") && text.contains("connect_insecure"),
            "{sslmode}: {text}"
        );
    }
}

/// The insecure form reaches a server without TLS on this machine, in plain text.
#[tokio::test]
async fn connect_insecure_reaches_a_server_without_tls() {
    let server = pg::Postgres::start_without_tls();
    let store = PostgresCheckpointer::connect_insecure(&server.config())
        .await
        .unwrap();
    assert!(!over_tls(&store).await);
    round_trips(&store).await;
    // `localhost` is this machine too, and so is a Unix socket.
    let local = server.address().replace("127.0.0.1", "localhost");
    PostgresCheckpointer::connect_insecure(&local)
        .await
        .unwrap();
    let socket = server
        .address()
        .replace("127.0.0.1", &server.socket_dir().display().to_string());
    let store = PostgresCheckpointer::connect_insecure(&socket)
        .await
        .unwrap();
    assert!(!over_tls(&store).await);
}

/// A `sslrootcert` that cannot be read, holds no certificate, or asks for the system's store
/// is refused before anything is connected to, naming the file.
#[tokio::test]
async fn root_certificates_that_cannot_be_had_are_refused() {
    let dir = std::env::temp_dir().join(format!("hookchain-roots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    for (file, expected) in [
        ("/nonexistent/ca.pem".to_owned(), "/nonexistent/ca.pem: "),
        (empty.display().to_string(), "holds no PEM certificate"),
        ("system".to_owned(), "`sslrootcert=system`"),
    ] {
        let error =
            PostgresCheckpointer::connect(&format!("host=127.0.0.1 port=1 sslrootcert={file}"))
                .await
                .unwrap_err();
        is_store_error(&error, "read the root certificates (sslrootcert)");
        let text = chain(&error);
        assert!(text.contains(expected), "{file}: {text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `sslmode=disable` asks `connect` for plain text: refused, naming the insecure form; and
/// nothing is connected to (the port here is closed).
#[tokio::test]
async fn sslmode_disable_is_refused_naming_the_insecure_form() {
    for config in [
        "host=127.0.0.1 port=1 user=postgres sslmode=disable",
        "postgresql://postgres@127.0.0.1:1/postgres?sslmode=disable",
    ] {
        let error = PostgresCheckpointer::connect(config).await.unwrap_err();
        let text = chain(&error);
        assert!(
            text.contains("sslmode=disable") && text.contains("connect_insecure"),
            "{text}"
        );
    }
}

/// The insecure form is refused for another machine's host, and when the string asks for TLS.
#[tokio::test]
async fn connect_insecure_is_for_this_machine_and_plain_text_only() {
    for (config, expected) in [
        ("host=db.example user=agents", "not to `db.example`"),
        ("host=10.1.2.3 user=agents", "not to `10.1.2.3`"),
        ("host=localhost hostaddr=10.1.2.3", "not to `10.1.2.3`"),
        ("postgres://agents@db.example/agents", "not to `db.example`"),
        (
            "host=127.0.0.1 sslmode=require",
            "PostgresCheckpointer::connect",
        ),
        (
            "host=127.0.0.1 sslmode=verify-full",
            "PostgresCheckpointer::connect",
        ),
        ("host=127.0.0.1 sslrootcert=/ca.pem", "sslrootcert"),
    ] {
        let error = PostgresCheckpointer::connect_insecure(config)
            .await
            .unwrap_err();
        is_store_error(&error, "connect without TLS");
        let text = chain(&error);
        assert!(text.contains(expected), "{config}: {text}");
    }
}

/// A Unix socket carries no TLS: `connect` refuses it, naming the insecure form.
#[tokio::test]
async fn connect_refuses_a_unix_socket() {
    let error = PostgresCheckpointer::connect("host=/var/run/postgresql user=postgres")
        .await
        .unwrap_err();
    let text = chain(&error);
    assert!(
        text.contains("Unix socket") && text.contains("connect_insecure"),
        "{text}"
    );
}

/// The password of the connection string is in no error, nor in the store's `Debug`.
#[tokio::test]
async fn the_password_is_in_no_error() {
    const PASSWORD: &str = "hunter2-Secret";
    let server = pg::Postgres::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let failing = [
        format!("host=127.0.0.1 port={closed} password={PASSWORD} connect_timeout=5"),
        format!("postgresql://postgres:{PASSWORD}@127.0.0.1:{closed}/postgres"),
        format!("host=127.0.0.1 password={PASSWORD} sslmode=disable"),
        format!("host=127.0.0.1 password={PASSWORD} port=x"),
        // A password with a space, unquoted: its second half reads as an unknown option.
        format!("host=127.0.0.1 password=hunter2 {PASSWORD}=x"),
        format!("{} password={PASSWORD}", server.address()),
        format!("host=127.0.0.1 password={PASSWORD} sslrootcert=/nonexistent/ca.pem"),
    ];
    for config in &failing {
        let error = PostgresCheckpointer::connect(config).await.unwrap_err();
        let text = format!("{} {error:?}", chain(&error));
        assert!(!text.contains(PASSWORD), "{text}");
    }
    let error =
        PostgresCheckpointer::connect_insecure(&format!("host=db.example password={PASSWORD}"))
            .await
            .unwrap_err();
    assert!(!format!("{} {error:?}", chain(&error)).contains(PASSWORD));
    // The server trusts every login, and ignores the password; the store keeps none in sight.
    let store = PostgresCheckpointer::connect(&format!("{} password={PASSWORD}", server.config()))
        .await
        .unwrap();
    assert!(!format!("{store:?}").contains(PASSWORD), "{store:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_thread_store_follows_the_rules() {
    let server = pg::Postgres::start();
    let store = connect(&server).await;
    thread_store_rules::check(&store.threads()).await;
    thread_store_rules::owners::unreadable_threads_are_not_owned(&store.threads()).await;
}

/// A database of the version before owners (its table of threads made by hand as that
/// version made it, holding a thread) gets the column and the index when stores are next
/// made on it, four at once: its thread is kept, without an owner, and `list_owned` lists the
/// threads saved with one since, that thread too once saved with one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_table_of_threads_gets_the_owners() {
    let server = pg::Postgres::start();
    let old = thread_store_rules::conversation("old", "hello").await;
    {
        let store = connect(&server).await;
        let client = store.pool().get().await.unwrap();
        client
            .batch_execute(
                "DROP TABLE hookchain_threads;
                 CREATE TABLE hookchain_threads (
                     id text COLLATE \"C\" PRIMARY KEY,
                     version bigint NOT NULL,
                     thread text NOT NULL,
                     updated_at timestamptz NOT NULL DEFAULT now()
                 )",
            )
            .await
            .unwrap();
        client
            .execute(
                "INSERT INTO hookchain_threads (id, version, thread) VALUES ('old', 1, $1)",
                &[&serde_json::to_string(&old).unwrap()],
            )
            .await
            .unwrap();
    }
    let config = server.config();
    let stores = futures::future::join_all((0..4).map(|_| PostgresCheckpointer::connect(&config)))
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let threads = stores[0].threads();
    let alice = || threads.list_owned("alice", None, 10);
    assert_eq!(alice().await.unwrap(), [] as [ThreadId; 0]);
    let stored = thread_store_rules::load(&threads, "old").await;
    assert_eq!((stored.version, &stored.thread), (1, &old));
    assert_eq!(stored.thread.owner(), None);

    let new = Thread::<()>::with_id(ThreadId::new("new")).with_owner("alice");
    assert_eq!(threads.save(&new, 0).await.unwrap(), 1);
    assert_eq!(alice().await.unwrap(), [ThreadId::new("new")]);
    let owned = stored.thread.with_owner("alice");
    assert_eq!(threads.save(&owned, 1).await.unwrap(), 2);
    assert_eq!(
        stores[3]
            .threads()
            .list_owned("alice", None, 10)
            .await
            .unwrap(),
        [ThreadId::new("new"), ThreadId::new("old")]
    );
    // A store made again finds the schema as it is: nothing to add.
    connect(&server).await;
}

/// `list_owned`'s query reads a page of the index on `(owner, id)`, from the id it starts
/// after, in a table of many threads and owners (the query as the store sends it, planned
/// generic, as a prepared statement is after a few runs).
#[tokio::test]
async fn owned_pages_are_read_through_the_index() {
    let server = pg::Postgres::start();
    let threads = connect(&server).await.threads();
    let client = threads.pool().get().await.unwrap();
    client
        .batch_execute(
            "INSERT INTO hookchain_threads (id, version, thread, owner)
                 SELECT 't' || n, 1, '{}', 'owner-' || (n % 100)
                 FROM generate_series(1, 20000) AS n;
             ANALYZE hookchain_threads;
             SET plan_cache_mode = force_generic_plan;
             PREPARE owned (text, text, bigint) AS SELECT id FROM hookchain_threads
                 WHERE owner = $1 AND id > $2 COLLATE \"C\"
                 ORDER BY id LIMIT $3",
        )
        .await
        .unwrap();
    let plan: Vec<String> = client
        .query("EXPLAIN EXECUTE owned('owner-7', 't5', 10)", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    let plan = plan.join("\n");
    assert!(
        plan.contains("Index Only Scan using hookchain_threads_owner")
            && plan.contains("Index Cond: ((owner = $1) AND (id > ($2)::text))"),
        "{plan}"
    );
    let page = threads
        .list_owned("owner-7", Some(&ThreadId::new("t5")), 3)
        .await
        .unwrap();
    assert_eq!(page, ["t5007", "t507", "t5107"].map(ThreadId::new));
}

/// An owner no principal has and the column cannot hold or index (holding NUL, which
/// Postgres's text refuses; longer than 1 KiB, past what an entry of the index may be) is not
/// recorded: the thread is saved, with its owner in its JSON, and listed under no owner;
/// listing the threads of such an owner is an empty page, not an error.
#[tokio::test]
async fn owners_postgres_cannot_index_are_not_recorded() {
    let server = pg::Postgres::start();
    let threads = connect(&server).await.threads();
    // Letters that do not repeat: Postgres would compress a repeating owner into the index.
    let mut seed: u32 = 1;
    let long: String = (0..4000)
        .map(|_| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            char::from(b'a' + u8::try_from((seed >> 16) % 26).unwrap())
        })
        .collect();
    for (id, owner) in [("nul", "al\0ice"), ("long", long.as_str())] {
        let thread = Thread::<()>::with_id(ThreadId::new(id)).with_owner(owner);
        assert_eq!(threads.save(&thread, 0).await.unwrap(), 1, "{id}");
        let stored = thread_store_rules::load(&threads, id).await;
        assert_eq!(stored.thread.owner(), Some(owner));
        assert_eq!(
            threads.list_owned(owner, None, 10).await.unwrap(),
            [] as [ThreadId; 0]
        );
    }
}

/// A row whose thread is not one (edited by hand) is refused naming it; one larger than a
/// store reads is `TooLarge`, its text never sent; both are deleted on request.
#[tokio::test]
async fn damaged_and_oversized_thread_rows_are_refused() {
    let server = pg::Postgres::start();
    let threads = connect(&server).await.threads();
    let id = ThreadId::new("t");
    threads
        .save(&thread_store_rules::conversation("t", "hello").await, 0)
        .await
        .unwrap();
    let client = threads.pool().get().await.unwrap();
    let edited = client
        .execute(
            "UPDATE hookchain_threads SET thread = left(thread, 40) WHERE id = $1",
            &[&"t"],
        )
        .await
        .unwrap();
    assert_eq!(edited, 1);
    thread_store_rules::damaged_entry_is_refused(&threads, "t").await;

    threads
        .save(&thread_store_rules::conversation("t", "hello").await, 0)
        .await
        .unwrap();
    let len = i32::try_from(MAX_THREAD_LEN).unwrap() + 1;
    client
        .execute(
            "UPDATE hookchain_threads SET thread = repeat('x', $1) WHERE id = 't'",
            &[&len],
        )
        .await
        .unwrap();
    let error = threads.load::<()>(&id).await.unwrap_err();
    assert!(
        matches!(&error, ThreadStoreError::TooLarge { id: named, len: l, .. } if named == &id && *l == MAX_THREAD_LEN as u64 + 1),
        "{error:?}"
    );
    assert!(threads.delete(&id).await.unwrap());
}

/// A database of an earlier version (the runs' table, no threads') gets the table of threads
/// when a store is next made on it; what it held stays.
#[tokio::test]
async fn an_older_database_gets_the_table_of_threads() {
    let server = pg::Postgres::start();
    let checkpoint = store_rules::pause().await;
    {
        let store = connect(&server).await;
        store_as(&store, "k", &checkpoint, "w").await;
        let client = store.pool().get().await.unwrap();
        client
            .batch_execute("DROP TABLE hookchain_threads")
            .await
            .unwrap();
    }
    let store = connect(&server).await;
    let thread = thread_store_rules::conversation("t", "hello").await;
    assert_eq!(store.threads().save(&thread, 0).await.unwrap(), 1);
    assert_eq!(
        store.get("k").await.unwrap(),
        Some(Record::Checkpoint(Box::new(checkpoint)))
    );
}
