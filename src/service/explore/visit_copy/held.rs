//! The part of a copy that holds what began before `until`, and how it
//! loads: by a task of its own, on a snapshot of its own, one load at a
//! time per instance. A query waits for a load it finds running only until
//! `Loader::wait` after the load began, and is answered from the rows
//! meanwhile: at 10M events the visits take about 40 s to load, the events
//! as long, and no one's first query should wait that out. A small site's
//! copy loads within the wait, so its first query already reads it.

use std::{future::Future, panic::AssertUnwindSafe, pin::Pin, sync::Arc, time::Duration};

use futures_util::FutureExt;
use prometheus_client::metrics::{counter::Counter, family::Family};
use sea_orm::{DatabaseConnection, DatabaseTransaction, DbErr};
use tokio::{sync::watch, time::Instant};

use super::{events::EventTable, load, table::Table};
use crate::{
    error::{AppError, AppResult},
    service::{analytics::snapshot, credit::cache},
};

/// Copy loads by kind (visits, events) and outcome: loaded, stale (the
/// site's settled generation moved while it waited) or failed.
#[derive(Clone, Default)]
pub struct CopyLoads(pub Family<CopyLoadLabels, Counter>);

#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
pub struct CopyLoadLabels {
    pub kind: &'static str,
    pub outcome: &'static str,
}

/// What a copy holds, as read from the rows on one snapshot.
pub(super) trait Copied: Sized + Send + Sync + 'static {
    /// The name its loads are counted under.
    const KIND: &'static str;

    /// Reads what began in `[from, to)`.
    fn read(db: &DatabaseTransaction, site_id: i64, from: i64, to: i64) -> ReadFuture<'_, Self>;
}

type ReadFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, DbErr>> + Send + 'a>>;

impl Copied for Table {
    const KIND: &'static str = "visits";

    fn read(db: &DatabaseTransaction, site_id: i64, from: i64, to: i64) -> ReadFuture<'_, Self> {
        Box::pin(load::load(db, site_id, from, to))
    }
}

impl Copied for EventTable {
    const KIND: &'static str = "events";

    fn read(db: &DatabaseTransaction, site_id: i64, from: i64, to: i64) -> ReadFuture<'_, Self> {
        Box::pin(load::load_events(db, site_id, from, to))
    }
}

/// Where and how the copies load.
pub struct Loader {
    /// The connection the loads read through, apart from the ones that
    /// serve requests: a load holds it for as long as it takes. It takes
    /// no read turn on PostgreSQL for the same reason.
    pub pool: DatabaseConnection,
    /// How long after a load began a query waits for it.
    pub wait: Duration,
    pub loads: CopyLoads,
    pub tail_reads: super::tails::CopyTailReads,
}

/// The instance's loader, and its one turn: one copy loads at a time (a
/// site's visits at 10M events are 2.2M rows; two loads at once would take
/// both cores).
pub(super) struct Loading {
    pub(super) loader: Loader,
    turn: tokio::sync::Mutex<()>,
}

impl Loading {
    pub fn new(loader: Loader) -> Loading {
        Loading { loader, turn: tokio::sync::Mutex::new(()) }
    }
}

/// A copy's held part as it stands.
enum State<T> {
    /// Not loaded, and no load running (or the last one failed).
    Idle,
    Loading {
        since: Instant,
    },
    Ready(Arc<T>),
}

/// A copy's held part, loaded once for the settled generation it belongs to.
pub(super) struct Held<T>(watch::Sender<State<T>>);

impl<T> Default for Held<T> {
    fn default() -> Self {
        Held(watch::Sender::new(State::Idle))
    }
}

/// What a load needs to know of the copy it fills.
pub(super) struct Owner {
    pub site_id: i64,
    pub generation: i64,
    pub until: i64,
}

impl<T> Held<T> {
    /// The held part if it is loaded, without waiting or starting a load.
    pub fn ready(&self) -> Option<Arc<T>> {
        match &*self.0.borrow() {
            State::Ready(held) => Some(held.clone()),
            _ => None,
        }
    }
}

impl<T: Copied> Held<T> {
    /// The held part, if it is loaded or loads within the wait; starts its
    /// load when none has begun.
    pub async fn get(&self, loading: &Arc<Loading>, owner: Owner) -> Option<Arc<T>> {
        let start = self.0.send_if_modified(|state| match state {
            State::Idle => {
                *state = State::Loading { since: Instant::now() };
                true
            }
            _ => false,
        });
        if start {
            tokio::spawn(load_held(self.0.clone(), loading.clone(), owner));
        }
        let mut watching = self.0.subscribe();
        let deadline = match &*watching.borrow() {
            State::Ready(held) => return Some(held.clone()),
            State::Idle => return None,
            State::Loading { since } => *since + loading.loader.wait,
        };
        let settled = watching.wait_for(|state| !matches!(state, State::Loading { .. }));
        match tokio::time::timeout_at(deadline, settled).await {
            Ok(Ok(state)) => match &*state {
                State::Ready(held) => Some(held.clone()),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Loads a held part on a snapshot of its own and makes it ready, unless
/// the site's settled generation moved on since the copy was made (a new
/// copy is then made by the next query).
async fn load_held<T: Copied>(state: watch::Sender<State<T>>, loading: Arc<Loading>, owner: Owner) {
    let loaded = async {
        let _turn = loading.turn.lock().await;
        let txn = snapshot(&loading.loader.pool).await?;
        if cache::settled_generation(&txn, owner.site_id).await? != owner.generation {
            return AppResult::Ok(None);
        }
        let held = T::read(&txn, owner.site_id, i64::MIN, owner.until).await?;
        txn.commit().await?;
        Ok(Some(held))
    };
    let began = std::time::Instant::now();
    // A load that panicked must not leave the copy loading for good: it is
    // a failed load, and the next query begins another.
    let loaded =
        AssertUnwindSafe(loaded).catch_unwind().await.unwrap_or_else(|_| Err(AppError::internal("the load panicked")));
    let (outcome, now) = match loaded {
        Ok(Some(held)) => {
            let millis = began.elapsed().as_millis();
            tracing::info!(site_id = owner.site_id, kind = T::KIND, millis, "copy loaded");
            ("loaded", State::Ready(Arc::new(held)))
        }
        Ok(None) => ("stale", State::Idle),
        Err(err) => {
            tracing::warn!(site_id = owner.site_id, kind = T::KIND, error = %err.message, "copy load failed; queries read the rows");
            ("failed", State::Idle)
        }
    };
    loading.loader.loads.0.get_or_create(&CopyLoadLabels { kind: T::KIND, outcome }).inc();
    state.send_replace(now);
}
