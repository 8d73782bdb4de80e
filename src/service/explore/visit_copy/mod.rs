//! Each site's closed visits, copied into memory column by column (design
//! §17): a filtered whole-visit query reads them there instead of reading
//! every visit row of its span through the database, which took 0.6 to 2 s
//! at 10M events on SQLite.
//!
//! The copy holds the visits begun before `until`: a day before the first
//! day that may still change (`credit::cache::closed_until`). Every write
//! that changes a visit notes where the visit began, and one that reaches
//! before yesterday (a late event, an erasure, retention) moves the site's
//! settled generation in its own transaction (`credit::cache::forget_from`);
//! the margin of `closed_until` covers instances' clocks an hour apart. A
//! copy is read only on a snapshot whose settled generation is the one it
//! was loaded at, so nothing it holds can differ from the rows of that
//! snapshot, and visits running past midnight (which move the credit
//! generation) leave it be. The visits begun since (the tail, one to two
//! days) and the events of visits a span's edge cuts are read from the
//! rows on each snapshot, once.
//!
//! The site's human events are copied the same way, on the first query
//! that needs them (a funnel's steps): those before `until` belong to
//! visits begun before it, so the same generation keeps them, and those
//! since are read again whenever the tail's print moves.
//!
//! Each instance keeps its own copies; the generation is in the database,
//! so instances sharing one agree. A copy loads behind the queries that
//! need it (`held`): until it is there, they read the rows.

mod counting;
mod event_reads;
mod event_tallies;
mod events;
mod flagged;
mod held;
mod load;
mod numbers;
mod panels;
mod reading;
mod table;
mod tails;
mod visit_reads;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

use sea_orm::{ConnectionTrait, DbBackend, DbErr};
use tokio::sync::OnceCell;

use events::{EventTable, VisitEvents};
pub use flagged::Flagged;
use held::{Copied, Held, Loading, Owner};
pub use held::{CopyLoads, Loader};
use load::TailPrint;
pub use panels::Panels;
pub use reading::Reading;
pub use table::answers;
use table::{Lowering, Table};
pub use tails::CopyTailReads;
use tails::{KeptTail, Tail};

/// How many sites' copies an instance keeps; the least recently read goes.
const SITES_KEPT: usize = 16;

/// A site's copies and what they are valid for. Each is loaded the first
/// time a query needs it, in the background (`held`).
struct SiteCopy {
    /// The site's creation, so a new site given a deleted one's id never
    /// reads the old one's copy.
    created_at: i64,
    generation: i64,
    until: i64,
    /// The visits begun before `until`.
    visits: Held<Table>,
    /// The visits begun since `until`, as last read, with their print.
    tail: KeptTail<Table>,
    /// The human events before `until`: all of visits begun before it.
    events: Held<EventTable>,
    /// The human events since `until`, as last read, with their print.
    event_tail: KeptTail<EventTable>,
    /// The row in `visits` of each visit of `events`.
    visit_rows: OnceCell<Arc<Vec<u32>>>,
    /// The rows of each visit's events in `events`.
    visit_events: OnceCell<Arc<VisitEvents>>,
    /// The number of each visitor of an event tail, and that tail.
    tail_visitors: Mutex<Option<NumberedTail>>,
    /// The rows of each visit's events in an event tail, and that tail.
    tail_visit_events: Mutex<Option<(Arc<EventTable>, Arc<VisitEvents>)>>,
    /// The tail's print on the latest snapshot that read it.
    last_print: Mutex<Option<TailPrint>>,
}

/// An event tail, and the number of each of its visitors.
type NumberedTail = (Arc<EventTable>, Arc<Vec<u32>>);

impl SiteCopy {
    fn valid(&self, site: SiteKey, generation: i64, until: i64) -> bool {
        self.created_at == site.created_at && self.generation == generation && self.until == until
    }

    /// The number of each of `tail`'s visitors beside the event copy
    /// `held` (`events::tail_visitor_numbers`), found once per tail.
    fn tail_visitors(&self, held: &EventTable, tail: &Arc<EventTable>) -> Arc<Vec<u32>> {
        let mut kept = self.tail_visitors.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((of, numbers)) = kept.as_ref()
            && Arc::ptr_eq(of, tail)
        {
            return numbers.clone();
        }
        let numbers = Arc::new(events::tail_visitor_numbers(held, tail));
        *kept = Some((tail.clone(), numbers.clone()));
        numbers
    }

    /// The tail's print on the latest snapshot that read one.
    fn last_print(&self) -> Option<TailPrint> {
        *self.last_print.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `print` as the latest unless a later snapshot's is kept.
    fn remember_print(&self, print: TailPrint) {
        let mut last = self.last_print.lock().unwrap_or_else(PoisonError::into_inner);
        if last.is_none_or(|last| !last.counts_more_than(&print)) {
            *last = Some(print);
        }
    }

    /// The rows of each visit's events in the event copy `held`, found once.
    async fn held_visit_events(&self, held: &Arc<EventTable>) -> Result<Arc<VisitEvents>, DbErr> {
        let found = self.visit_events.get_or_try_init(|| {
            let held = held.clone();
            async move { counting::counted(move || Arc::new(VisitEvents::of(&held))).await }
        });
        Ok(found.await?.clone())
    }

    /// The rows of each visit's events in the event tail `tail`, found once per tail.
    async fn tail_visit_events(&self, tail: &Arc<EventTable>) -> Result<Arc<VisitEvents>, DbErr> {
        if let Some((of, rows)) = self.tail_visit_events.lock().unwrap_or_else(PoisonError::into_inner).as_ref()
            && Arc::ptr_eq(of, tail)
        {
            return Ok(rows.clone());
        }
        let counted_tail = tail.clone();
        let rows = Arc::new(counting::counted(move || VisitEvents::of(&counted_tail)).await?);
        *self.tail_visit_events.lock().unwrap_or_else(PoisonError::into_inner) = Some((tail.clone(), rows.clone()));
        Ok(rows)
    }
}

/// The copies of one instance, by site.
pub struct VisitCopies {
    sites: Mutex<HashMap<i64, (u64, Arc<SiteCopy>)>>,
    reads: std::sync::atomic::AtomicU64,
    loading: Arc<Loading>,
}

impl VisitCopies {
    pub fn new(loader: Loader) -> VisitCopies {
        VisitCopies { sites: Mutex::default(), reads: Default::default(), loading: Arc::new(Loading::new(loader)) }
    }

    /// The site's copies valid for `generation` and `until`, made empty
    /// when those kept are not (or there are none).
    fn valid(&self, site: SiteKey, generation: i64, until: i64) -> Arc<SiteCopy> {
        let tick = self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut sites = self.sites.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((read, copy)) = sites.get_mut(&site.id).filter(|(_, copy)| copy.valid(site, generation, until)) {
            *read = tick;
            return copy.clone();
        }
        let copy = Arc::new(SiteCopy {
            created_at: site.created_at,
            generation,
            until,
            visits: Held::default(),
            tail: Mutex::default(),
            events: Held::default(),
            event_tail: Mutex::default(),
            visit_rows: OnceCell::new(),
            visit_events: OnceCell::new(),
            tail_visitors: Mutex::default(),
            tail_visit_events: Mutex::default(),
            last_print: Mutex::default(),
        });
        sites.insert(site.id, (tick, copy.clone()));
        while sites.len() > SITES_KEPT {
            let Some(oldest) = sites.iter().min_by_key(|(_, (read, _))| *read).map(|(id, _)| *id) else { break };
            sites.remove(&oldest);
        }
        copy
    }
}

/// The site a snapshot reads, as the copy needs to know it.
#[derive(Debug, Clone, Copy)]
pub struct SiteKey {
    pub id: i64,
    pub created_at: i64,
}

/// How the database lowers text for a case-insensitive comparison.
fn lowering(db: &impl ConnectionTrait) -> Lowering {
    if db.get_database_backend() == DbBackend::Postgres { Lowering::Unicode } else { Lowering::Ascii }
}

/// The held part of a copy, if it is loaded (or loads within the wait),
/// and its tail at `print` (`tails::fresh_tail`).
async fn held_and_tail<T: Copied + Tail>(
    db: &impl ConnectionTrait,
    copies: &VisitCopies,
    (copy, site_id): (&SiteCopy, i64),
    (held, tail): (&Held<T>, &KeptTail<T>),
    print: TailPrint,
) -> Result<Option<(Arc<T>, Arc<T>)>, DbErr> {
    let owner = Owner { site_id, generation: copy.generation, until: copy.until };
    let Some(held) = held.get(&copies.loading, owner).await else { return Ok(None) };
    let reads = &copies.loading.loader.tail_reads;
    let tail = tails::fresh_tail(db, tail, (site_id, copy.until), print, reads).await?;
    Ok(Some((held, tail)))
}
