//! What the explorer reads from the event copy: per-event groups, every
//! goal's counts at once, the events a page's filters keep (once per
//! snapshot) and a funnel's step events.

use std::sync::Arc;

use sea_orm::{ConnectionTrait, DbErr};

use super::{Reading, SiteKey, event_tallies, event_tallies::KeptEvents, events, lowering, table::Lowering};
use crate::service::{
    explore::{
        counts::{Counts, Groups},
        query::{Dimension, Filter, Metric},
        range::{Buckets, Span},
    },
    funnels::compute::StepEvent,
    goals::{Goal, Target},
};

impl Reading {
    /// The per-event groups of a span from the event and visit copies and
    /// their tails, as the flat events statement counts them, or `None`
    /// when there is no copy to read or the query asks for what they do
    /// not hold (`event_tallies::answers`).
    pub async fn event_groups(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, buckets): (Span, Option<&Buckets>),
        (dimensions, filters, metrics): (&[Dimension], &[Filter], &[Metric]),
        (goals, now): (&[Goal], i64),
    ) -> Result<Option<Groups>, DbErr> {
        if !event_tallies::answers(dimensions, filters, metrics) {
            return Ok(None);
        }
        let lowering = lowering(db);
        self.read_events(db, site, (span, filters), (goals, now), |tables, events| {
            let distinct = event_tallies::Distinct::of(metrics);
            event_tallies::groups(tables, (span, buckets), (dimensions, events, distinct), lowering)
        })
        .await
    }

    /// Each of `goals`' counts over the events of `span` that `filters`
    /// keep, in their order, as `event_groups` counts a query on that goal
    /// alone, read at once; `None` as `event_groups`, or when a goal reads
    /// a property.
    pub async fn goal_groups(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, filters, metrics): (Span, &[Filter], &[Metric]),
        (goals, now): (&[Goal], i64),
    ) -> Result<Option<Vec<Counts>>, DbErr> {
        if !event_tallies::answers(&[], filters, metrics) {
            return Ok(None);
        }
        let lowering = lowering(db);
        self.read_events(db, site, (span, filters), (goals, now), |tables, events| {
            event_tallies::goal_groups(tables, span, events, lowering)
        })
        .await
    }

    /// Hands `read` the event and visit copies and their tails, and the
    /// events of `span` that `filters` keep; `None` when there is no copy
    /// to read yet.
    async fn read_events<R>(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, filters): (Span, &[Filter]),
        (goals, now): (&[Goal], i64),
        read: impl FnOnce(event_tallies::Tables<'_>, event_tallies::Events<'_>) -> Option<R>,
    ) -> Result<Option<R>, DbErr> {
        let Some(copies) = &self.copies else { return Ok(None) };
        // Both are asked for, so both loads begin on the first such query.
        let visits = self.copy_and_tail(db, copies, site, now).await?;
        let events = self.events_and_tail(db, copies, site, now).await?;
        let (Some((visits, visit_tail)), Some((events, event_tail))) = (visits, events) else { return Ok(None) };
        let (copy, _) = self.site_copy(db, copies, site, now).await?;
        let held_rows = copy
            .visit_rows
            .get_or_init(|| async { Arc::new(event_tallies::visit_rows(&events, &visits)) })
            .await
            .clone();
        let tables = event_tallies::Tables {
            events: [&events, &event_tail],
            visits: [&visits, &visit_tail],
            held_rows: &held_rows,
            goals,
        };
        // Without filters every event is kept: counted as read, not copied.
        let kept = if filters.is_empty() {
            None
        } else {
            let Some(kept) = self.kept_events(site.id, tables, span, filters, lowering(db)) else { return Ok(None) };
            Some(kept)
        };
        let events = match &kept {
            Some(kept) => event_tallies::Events::Kept(kept),
            None => event_tallies::Events::Filtered(filters),
        };
        Ok(read(tables, events))
    }

    /// The events of `span` that `filters` keep, found on the snapshot's
    /// first query of them.
    fn kept_events(
        &self,
        site_id: i64,
        tables: event_tallies::Tables<'_>,
        span: Span,
        filters: &[Filter],
        lowering: Lowering,
    ) -> Option<Arc<KeptEvents>> {
        let key = (span.from, span.to);
        // The longest list of filters found before that begins this one:
        // a goal's panel adds its goal to the page's filters.
        let found = self.taken(site_id, |taken| {
            let found = taken.kept_events.iter().filter(|(at, kept, _)| *at == key && filters.starts_with(kept));
            found.max_by_key(|(_, kept, _)| kept.len()).map(|(_, kept, events)| (kept.len(), events.clone()))
        });
        let kept = match found {
            Some((length, found)) if length == filters.len() => return Some(found),
            Some((length, found)) => event_tallies::refined(tables, &found, &filters[length..], lowering)?,
            None => event_tallies::kept(tables, span, filters, lowering)?,
        };
        let kept = Arc::new(kept);
        self.taken(site_id, |taken| taken.kept_events.push((key, filters.to_vec(), kept.clone())));
        Some(kept)
    }

    /// The step events of a funnel over `span`, by visitor and then in the
    /// order they happened, from the event copy and tail; `None` when
    /// there is no copy to read or a step reads a property.
    pub async fn step_events(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        span: Span,
        steps: &[Goal],
        now: i64,
    ) -> Result<Option<Vec<(i64, StepEvent)>>, DbErr> {
        let Some(copies) = &self.copies else { return Ok(None) };
        if steps.iter().any(|goal| matches!(goal.target, Target::Event { prop: Some(_), .. })) {
            return Ok(None);
        }
        let Some((held, tail)) = self.events_and_tail(db, copies, site, now).await? else { return Ok(None) };
        Ok(events::step_events([&held, &tail], (span.from, span.to), steps))
    }
}
