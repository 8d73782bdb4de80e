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

mod event_reads;
mod event_tallies;
mod events;
mod held;
mod load;
mod numbers;
mod panels;
mod table;

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, PoisonError},
};

use sea_orm::{ConnectionTrait, DbBackend, DbErr};
use tokio::sync::OnceCell;

use event_tallies::KeptEvents;
use events::EventTable;
use held::{Copied, Held, Loading, Owner, fresh_tail};
pub use held::{CopyLoads, Loader};
use load::TailPrint;
pub use panels::Panels;
pub use table::answers;
use table::{Column, Lowering, Pieces, Table, Tallies};

use super::{
    counts::Groups,
    query::{Dimension, Filter, Grain},
    range::{Buckets, Span},
    sql::Sql,
};
use crate::service::{credit::cache, tracking::sessionize::SESSION_MAX_MS};

/// How many sites' copies an instance keeps; the least recently read goes.
const SITES_KEPT: usize = 16;

/// A tail as last read, with the print it was read at.
type KeptTail<T> = Mutex<Option<(TailPrint, Arc<T>)>>;

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
}

impl SiteCopy {
    fn valid(&self, site: SiteKey, generation: i64, until: i64) -> bool {
        self.created_at == site.created_at && self.generation == generation && self.until == until
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
        });
        sites.insert(site.id, (tick, copy.clone()));
        while sites.len() > SITES_KEPT {
            let Some(oldest) = sites.iter().min_by_key(|(_, (read, _))| *read).map(|(id, _)| *id) else { break };
            sites.remove(&oldest);
        }
        copy
    }
}

/// How a query counts its identified and hot visitors: the site's hot
/// threshold and the score's SQL at the query's instant.
pub struct Flagged {
    pub site_id: i64,
    pub threshold: i32,
    pub score: String,
}

/// Visitors up to which the identified and hot among them are looked up
/// by id; above it, the site's identified visitors and those near enough
/// the threshold to be hot are read from their indexes instead (at 1M
/// events, 36k visitors by id took 23 ms), and kept if among them.
const FLAGGED_BY_ID: usize = 2_000;

impl Flagged {
    /// Those of `visitors` (in order, each once) identified, and those hot.
    async fn of(&self, db: &impl ConnectionTrait, visitors: Vec<i64>) -> Result<(HashSet<i64>, HashSet<i64>), DbErr> {
        let (mut identified, mut hot) = (HashSet::new(), HashSet::new());
        if visitors.is_empty() {
            return Ok((identified, hot));
        }
        let backend = db.get_database_backend();
        if visitors.len() <= FLAGGED_BY_ID {
            // By id: `+` keeps the site's visitor index out.
            let mut sql = Sql::new(backend);
            sql.push(&format!(
                "SELECT v.id AS id, CASE WHEN v.status = 'identified' THEN 1 ELSE 0 END AS identified, \
                 CASE WHEN {} >= {} THEN 1 ELSE 0 END AS hot FROM visitors v",
                self.score, self.threshold
            ));
            sql.push(" WHERE v.id IN ").in_ids(visitors).push(" AND +v.site_id = ").bind(self.site_id);
            sql.push(&format!(" AND (v.status = 'identified' OR {} >= {})", self.score, self.threshold));
            for row in db.query_all_raw(sql.statement()).await? {
                let id: i64 = row.try_get("", "id")?;
                if row.try_get::<i32>("", "identified")? == 1 {
                    identified.insert(id);
                }
                if row.try_get::<i32>("", "hot")? == 1 {
                    hot.insert(id);
                }
            }
            return Ok((identified, hot));
        }
        // The site's identified visitors, ids only: the partial index holds
        // them all (SQLite otherwise walks a wider covering index over every
        // visitor of the site: 19 ms against 1 ms at 130k visitors).
        let mut sql = Sql::new(backend);
        let pinned =
            if backend == DbBackend::Sqlite { format!(" INDEXED BY {IDENTIFIED_INDEX}") } else { String::new() };
        sql.push(&format!("SELECT v.id AS id FROM visitors v{pinned} WHERE v.site_id = ")).bind(self.site_id);
        sql.push(" AND v.status = 'identified'");
        identified.extend(among(db, sql, &visitors).await?);
        // The stored score plus the most recency can give is the most a
        // visitor can score, so only those within that reach can be hot.
        let mut sql = Sql::new(backend);
        sql.push("SELECT v.id AS id FROM visitors v WHERE v.site_id = ").bind(self.site_id);
        sql.push(" AND v.is_bot IN (").bind(false).push(", ").bind(true).push(") AND v.score >= ");
        sql.bind(self.threshold.saturating_sub(crate::service::scoring::RECENCY_MAX));
        sql.push(&format!(" AND {} >= {}", self.score, self.threshold));
        hot.extend(among(db, sql, &visitors).await?);
        Ok((identified, hot))
    }
}

/// The site's partial index of identified visitors (migration m20261222_000001).
const IDENTIFIED_INDEX: &str = "idx_visitors_identified";

/// The ids a statement selects that are among `visitors` (sorted).
async fn among(db: &impl ConnectionTrait, sql: Sql, visitors: &[i64]) -> Result<Vec<i64>, DbErr> {
    let mut found = Vec::new();
    for row in db.query_all_raw(sql.statement()).await? {
        let id: i64 = row.try_get("", "id")?;
        if visitors.binary_search(&id).is_ok() {
            found.push(id);
        }
    }
    Ok(found)
}

/// The site a snapshot reads, as the copy needs to know it.
#[derive(Debug, Clone, Copy)]
pub struct SiteKey {
    pub id: i64,
    pub created_at: i64,
}

/// What one snapshot took for the copy: the copy it may read, the tail
/// and each span's cut visits, so the queries of one page take them once.
#[derive(Default)]
pub struct Reading {
    copies: Option<Arc<VisitCopies>>,
    taken: Mutex<Taken>,
}

/// What a snapshot took, by site.
#[derive(Default)]
struct Taken {
    sites: HashMap<i64, SiteTaken>,
}

#[derive(Default)]
struct SiteTaken {
    /// The copies valid on the snapshot, and its tail's print.
    copy: Option<(Arc<SiteCopy>, TailPrint)>,
    /// The visit copy and tail, once asked for: `None` within when the
    /// copy was still loading, so every query of the snapshot reads the rows.
    visits: Option<Option<(Arc<Table>, Arc<Table>)>>,
    /// The event copy and tail, the same way.
    events: Option<Option<(Arc<EventTable>, Arc<EventTable>)>>,
    /// By span and grain: the grain's buckets are those of the site's zone.
    pieces: HashMap<(i64, i64, Option<Grain>), Arc<Pieces>>,
    /// The events a span's filters keep, by span and filters: the
    /// explorer's event panels share the page's filters.
    kept_events: Vec<KeptOfSpan>,
}

/// The events a span's filters keep: the span's bounds, the filters, the events.
type KeptOfSpan = ((i64, i64), Vec<Filter>, Arc<KeptEvents>);

impl Reading {
    /// A snapshot's reading of `copies`; `None` reads every visit from the rows.
    pub fn of(copies: Option<Arc<VisitCopies>>) -> Reading {
        Reading { copies, taken: Mutex::default() }
    }

    /// What the snapshot took for `site_id`.
    fn taken<R>(&self, site_id: i64, read: impl FnOnce(&mut SiteTaken) -> R) -> R {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        read(taken.sites.entry(site_id).or_default())
    }

    /// The whole-visit groups of a span from the copy and the tail, or
    /// `None` when there is no copy to read or the query asks for what it
    /// does not hold (`answers`).
    pub async fn groups(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, buckets): (Span, Option<&Buckets>),
        (dimensions, filters): (&[Dimension], &[Filter]),
        now: i64,
        flagged: Option<&Flagged>,
    ) -> Result<Option<Groups>, DbErr> {
        let Some(tallies) = self.tallies(db, site, (span, buckets), (dimensions, filters), now).await? else {
            return Ok(None);
        };
        let groups = match flagged {
            Some(flagged) => {
                let (identified, hot) = flagged.of(db, tallies.visitors()).await?;
                tallies.groups((&identified, &hot))
            }
            None => tallies.groups((&HashSet::new(), &HashSet::new())),
        };
        Ok(Some(groups))
    }

    /// The explorer's visit panels over a span (`panels`): the whole under
    /// `filters` with its identified and hot visitors (`flagged`), and the
    /// groups of each of `dimensions`; `None` when there is no copy to read
    /// or one of them is not a stored visit property.
    pub async fn panels(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        span: Span,
        (dimensions, filters): (&[Dimension], &[Filter]),
        now: i64,
        flagged: &Flagged,
    ) -> Result<Option<Panels>, DbErr> {
        let Some(copies) = &self.copies else { return Ok(None) };
        let Some(columns) = dimensions.iter().map(Column::of_dimension).collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        if !answers(dimensions, filters) {
            return Ok(None);
        }
        let Some((held, tail)) = self.copy_and_tail(db, copies, site, now).await? else { return Ok(None) };
        let pieces = self.pieces(db, site.id, (span, None), [&*held, &*tail]).await?;
        let Some(mut found) = panels::panels([&*held, &*tail], span, (&columns, filters), &pieces, lowering(db)) else {
            return Ok(None);
        };
        let (identified, hot) = flagged.of(db, std::mem::take(&mut found.visitors)).await?;
        found.whole.identified = identified.len() as i64;
        found.whole.hot = hot.len() as i64;
        Ok(Some(found))
    }

    async fn tallies(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, buckets): (Span, Option<&Buckets>),
        (dimensions, filters): (&[Dimension], &[Filter]),
        now: i64,
    ) -> Result<Option<Tallies>, DbErr> {
        let Some(copies) = &self.copies else { return Ok(None) };
        if !answers(dimensions, filters) {
            return Ok(None);
        }
        let Some((held, tail)) = self.copy_and_tail(db, copies, site, now).await? else { return Ok(None) };
        let pieces = self.pieces(db, site.id, (span, buckets), [&*held, &*tail]).await?;
        let mut tallies = Tallies::default();
        for table in [&*held, &*tail] {
            if tallies.add(table, (span, buckets), (dimensions, filters), &pieces, lowering(db)).is_none() {
                return Ok(None);
            }
        }
        Ok(Some(tallies))
    }

    /// The site's copies valid on this snapshot, and its tail's print.
    async fn site_copy(
        &self,
        db: &impl ConnectionTrait,
        copies: &VisitCopies,
        site: SiteKey,
        now: i64,
    ) -> Result<(Arc<SiteCopy>, TailPrint), DbErr> {
        if let Some(found) = self.taken(site.id, |taken| taken.copy.clone()) {
            return Ok(found);
        }
        let generation = cache::settled_generation(db, site.id).await?;
        let until = cache::closed_until(now) - SESSION_MAX_MS;
        let copy = copies.valid(site, generation, until);
        let print = load::tail_print(db, site.id, until).await?;
        self.taken(site.id, |taken| taken.copy = Some((copy.clone(), print)));
        Ok((copy, print))
    }

    /// The visit copy and tail, or `None` while the copy loads.
    async fn copy_and_tail(
        &self,
        db: &impl ConnectionTrait,
        copies: &VisitCopies,
        site: SiteKey,
        now: i64,
    ) -> Result<Option<(Arc<Table>, Arc<Table>)>, DbErr> {
        if let Some(found) = self.taken(site.id, |taken| taken.visits.clone()) {
            return Ok(found);
        }
        let (copy, print) = self.site_copy(db, copies, site, now).await?;
        let found = held_and_tail(copies, (&copy, site.id), (&copy.visits, &copy.tail), print, || {
            load::load(db, site.id, copy.until, i64::MAX)
        })
        .await?;
        self.taken(site.id, |taken| taken.visits = Some(found.clone()));
        Ok(found)
    }

    /// The event copy and tail, or `None` while the copy loads.
    async fn events_and_tail(
        &self,
        db: &impl ConnectionTrait,
        copies: &VisitCopies,
        site: SiteKey,
        now: i64,
    ) -> Result<Option<(Arc<EventTable>, Arc<EventTable>)>, DbErr> {
        if let Some(found) = self.taken(site.id, |taken| taken.events.clone()) {
            return Ok(found);
        }
        let (copy, print) = self.site_copy(db, copies, site, now).await?;
        let found = held_and_tail(copies, (&copy, site.id), (&copy.events, &copy.event_tail), print, || {
            load::load_events(db, site.id, copy.until, i64::MAX)
        })
        .await?;
        self.taken(site.id, |taken| taken.events = Some(found.clone()));
        Ok(found)
    }

    /// The events and pageviews in `span`, per bucket, of each visit its
    /// edges or a bucket's cut.
    async fn pieces(
        &self,
        db: &impl ConnectionTrait,
        site_id: i64,
        (span, buckets): (Span, Option<&Buckets>),
        tables: [&Table; 2],
    ) -> Result<Arc<Pieces>, DbErr> {
        let key = (span.from, span.to, buckets.map(|buckets| buckets.grain));
        if let Some(found) = self.taken(site_id, |taken| taken.pieces.get(&key).cloned()) {
            return Ok(found);
        }
        let ids = tables.iter().flat_map(|table| table.cut(span, buckets)).collect();
        let found = Arc::new(load::cut_pieces(db, site_id, (span, buckets), ids).await?);
        self.taken(site_id, |taken| taken.pieces.insert(key, found.clone()));
        Ok(found)
    }
}

/// How the database lowers text for a case-insensitive comparison.
fn lowering(db: &impl ConnectionTrait) -> Lowering {
    if db.get_database_backend() == DbBackend::Postgres { Lowering::Unicode } else { Lowering::Ascii }
}

/// The held part of a copy, if it is loaded (or loads within the wait),
/// and its tail, read again when its print moves (`read`).
async fn held_and_tail<T: Copied, Read>(
    copies: &VisitCopies,
    (copy, site_id): (&SiteCopy, i64),
    (held, tail): (&Held<T>, &KeptTail<T>),
    print: TailPrint,
    read: impl FnOnce() -> Read,
) -> Result<Option<(Arc<T>, Arc<T>)>, DbErr>
where
    Read: Future<Output = Result<T, DbErr>>,
{
    let owner = Owner { site_id, generation: copy.generation, until: copy.until };
    let Some(held) = held.get(&copies.loading, owner).await else { return Ok(None) };
    let tail = fresh_tail(tail, print, read).await?;
    Ok(Some((held, tail)))
}
