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
//! Each instance keeps its own copies; the generation is in the database,
//! so instances sharing one agree.

mod table;

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, PoisonError},
};

use sea_orm::{ConnectionTrait, DbBackend, DbErr, QueryResult};

pub use table::answers;
use table::{Column, Lowering, Pieces, Table, Tallies, Visit};

use super::{
    counts::Groups,
    query::{Dimension, Filter, Grain},
    range::{Buckets, Span},
    sql::Sql,
};
use crate::service::{credit::cache, tracking::sessionize::SESSION_MAX_MS};

/// How many sites' copies an instance keeps; the least recently read goes.
const SITES_KEPT: usize = 16;

/// Visits read per statement while a copy is loaded.
const LOAD_CHUNK: u64 = 20_000;

/// A site's copy and what it is valid for.
struct SiteCopy {
    /// The site's creation, so a new site given a deleted one's id never
    /// reads the old one's copy.
    created_at: i64,
    generation: i64,
    until: i64,
    table: Table,
    /// The visits begun since `until`, as last read, with their print.
    tail: Mutex<Option<(TailPrint, Arc<Table>)>>,
}

/// How many visits and events have begun since `until`, and the last id of
/// each. Every write to a tail visit adds an event to it, at or after its
/// start, under a new id, and every new visit a row; what removes rows (an
/// erasure, retention) moves the settled generation, and with it the whole
/// copy. So while the print stands, the tail is the one read. Both are
/// read on their start and time indexes alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TailPrint {
    visits: (i64, i64),
    events: (i64, i64),
}

/// The copies of one instance, by site.
#[derive(Default)]
pub struct VisitCopies {
    sites: Mutex<HashMap<i64, (u64, Arc<SiteCopy>)>>,
    reads: std::sync::atomic::AtomicU64,
    /// One copy loads at a time: a site's visits at 10M events are 2.2M
    /// rows, and queries arriving together wait for the first one's.
    loading: tokio::sync::Mutex<()>,
}

impl VisitCopies {
    fn kept(&self, site_id: i64) -> Option<Arc<SiteCopy>> {
        let tick = self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut sites = self.sites.lock().unwrap_or_else(PoisonError::into_inner);
        let (read, copy) = sites.get_mut(&site_id)?;
        *read = tick;
        Some(copy.clone())
    }

    fn keep(&self, site_id: i64, copy: Arc<SiteCopy>) {
        let tick = self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut sites = self.sites.lock().unwrap_or_else(PoisonError::into_inner);
        sites.insert(site_id, (tick, copy));
        while sites.len() > SITES_KEPT {
            let Some(oldest) = sites.iter().min_by_key(|(_, (read, _))| *read).map(|(id, _)| *id) else { break };
            sites.remove(&oldest);
        }
    }
}

/// How a query counts its identified and hot visitors: the site's hot
/// threshold and the score's SQL at the query's instant.
pub struct Flagged {
    pub site_id: i64,
    pub threshold: i32,
    pub score: String,
}

impl Flagged {
    /// Those of `visitors` identified, and those hot.
    async fn of(&self, db: &impl ConnectionTrait, visitors: Vec<i64>) -> Result<(HashSet<i64>, HashSet<i64>), DbErr> {
        let (mut identified, mut hot) = (HashSet::new(), HashSet::new());
        if visitors.is_empty() {
            return Ok((identified, hot));
        }
        let mut sql = Sql::new(db.get_database_backend());
        sql.push(&format!(
            "SELECT v.id AS id, CASE WHEN v.status = 'identified' THEN 1 ELSE 0 END AS identified, \
             CASE WHEN {} >= {} THEN 1 ELSE 0 END AS hot FROM visitors v WHERE v.id IN ",
            self.score, self.threshold
        ));
        // By id: `+` keeps the site's visitor index out.
        sql.in_ids(visitors).push(" AND +v.site_id = ").bind(self.site_id);
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
        Ok((identified, hot))
    }
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

#[derive(Default)]
struct Taken {
    copy: Option<(Arc<SiteCopy>, Arc<Table>)>,
    /// By span and grain: the grain's buckets are those of the site's zone.
    pieces: HashMap<(i64, i64, Option<Grain>), Arc<Pieces>>,
}

impl Reading {
    /// A snapshot's reading of `copies`; `None` reads every visit from the rows.
    pub fn of(copies: Option<Arc<VisitCopies>>) -> Reading {
        Reading { copies, taken: Mutex::default() }
    }

    fn taken(&self) -> std::sync::MutexGuard<'_, Taken> {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner)
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
        let (copy, tail) = self.copy_and_tail(db, copies, site, now).await?;
        let pieces = self.pieces(db, site.id, (span, buckets), [&copy.table, &*tail]).await?;
        let lowering =
            if db.get_database_backend() == DbBackend::Postgres { Lowering::Unicode } else { Lowering::Ascii };
        let mut tallies = Tallies::default();
        for table in [&copy.table, &*tail] {
            if tallies.add(table, (span, buckets), (dimensions, filters), &pieces, lowering).is_none() {
                return Ok(None);
            }
        }
        Ok(Some(tallies))
    }

    async fn copy_and_tail(
        &self,
        db: &impl ConnectionTrait,
        copies: &VisitCopies,
        site: SiteKey,
        now: i64,
    ) -> Result<(Arc<SiteCopy>, Arc<Table>), DbErr> {
        if let Some(found) = self.taken().copy.clone() {
            return Ok(found);
        }
        let generation = cache::settled_generation(db, site.id).await?;
        let until = cache::closed_until(now) - SESSION_MAX_MS;
        let valid = |copy: &Arc<SiteCopy>| {
            copy.created_at == site.created_at && copy.generation == generation && copy.until == until
        };
        let copy = match copies.kept(site.id).filter(valid) {
            Some(copy) => copy,
            None => {
                let _turn = copies.loading.lock().await;
                match copies.kept(site.id).filter(valid) {
                    Some(copy) => copy,
                    None => {
                        let table = load(db, site.id, i64::MIN, until).await?;
                        let tail = Mutex::default();
                        let copy = Arc::new(SiteCopy { created_at: site.created_at, generation, until, table, tail });
                        copies.keep(site.id, copy.clone());
                        copy
                    }
                }
            }
        };
        let print = tail_print(db, site.id, until).await?;
        let kept = copy.tail.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let tail = match kept {
            Some((kept, tail)) if kept == print => tail,
            _ => {
                let tail = Arc::new(load(db, site.id, until, i64::MAX).await?);
                *copy.tail.lock().unwrap_or_else(PoisonError::into_inner) = Some((print, tail.clone()));
                tail
            }
        };
        self.taken().copy = Some((copy.clone(), tail.clone()));
        Ok((copy, tail))
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
        if let Some(found) = self.taken().pieces.get(&key) {
            return Ok(found.clone());
        }
        let ids = tables.iter().flat_map(|table| table.cut(span, buckets)).collect();
        let found = Arc::new(cut_pieces(db, site_id, (span, buckets), ids).await?);
        self.taken().pieces.insert(key, found.clone());
        Ok(found)
    }
}

async fn tail_print(db: &impl ConnectionTrait, site_id: i64, until: i64) -> Result<TailPrint, DbErr> {
    let mut print = [(0, 0); 2];
    for (at, (table, start)) in [("tracked_sessions", "started_at"), ("events", "timestamp")].into_iter().enumerate() {
        let mut sql = Sql::new(db.get_database_backend());
        sql.push(&format!(
            "SELECT CAST(COUNT(*) AS BIGINT) AS n, CAST(COALESCE(MAX(id), 0) AS BIGINT) AS last FROM {table} \
             WHERE site_id = "
        ))
        .bind(site_id)
        .push(&format!(" AND {start} >= "))
        .bind(until);
        if let Some(row) = db.query_one_raw(sql.statement()).await? {
            print[at] = (row.try_get("", "n")?, row.try_get("", "last")?);
        }
    }
    Ok(TailPrint { visits: print[0], events: print[1] })
}

/// The stored columns a visit is copied from, in `Column` order after the
/// eight counts and instants.
const COLUMNS: &str = "id, visitor_id, started_at, ended_at, human_event_count, human_pageview_count, \
     event_count, duration_seconds, entry_page, exit_page, source, referrer, channel, utm_source, utm_medium, \
     utm_campaign, utm_content, utm_term, device_type, browser, os, country, region, city";

fn visit_of(row: &QueryResult) -> Result<Visit, DbErr> {
    let mut values: [Option<String>; Column::COUNT] = Default::default();
    for (at, value) in values.iter_mut().enumerate() {
        *value = row.try_get_by_index::<Option<String>>(8 + at)?;
    }
    Ok(Visit {
        id: row.try_get_by_index(0)?,
        visitor: row.try_get_by_index(1)?,
        started: row.try_get_by_index(2)?,
        ended: row.try_get_by_index(3)?,
        human_events: row.try_get_by_index(4)?,
        human_pageviews: row.try_get_by_index(5)?,
        events: row.try_get_by_index(6)?,
        seconds: row.try_get_by_index(7)?,
        values,
    })
}

/// The site's visits begun in `[from, to)`, in order of start, read in
/// chunks on the site's start index.
async fn load(db: &impl ConnectionTrait, site_id: i64, from: i64, to: i64) -> Result<Table, DbErr> {
    let backend = db.get_database_backend();
    let mut table = Table::new();
    // Where the last chunk ended, in the start index's order: (start, end, id).
    let mut after: Option<(i64, i64, i64)> = None;
    loop {
        let mut sql = Sql::new(backend);
        sql.push(&format!("SELECT {COLUMNS} FROM tracked_sessions WHERE site_id = "))
            .bind(site_id)
            .push(" AND started_at < ")
            .bind(to);
        match after {
            None => sql.push(" AND started_at >= ").bind(from),
            // A row value: both databases search the index from it.
            Some((started, ended, id)) => sql
                .push(" AND (started_at, ended_at, id) > (")
                .bind(started)
                .push(", ")
                .bind(ended)
                .push(", ")
                .bind(id)
                .push(")"),
        };
        sql.push(&format!(" ORDER BY started_at, ended_at, id LIMIT {LOAD_CHUNK}"));
        let rows = db.query_all_raw(sql.statement()).await?;
        let read = rows.len() as u64;
        for row in &rows {
            let visit = visit_of(row)?;
            after = Some((visit.started, visit.ended, visit.id));
            table.push(visit);
        }
        if read < LOAD_CHUNK {
            break;
        }
    }
    table.seal();
    Ok(table)
}

/// The human events and pageviews in `span`, per bucket, of the visits
/// `ids` (those an edge cuts), looked up by visit: a month's edges and
/// midnights cut a few in a hundred.
async fn cut_pieces(
    db: &impl ConnectionTrait,
    site_id: i64,
    (span, buckets): (Span, Option<&Buckets>),
    ids: Vec<i64>,
) -> Result<Pieces, DbErr> {
    let mut pieces = Pieces::new();
    if ids.is_empty() {
        return Ok(pieces);
    }
    let bucket = match buckets {
        Some(buckets) => buckets.sql("e.timestamp"),
        None => "CAST(0 AS BIGINT)".to_owned(),
    };
    let mut sql = Sql::new(db.get_database_backend());
    sql.push(&format!(
        "SELECT e.session_id AS sid, {bucket} AS t, COUNT(*) AS n_events, \
         SUM(CASE WHEN e.event_type = 'pageview' THEN 1 ELSE 0 END) AS n_pageviews FROM events e WHERE e.session_id IN "
    ));
    // `+` keeps the site's time index out: SQLite would read the span's
    // every event through it (0.74 s at 1M events, not 7 ms by visit).
    sql.in_ids(ids)
        .push(" AND +e.site_id = ")
        .bind(site_id)
        .push(" AND e.is_bot = ")
        .bind(false)
        .push(" AND e.timestamp >= ")
        .bind(span.from)
        .push(" AND e.timestamp < ")
        .bind(span.to)
        .push(" GROUP BY 1, 2");
    for row in db.query_all_raw(sql.statement()).await? {
        let n_events: i64 = row.try_get("", "n_events")?;
        let n_pageviews: Option<i64> = row.try_get("", "n_pageviews")?;
        let piece = (row.try_get::<i64>("", "t")?, n_events, n_pageviews.unwrap_or(0));
        pieces.entry(row.try_get::<i64>("", "sid")?).or_default().push(piece);
    }
    Ok(pieces)
}
