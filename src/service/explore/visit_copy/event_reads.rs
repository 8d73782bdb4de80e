//! What the explorer reads from the event copy: per-event groups, every
//! goal's counts at once, the events a page's filters keep (once per
//! snapshot) and a funnel's step events.

use std::sync::{Arc, PoisonError};

use sea_orm::{ConnectionTrait, DbErr};

use super::{Reading, SiteKey, counting::counted, event_tallies, events, lowering};
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
        let distinct = event_tallies::Distinct::of(metrics);
        let (buckets, dimensions) = (buckets.cloned(), dimensions.to_vec());
        self.read_events(db, site, (span, filters), (goals, now), move |tables, events| {
            event_tallies::groups(tables, (span, buckets.as_ref()), (&dimensions, events, distinct), lowering)
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
        self.read_events(db, site, (span, filters), (goals, now), move |tables, events| {
            event_tallies::goal_groups(tables, span, events, lowering)
        })
        .await
    }

    /// Finds the events of `span` that `filters` keep, if the copies are
    /// there to be read, so that the snapshot's queries grouping them at
    /// once (the explorer's event panels) find them taken.
    pub async fn warm_events(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, filters): (Span, &[Filter]),
        (goals, now): (&[Goal], i64),
    ) -> Result<(), DbErr> {
        if !event_tallies::answers(&[], filters, &[]) || filters.is_empty() {
            return Ok(());
        }
        self.read_events(db, site, (span, filters), (goals, now), |_, _| Some(())).await.map(|_| ())
    }

    /// Hands `read` the event and visit copies and their tails, and the
    /// events of `span` that `filters` keep, on a thread of the blocking
    /// pool (`counted`); `None` when there is no copy to read yet.
    async fn read_events<R: Send + 'static>(
        &self,
        db: &impl ConnectionTrait,
        site: SiteKey,
        (span, filters): (Span, &[Filter]),
        (goals, now): (&[Goal], i64),
        read: impl FnOnce(event_tallies::Tables<'_>, event_tallies::Events<'_>) -> Option<R> + Send + 'static,
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
        let by_visit = copy.held_visit_events(&events).await?;
        let tail_visitors = copy.tail_visitors(&events, &event_tail);
        let (goals, filters, lowering) = (goals.to_vec(), filters.to_vec(), lowering(db));
        // The longest list of filters found before that begins this one:
        // a goal's panel adds its goal to the page's filters.
        let key = (span.from, span.to);
        let taken = self.taken(site.id);
        let found = {
            let kept_events = taken.kept_events.lock().unwrap_or_else(PoisonError::into_inner);
            let found = kept_events.iter().filter(|(at, kept, _)| *at == key && filters.starts_with(kept));
            found.max_by_key(|(_, kept, _)| kept.len()).map(|(_, kept, events)| (kept.len(), events.clone()))
        };
        let (answer, kept) = counted(move || {
            let tables = event_tallies::Tables {
                events: [&events, &event_tail],
                visits: [&visits, &visit_tail],
                held_rows: &held_rows,
                visit_events: &by_visit,
                tail_visitors: &tail_visitors,
                goals: &goals,
            };
            // Without filters every event is kept: counted as read, not copied.
            if filters.is_empty() {
                return (read(tables, event_tallies::Events::Filtered(&filters)), None);
            }
            let kept = match found {
                Some((length, found)) if length == filters.len() => Some(found),
                Some((length, found)) => {
                    event_tallies::refined(tables, &found, &filters[length..], lowering).map(Arc::new)
                }
                None => event_tallies::kept(tables, span, &filters, lowering).map(Arc::new),
            };
            let Some(kept) = kept else { return (None, None) };
            (read(tables, event_tallies::Events::Kept(&kept)), Some((filters, kept)))
        })
        .await?;
        // The events found are kept for the snapshot's next query of them.
        if let Some((filters, kept)) = kept {
            let mut kept_events = taken.kept_events.lock().unwrap_or_else(PoisonError::into_inner);
            if !kept_events.iter().any(|(at, found, _)| *at == key && *found == filters) {
                kept_events.push((key, filters, kept));
            }
        }
        Ok(answer)
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
        let steps = steps.to_vec();
        counted(move || events::step_events([&held, &tail], (span.from, span.to), &steps)).await
    }
}
