//! [`Runs`]: the rows of `hookchain_runs` as [`Slot`]s, loaded and saved atomically, at the
//! database's time.

use std::time::SystemTime;

use deadpool_postgres::{Object, Pool};
use hookchain_core::interrupt::{CheckpointError, Slot, SlotStore, millis, valid_key};
use tokio_postgres::Statement;

use super::clocks::Clocks;
use crate::{Row, store_error};

/// A row for a key that has none, so that the next statement can lock it: returns the key
/// when it inserted it (the key held nothing).
const ENSURE: &str = "INSERT INTO hookchain_runs (key, token, expires_at) VALUES ($1, 0, 0)
    ON CONFLICT (key) DO NOTHING RETURNING key";

/// The key's row, locked, and the database's time: `now()`, the time the transaction began
/// (the same in each of its statements). Judging by the time the transaction began, not the
/// time the lock was had (it may wait for another's), errs the safe way: a lease is found
/// expired no sooner than it is, and a new expiry is no later than a lease's time from the
/// decision.
const LOCK: &str = "SELECT checkpoint, ended, held_by, token, expires_at, now() FROM hookchain_runs
    WHERE key = $1 FOR UPDATE";

/// The database's time, and the key's row if it has one (its columns `NULL` if not).
const READ: &str = "SELECT r.checkpoint, r.ended, r.held_by, r.token, r.expires_at, t.now
    FROM (SELECT now()) AS t (now) LEFT JOIN hookchain_runs AS r ON r.key = $1";

const WRITE: &str = "UPDATE hookchain_runs SET checkpoint = $2, ended = $3, held_by = $4,
    token = $5, expires_at = $6, updated_at = now() WHERE key = $1";

const DELETE: &str = "DELETE FROM hookchain_runs WHERE key = $1";

/// The database's time, and every row, keys in the order of their bytes (the `C` collation,
/// whatever the database's): one row of `NULL`s but the time when there are none.
const LIST: &str = "SELECT r.checkpoint, r.ended, r.held_by, r.token, r.expires_at, t.now, r.key
    FROM (SELECT now()) AS t (now) LEFT JOIN hookchain_runs AS r ON true
    ORDER BY r.key COLLATE \"C\"";

/// Tombstones past their retention and free keys holding nothing, swept as runs end, at the
/// judged time `$1` (milliseconds since the Unix epoch).
const SWEEP: &str = "DELETE FROM hookchain_runs
    WHERE checkpoint IS NULL AND (held_by IS NULL OR expires_at <= $1)
    AND (ended IS NULL OR (ended::jsonb ->> 'keep_until')::bigint <= $1)";

/// The column of the database's time in [`LOCK`], [`READ`] and [`LIST`] (after the row's).
const NOW: usize = 5;

/// The runs of a [`PostgresCheckpointer`](super::PostgresCheckpointer): a [`SlotStore`] whose
/// time is the database's (as [`Clocks::judged`] has it), so that every rule of a
/// checkpointer is applied at the database's time, whichever worker asks.
#[derive(Clone)]
pub(super) struct Runs {
    pub(super) pool: Pool,
    pub(super) clocks: Clocks,
}

impl Runs {
    /// A connection from the pool.
    pub(super) async fn client(&self, what: &'static str) -> Result<Object, CheckpointError> {
        self.pool.get().await.map_err(store_error(what))
    }

    /// A connection from the pool, with `sql` prepared on it (once per connection).
    async fn prepared(
        &self,
        sql: &str,
        what: &'static str,
    ) -> Result<(Object, Statement), CheckpointError> {
        let client = self.client(what).await?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(store_error(what))?;
        Ok((client, statement))
    }

    /// The judged time of a row's column [`NOW`].
    fn judged(
        &self,
        row: &tokio_postgres::Row,
        what: &'static str,
    ) -> Result<SystemTime, CheckpointError> {
        let database = row.try_get(NOW).map_err(store_error(what))?;
        Ok(self.clocks.judged(database))
    }
}

impl SlotStore for Runs {
    async fn transact<T, F>(&self, key: &str, operation: F) -> Result<T, CheckpointError>
    where
        T: Send + 'static,
        F: FnOnce(Option<Slot>, SystemTime) -> Result<(Option<Slot>, T), CheckpointError>
            + Send
            + 'static,
    {
        let what = "write";
        let error = store_error(what);
        let key = valid_key(key)?;
        let mut client = self.client(what).await?;
        let transaction = client.transaction().await.map_err(error)?;
        let prepare = |sql| transaction.prepare_cached(sql);
        let (ensure, lock) = (
            prepare(ENSURE).await.map_err(error)?,
            prepare(LOCK).await.map_err(error)?,
        );
        let inserted = transaction
            .query_opt(&ensure, &[&key])
            .await
            .map_err(error)?
            .is_some();
        let row = transaction.query_one(&lock, &[&key]).await.map_err(error)?;
        let slot = if inserted {
            None
        } else {
            row_of(&row)?.map(Row::into_slot).transpose()?
        };
        let now = self.judged(&row, what)?;
        let (updated, done) = operation(slot.clone(), now)?;
        match &updated {
            Some(slot) => {
                let row = Row::of(slot)?;
                let write = prepare(WRITE).await.map_err(error)?;
                transaction
                    .execute(
                        &write,
                        &[
                            &key,
                            &row.checkpoint,
                            &row.ended,
                            &row.held_by,
                            &row.token,
                            &row.expires_at,
                        ],
                    )
                    .await
                    .map_err(error)?;
            }
            None => {
                let delete = prepare(DELETE).await.map_err(error)?;
                transaction.execute(&delete, &[&key]).await.map_err(error)?;
            }
        }
        if updated.as_ref().is_some_and(|slot| slot.ended.is_some()) {
            let now = i64::try_from(millis(now)).unwrap_or(i64::MAX);
            let sweep = prepare(SWEEP).await.map_err(error)?;
            transaction.execute(&sweep, &[&now]).await.map_err(error)?;
        }
        transaction.commit().await.map_err(error)?;
        Ok(done)
    }

    async fn read(&self, key: &str) -> Result<(Option<Slot>, SystemTime), CheckpointError> {
        let what = "read";
        let key = valid_key(key)?;
        let (client, read) = self.prepared(READ, what).await?;
        let row = client
            .query_one(&read, &[&key])
            .await
            .map_err(store_error(what))?;
        let slot = row_of(&row)?.map(Row::into_slot).transpose()?;
        Ok((slot, self.judged(&row, what)?))
    }

    async fn slots(&self) -> Result<(Vec<(String, Slot)>, SystemTime), CheckpointError> {
        let what = "list";
        let (client, list) = self.prepared(LIST, what).await?;
        let rows = client.query(&list, &[]).await.map_err(store_error(what))?;
        // At least one row: the time's, when the table has none.
        let Some(first) = rows.first() else {
            return Err(CheckpointError::Store {
                what,
                source: "the list's query returned no row, not even the database's time".into(),
            });
        };
        let now = self.judged(first, what)?;
        let mut slots = Vec::with_capacity(rows.len());
        for row in &rows {
            if let Some(stored) = row_of(row)? {
                let key: String = row.try_get(NOW + 1).map_err(store_error(what))?;
                slots.push((key, stored.into_slot()?));
            }
        }
        Ok((slots, now))
    }
}

/// The row's columns, if it has one (its token, never `NULL` in the table, is not): checkpoint,
/// ended, held_by, token, expires_at.
fn row_of(row: &tokio_postgres::Row) -> Result<Option<Row>, CheckpointError> {
    let error = store_error("read");
    let Some(token) = row.try_get(3).map_err(error)? else {
        return Ok(None);
    };
    Ok(Some(Row {
        checkpoint: row.try_get(0).map_err(error)?,
        ended: row.try_get(1).map_err(error)?,
        held_by: row.try_get(2).map_err(error)?,
        token,
        expires_at: row.try_get(4).map_err(error)?,
    }))
}
