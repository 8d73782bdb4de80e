//! SQLite checkpoints, off the batch writer's path.
//!
//! In WAL mode, a commit that leaves the log longer than `wal_autocheckpoint`
//! pages copies the log back into the database file, and syncs both, before
//! the commit returns. On the batch writer that was about a fifth of a busy
//! batch's time. A task does it instead, soon after each batch, on a
//! connection of its own: a checkpoint copies and syncs for milliseconds, and
//! on the pool's one connection (sea-orm gives a SQLite pool one) every batch
//! that arrived meanwhile waited for it, which set the redirect's p99. A
//! PASSIVE checkpoint takes no write lock, so the writer commits beside it.
//! Reads stay fast because readers only search the part of the log not yet
//! copied back, and the log starts over at a transaction that finds all of
//! it copied back. The threshold stays as a backstop (`BACKSTOP_PAGES`), so
//! the log stays bounded if the task falls behind or stops.

use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection};
use tokio::sync::mpsc;

use crate::config::SqliteSync;

/// Batches commit every few milliseconds under load: one checkpoint covers
/// all that committed while it waited.
const COALESCE: Duration = Duration::from_millis(20);

/// Asks the checkpoint task for a checkpoint; does nothing on PostgreSQL.
#[derive(Clone)]
pub struct Checkpoints {
    due: Option<mpsc::Sender<()>>,
}

impl Checkpoints {
    /// Starts the checkpoint task on SQLite, counting the checkpoints it runs
    /// in `runs`. It stops once every handle is dropped.
    /// The task opens its own connection to `url`; an in-memory database,
    /// which a second connection would not see, is checkpointed on `db`.
    pub fn start(db: &DatabaseConnection, url: &str, synchronous: SqliteSync, runs: Counter) -> Self {
        if db.get_database_backend() != DatabaseBackend::Sqlite {
            return Self { due: None };
        }
        // One slot: a request made while one is pending is already covered.
        let (due, requests) = mpsc::channel(1);
        let (db, url) = (db.clone(), url.to_owned());
        tokio::spawn(async move {
            let db = if url.contains(":memory:") || url.contains("mode=memory") {
                db
            } else {
                match super::connect_url(&url, synchronous).await {
                    Ok(own) => own,
                    Err(err) => {
                        tracing::warn!(error = %err, "no connection of its own for checkpoints; sharing the pool's");
                        db
                    }
                }
            };
            run(db, requests, runs).await;
        });
        Self { due: Some(due) }
    }

    /// Something was committed: checkpoint soon.
    pub fn committed(&self) {
        if let Some(due) = &self.due {
            due.try_send(()).ok();
        }
    }
}

async fn run(db: DatabaseConnection, mut requests: mpsc::Receiver<()>, runs: Counter) {
    while requests.recv().await.is_some() {
        tokio::time::sleep(COALESCE).await;
        // PASSIVE copies what it can without waiting on readers or the writer.
        match db.execute_unprepared("PRAGMA wal_checkpoint(PASSIVE)").await {
            Ok(_) => {
                runs.inc();
            }
            Err(err) => {
                tracing::warn!(error = %err, "SQLite checkpoint failed; commits take it over past the backstop");
            }
        }
    }
}
