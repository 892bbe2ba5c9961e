//! `PostgresCheckpointer` (feature `postgres`) against a Postgres server the test starts itself
//! (`pg`: Debian's `postgresql`, on a loopback port): every rule of the `Checkpointer`
//! contract (`store_rules`), a corrupt row read as `Decode`, workers starting at once, and two
//! stores (two pools) racing claims on one key.

mod pg;
mod store_rules;

use hookchain::interrupt::{
    CheckpointError, Checkpointer, Claim, Clock, PostgresCheckpointer, Record, Stored,
};
use store_rules::store_as;

/// A store on `server`'s database.
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

/// A server that cannot be reached, or a connection string that does not parse, is a `Store`
/// error naming what failed.
#[tokio::test]
async fn connection_failures_are_store_errors() {
    let error = PostgresCheckpointer::connect("port=not-a-number")
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            CheckpointError::Store {
                what: "parse the connection string",
                ..
            }
        ),
        "{error:?}"
    );
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
    assert!(
        matches!(
            error,
            CheckpointError::Store {
                what: "create the table",
                ..
            }
        ),
        "{error:?}"
    );
}
