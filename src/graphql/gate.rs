//! The database as one GraphQL operation sees it: one connection at a time.
//!
//! async-graphql resolves the root fields of a query, the fields of an
//! object and the items of a list concurrently. Left alone, a query with a
//! thousand aliases asks the pool for a thousand connections at once and
//! every other request of the instance queues behind it. Every resolver and
//! loader of an operation leases the database through this gate instead, so
//! an operation holds at most one connection, and other requests get theirs
//! between its statements.
//!
//! The gate also chooses the pool: an operation that cannot write (a query
//! or a subscription) reads through `AppState::reads`, which on SQLite is a
//! pool of read-only connections beside the one that writes, so long reads
//! never hold up collect's batch writer. On PostgreSQL both are one pool,
//! and reads take turns in it (`AppState::read_turns`) instead.

use std::{
    ops::Deref,
    sync::{
        Arc,
        atomic::{AtomicU8, Ordering},
    },
};

use sea_orm::DatabaseConnection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};

use crate::{
    error::{AppError, AppResult},
    state::AppState,
};

/// One operation's (or one socket's) way to the database.
#[derive(Clone)]
pub struct Gate(Arc<Inner>);

struct Inner {
    turn: Semaphore,
    main: DatabaseConnection,
    reads: DatabaseConnection,
    /// The instance's turns for reads on PostgreSQL (`AppState::read_turns`).
    read_turns: Option<Arc<Semaphore>>,
    /// `UNKNOWN` until a document is parsed; `READS` while every document
    /// parsed through this gate was without a mutation; `WRITES` for good
    /// once one had one (a socket's operations share a gate, and a mutation
    /// running beside a query must keep the pool that writes).
    pool: AtomicU8,
}

const UNKNOWN: u8 = 0;
const READS: u8 = 1;
const WRITES: u8 = 2;

impl Gate {
    pub fn new(app: &AppState) -> Self {
        Gate(Arc::new(Inner {
            turn: Semaphore::new(1),
            main: app.db.clone(),
            reads: app.reads.clone(),
            read_turns: app.read_turns.clone(),
            pool: AtomicU8::new(UNKNOWN),
        }))
    }

    /// Called by the limits extension once a document is parsed: a document
    /// that cannot write may use the read pool.
    pub fn parsed(&self, can_write: bool) {
        if can_write {
            self.0.pool.store(WRITES, Ordering::Relaxed);
        } else {
            self.0.pool.compare_exchange(UNKNOWN, READS, Ordering::Relaxed, Ordering::Relaxed).ok();
        }
    }

    /// Waits for the operation's turn. Hold the lease only across the
    /// service call that needs it (a temporary in the call expression): a
    /// resolver that holds one while it waits on a DataLoader would wait on
    /// itself.
    pub async fn lease(&self) -> AppResult<Lease<'_>> {
        let permit = self.0.turn.acquire().await.map_err(AppError::internal)?;
        if self.0.pool.load(Ordering::Relaxed) != READS {
            return Ok(Lease { _turn: permit, _read_turn: None, db: &self.0.main });
        }
        let read_turn = match &self.0.read_turns {
            Some(turns) => Some(turns.clone().acquire_owned().await.map_err(AppError::internal)?),
            None => None,
        };
        Ok(Lease { _turn: permit, _read_turn: read_turn, db: &self.0.reads })
    }
}

/// The database for one service call of an operation.
pub struct Lease<'a> {
    _turn: SemaphorePermit<'a>,
    _read_turn: Option<OwnedSemaphorePermit>,
    db: &'a DatabaseConnection,
}

impl Deref for Lease<'_> {
    type Target = DatabaseConnection;

    fn deref(&self) -> &DatabaseConnection {
        self.db
    }
}
