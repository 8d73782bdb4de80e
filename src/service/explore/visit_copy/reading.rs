//! What one snapshot takes from the copies and the rows for its queries:
//! the copies valid on it, their tails, each span's cut visits, the events
//! its filters keep and the wholes the explorer's pass counted.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

use sea_orm::{ConnectionTrait, DbErr};
use tokio::sync::OnceCell;

use super::{
    SiteCopy, SiteKey, VisitCopies,
    counting::counted,
    event_tallies::KeptEvents,
    events::{self, EventTable, VisitEvents},
    flagged::{Flagged, SiteFlagged},
    held_and_tail, load,
    load::TailPrint,
    table::{Pieces, Table},
};
use crate::service::{
    credit::cache,
    explore::{
        counts::Counts,
        query::{Filter, Grain},
        range::{Buckets, Span},
    },
    tracking::sessionize::SESSION_MAX_MS,
};

/// What one snapshot took for the copy: the copy it may read, the tail
/// and each span's cut visits, so the queries of one page take them once.
/// Queries of one snapshot may run at once (the explorer page counts its
/// event panels beside its visit panels): each part is read by the first
/// to ask, and the others wait for it.
#[derive(Default)]
pub struct Reading {
    pub(super) copies: Option<Arc<VisitCopies>>,
    sites: Mutex<HashMap<i64, Arc<SiteTaken>>>,
}

#[derive(Default)]
pub(super) struct SiteTaken {
    /// The copies valid on the snapshot, and its tail's print.
    pub(super) copy: OnceCell<(Arc<SiteCopy>, TailPrint)>,
    /// The visit copy and tail: `None` within when the copy was still
    /// loading, so every query of the snapshot reads the rows.
    pub(super) visits: OnceCell<Option<(Arc<Table>, Arc<Table>)>>,
    /// The event copy and tail, the same way.
    pub(super) events: OnceCell<Option<(Arc<EventTable>, Arc<EventTable>)>>,
    /// By span and grain: the grain's buckets are those of the site's zone.
    pub(super) pieces: Mutex<HashMap<PiecesKey, Arc<OnceCell<Arc<Pieces>>>>>,
    /// The events a span's filters keep, by span and filters: the
    /// explorer's event panels share the page's filters.
    pub(super) kept_events: Mutex<Vec<KeptOfSpan>>,
    /// The whole of a span under filters as the panels' pass counted it
    /// (without its identified and hot visitors).
    pub(super) wholes: Mutex<Vec<WholeOfSpan>>,
    /// The site's identified and hot visitors, whoever they are: the tiles
    /// and their previous period flag theirs from the same lists.
    pub(super) site_flagged: OnceCell<Arc<SiteFlagged>>,
}

/// A span's bounds, the filters, and the whole the panels' pass counted.
pub(super) type WholeOfSpan = ((i64, i64), Vec<Filter>, Counts);

/// A span's bounds and its buckets' grain.
type PiecesKey = (i64, i64, Option<Grain>);

/// The events a span's filters keep: the span's bounds, the filters, the events.
pub(super) type KeptOfSpan = ((i64, i64), Vec<Filter>, Arc<KeptEvents>);

impl Reading {
    /// A snapshot's reading of `copies`; `None` reads every visit from the rows.
    pub fn of(copies: Option<Arc<VisitCopies>>) -> Reading {
        Reading { copies, sites: Mutex::default() }
    }

    /// What the snapshot took for `site_id`.
    pub(super) fn taken(&self, site_id: i64) -> Arc<SiteTaken> {
        let mut sites = self.sites.lock().unwrap_or_else(PoisonError::into_inner);
        sites.entry(site_id).or_default().clone()
    }

    /// The site's identified and hot visitors as `flagged` finds them,
    /// read once per snapshot.
    pub(super) async fn site_flagged(
        &self,
        db: &impl ConnectionTrait,
        flagged: &Flagged,
    ) -> Result<Arc<SiteFlagged>, DbErr> {
        let taken = self.taken(flagged.site_id);
        let found =
            taken.site_flagged.get_or_try_init(|| async { Ok::<_, DbErr>(Arc::new(flagged.site_wide(db).await?)) });
        Ok(found.await?.clone())
    }

    /// The site's copies valid on this snapshot, and its tail's print.
    pub(super) async fn site_copy(
        &self,
        db: &impl ConnectionTrait,
        copies: &VisitCopies,
        site: SiteKey,
        now: i64,
    ) -> Result<(Arc<SiteCopy>, TailPrint), DbErr> {
        let taken = self.taken(site.id);
        let found = taken
            .copy
            .get_or_try_init(|| async {
                let generation = cache::settled_generation(db, site.id).await?;
                let until = cache::closed_until(now) - SESSION_MAX_MS;
                let copy = copies.valid(site, generation, until);
                let print = load::tail_print(db, site.id, until, copy.last_print()).await?;
                copy.remember_print(print);
                Ok::<_, DbErr>((copy, print))
            })
            .await?;
        Ok(found.clone())
    }

    /// The visit copy and tail, or `None` while the copy loads.
    pub(super) async fn copy_and_tail(
        &self,
        db: &impl ConnectionTrait,
        copies: &VisitCopies,
        site: SiteKey,
        now: i64,
    ) -> Result<Option<(Arc<Table>, Arc<Table>)>, DbErr> {
        let taken = self.taken(site.id);
        let found = taken
            .visits
            .get_or_try_init(|| async {
                let (copy, print) = self.site_copy(db, copies, site, now).await?;
                held_and_tail(db, copies, (&copy, site.id), (&copy.visits, &copy.tail), print).await
            })
            .await?;
        Ok(found.clone())
    }

    /// The event copy and tail, or `None` while the copy loads.
    pub(super) async fn events_and_tail(
        &self,
        db: &impl ConnectionTrait,
        copies: &VisitCopies,
        site: SiteKey,
        now: i64,
    ) -> Result<Option<(Arc<EventTable>, Arc<EventTable>)>, DbErr> {
        let taken = self.taken(site.id);
        let found = taken
            .events
            .get_or_try_init(|| async {
                let (copy, print) = self.site_copy(db, copies, site, now).await?;
                held_and_tail(db, copies, (&copy, site.id), (&copy.events, &copy.event_tail), print).await
            })
            .await?;
        Ok(found.clone())
    }

    /// Reads the pieces of the visits the edges of `span` and of its
    /// buckets cut, if the copy is there to be read, so that a query
    /// counting them later finds them taken.
    pub async fn warm_pieces(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, buckets): (Span, Option<&Buckets>),
        now: i64,
    ) -> Result<(), DbErr> {
        let Some(copies) = &self.copies else { return Ok(()) };
        if let Some((held, tail)) = self.copy_and_tail(db, copies, site, now).await? {
            self.pieces(db, site, (span, buckets), [&*held, &*tail], now).await?;
        }
        Ok(())
    }

    /// The events and pageviews in `span`, per bucket, of each visit its
    /// edges or a bucket's cut: counted over the event copy and its tail
    /// when the copy is loaded (a day of hours cuts thousands of visits,
    /// whose events took 31 ms to read at 1M events), else read by visit.
    pub(super) async fn pieces(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, buckets): (Span, Option<&Buckets>),
        tables: [&Table; 2],
        now: i64,
    ) -> Result<Arc<Pieces>, DbErr> {
        let key = (span.from, span.to, buckets.map(|buckets| buckets.grain));
        let cell = {
            let taken = self.taken(site.id);
            let mut pieces = taken.pieces.lock().unwrap_or_else(PoisonError::into_inner);
            pieces.entry(key).or_default().clone()
        };
        let found = cell
            .get_or_try_init(|| async {
                let ids: Vec<i64> = tables.iter().flat_map(|table| table.cut(span, buckets)).collect();
                if ids.is_empty() {
                    return Ok(Arc::new(Pieces::new()));
                }
                if let Some([held, tail]) = self.loaded_events(db, site, now).await? {
                    let buckets = buckets.cloned();
                    let count = move || events::cut_pieces([held.pair(), tail.pair()], (span, buckets.as_ref()), &ids);
                    return Ok(Arc::new(counted(count).await?));
                }
                Ok::<_, DbErr>(Arc::new(load::cut_pieces(db, site.id, (span, buckets), ids).await?))
            })
            .await?;
        Ok(found.clone())
    }

    /// The event copy and its tail, each with its rows by visit, if the
    /// copy is loaded and a tail of it kept already: neither is read whole
    /// for this (at 1M events the tail takes 0.3 s, the cut visits' events
    /// by id at most 31 ms).
    async fn loaded_events(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        now: i64,
    ) -> Result<Option<[ByVisit; 2]>, DbErr> {
        let Some(copies) = &self.copies else { return Ok(None) };
        let (copy, _) = self.site_copy(db, copies, site, now).await?;
        let tail_kept = copy.event_tail.lock().unwrap_or_else(PoisonError::into_inner).is_some();
        if copy.events.ready().is_none() || !tail_kept {
            return Ok(None);
        }
        let Some((held, tail)) = self.events_and_tail(db, copies, site, now).await? else { return Ok(None) };
        let held_rows = copy.held_visit_events(&held).await?;
        let tail_rows = copy.tail_visit_events(&tail).await?;
        Ok(Some([ByVisit(held, held_rows), ByVisit(tail, tail_rows)]))
    }
}

/// An event table and the rows of each visit's events in it.
struct ByVisit(Arc<EventTable>, Arc<VisitEvents>);

impl ByVisit {
    fn pair(&self) -> (&EventTable, &VisitEvents) {
        (&self.0, &self.1)
    }
}
