//! A copy's tail (what began since `until`) as a snapshot reads it: kept
//! while its print stands, else brought up to date from what was written
//! since it was read. On a live site the print moves with every event, and
//! reading the tail whole again each time took 0.6 s a filtered page at 1M
//! events (15k visits and 65k events), ten times that at 10M; an event
//! stored since is one row, and a visit written to one row again.
//!
//! A refresh is the tail a full read would give: every event is kept under
//! a new id and never changed, and every write to a visit stores an event
//! of it or moves its start or end (`load::TailPrint`). It reads the events
//! stored under ids above the print's last and every tail visit's start and
//! end (from the start index alone), reads again the visits written to or
//! moved, and is taken only when those events are all the new print counts
//! and the visits it gives are what the print counts (how many, the last
//! id, the sums of starts and ends); else the tail is read whole.

use std::{
    future::Future,
    sync::{Arc, Mutex, PoisonError},
};

use prometheus_client::metrics::{counter::Counter, family::Family};
use sea_orm::{ConnectionTrait, DbErr};

use super::{
    counting::counted,
    events::EventTable,
    load::{self, TailPrint, Written},
    table::Table,
};

/// A tail as last read, with the print it was read at.
pub(super) type KeptTail<T> = Mutex<Option<(TailPrint, Arc<T>)>>;

/// Tails read by kind (visits, events) and how: `read` whole (none was
/// kept), `refreshed` from what was written since the kept one, or
/// `read_again` whole when the kept one could not be refreshed.
#[derive(Clone, Default)]
pub struct CopyTailReads(pub Family<CopyTailLabels, Counter>);

#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
pub struct CopyTailLabels {
    pub kind: &'static str,
    pub how: &'static str,
}

/// What a tail holds, and how it is read and refreshed.
pub(super) trait Tail: Sized + Send + Sync + 'static {
    const KIND: &'static str;

    /// Everything of the site begun since `until`.
    fn read(db: &impl ConnectionTrait, site_id: i64, until: i64) -> impl Future<Output = Result<Self, DbErr>> + Send;

    /// `kept` with `written` (every event stored since it was read) taken
    /// in, if it then holds what `print` counts.
    fn refresh(
        db: &impl ConnectionTrait,
        kept: Arc<Self>,
        written: Vec<Written>,
        site_and_until: (i64, i64),
        print: TailPrint,
    ) -> impl Future<Output = Result<Option<Arc<Self>>, DbErr>> + Send;
}

impl Tail for Table {
    const KIND: &'static str = "visits";

    fn read(db: &impl ConnectionTrait, site_id: i64, until: i64) -> impl Future<Output = Result<Self, DbErr>> + Send {
        load::load(db, site_id, until, i64::MAX)
    }

    /// The visits the events were written to, and those whose start or
    /// end moved (an engagement ping's) or that came or went, are read again.
    async fn refresh(
        db: &impl ConnectionTrait,
        kept: Arc<Self>,
        written: Vec<Written>,
        (site_id, until): (i64, i64),
        print: TailPrint,
    ) -> Result<Option<Arc<Self>>, DbErr> {
        let keys = load::tail_keys(db, site_id, until).await?;
        let written: Vec<i64> = written.iter().map(|written| written.event.visit).collect();
        let (changed, kept) = counted(move || (kept.changed(keys, written), kept)).await?;
        let fresh = load::visits_by_id(db, site_id, until, &changed).await?;
        let table = counted(move || kept.refreshed(&changed, fresh)).await?;
        Ok(print.counts_visits_of(&table, until).then(|| Arc::new(table)))
    }
}

impl Tail for EventTable {
    const KIND: &'static str = "events";

    fn read(db: &impl ConnectionTrait, site_id: i64, until: i64) -> impl Future<Output = Result<Self, DbErr>> + Send {
        load::load_events(db, site_id, until, i64::MAX)
    }

    /// The human events written are merged in.
    async fn refresh(
        _: &impl ConnectionTrait,
        kept: Arc<Self>,
        written: Vec<Written>,
        _: (i64, i64),
        _: TailPrint,
    ) -> Result<Option<Arc<Self>>, DbErr> {
        let human: Vec<_> = written.into_iter().filter(|written| !written.is_bot).map(|w| (w.id, w.event)).collect();
        if human.is_empty() {
            return Ok(Some(kept));
        }
        Ok(Some(Arc::new(counted(move || kept.extended(human)).await?)))
    }
}

/// The tail at `print`: the one kept if its print is the same, else the
/// kept one refreshed, else read whole; kept for the next snapshot.
pub(super) async fn fresh_tail<T: Tail>(
    db: &impl ConnectionTrait,
    kept: &KeptTail<T>,
    (site_id, until): (i64, i64),
    print: TailPrint,
    reads: &CopyTailReads,
) -> Result<Arc<T>, DbErr> {
    let earlier = kept.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let (mut refreshed, mut how) = (None, "read");
    if let Some((at, tail)) = earlier {
        if at == print {
            return Ok(tail);
        }
        how = "read_again";
        if let Some(written) = print.written_since(at, db, (site_id, until)).await? {
            refreshed = T::refresh(db, tail, written, (site_id, until), print).await?;
        }
    }
    let tail = match refreshed {
        Some(tail) => {
            how = "refreshed";
            tail
        }
        None => Arc::new(T::read(db, site_id, until).await?),
    };
    reads.0.get_or_create(&CopyTailLabels { kind: T::KIND, how }).inc();
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    // A snapshot older than the one that kept its tail leaves that one be.
    if kept.as_ref().is_none_or(|(at, _)| !at.counts_more_than(&print)) {
        *kept = Some((print, tail.clone()));
    }
    Ok(tail)
}
