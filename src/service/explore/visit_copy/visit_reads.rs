//! What the explorer reads from the visit copy: whole-visit groups, and
//! the explorer page's visit panels in one pass.

use std::sync::PoisonError;

use sea_orm::{ConnectionTrait, DbErr};

use super::{
    Reading, SiteKey, answers,
    counting::counted,
    flagged::{FLAGGED_BY_ID, Flagged},
    lowering, panels,
    panels::Panels,
    table::{Column, Tallies},
};
use crate::service::explore::{
    counts::{Counts, Groups},
    query::{Dimension, Filter},
    range::{Buckets, Span},
};

impl Reading {
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
        if dimensions.is_empty()
            && buckets.is_none()
            && flagged.is_none()
            && let Some(whole) = self.counted_whole(site.id, span, filters)
        {
            // As `Tallies` answers: no group when no visit is counted.
            return Ok(Some(if whole.visits > 0 { Groups::from([(Vec::new(), whole)]) } else { Groups::new() }));
        }
        if !answers(dimensions, filters) {
            return Ok(None);
        }
        let tallies = self.tallies(db, site, (span, buckets), (dimensions, filters), now);
        let Some(flagged) = flagged else {
            let Some(tallies) = tallies.await? else { return Ok(None) };
            return Ok(Some(tallies.groups((&[], &[]))));
        };
        // Likely too many visitors to look up by id: the site's flagged ones
        // are read while the copy counts (as `panels` does).
        if self.copy_rows(db, site, now).await? > FLAGGED_BY_ID {
            let (tallies, site_wide) = tokio::join!(tallies, self.site_flagged(db, flagged));
            let Some(mut tallies) = tallies? else { return Ok(None) };
            let (identified, hot) = site_wide?.among(&tallies.visitors());
            return Ok(Some(tallies.groups((&identified, &hot))));
        }
        let Some(mut tallies) = tallies.await? else { return Ok(None) };
        let (identified, hot) = flagged.of(db, tallies.visitors()).await?;
        Ok(Some(tallies.groups((&identified, &hot))))
    }

    /// The visits the site's copy and tail hold (none without a copy).
    async fn copy_rows(&self, db: &impl ConnectionTrait, site: SiteKey, now: i64) -> Result<usize, DbErr> {
        let Some(copies) = &self.copies else { return Ok(0) };
        let found = self.copy_and_tail(db, copies, site, now).await?;
        Ok(found.map_or(0, |(held, tail)| held.len() + tail.len()))
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
        let pieces = self.pieces(db, site, (span, None), [&*held, &*tail], now).await?;
        let many = held.len() + tail.len() > FLAGGED_BY_ID;
        let lowering = lowering(db);
        let counted_filters = filters.to_vec();
        let count =
            counted(move || panels::panels([&*held, &*tail], span, (&columns, &counted_filters), &pieces, lowering));
        let filters = filters.to_vec();
        let (mut found, (identified, hot)) = if many {
            // Likely too many visitors to look up by id: the site's flagged
            // ones are read while the pass counts.
            let (site_wide, found) = tokio::join!(self.site_flagged(db, flagged), count);
            let Some(mut found) = found? else { return Ok(None) };
            let flags = site_wide?.among(&std::mem::take(&mut found.visitors));
            (found, flags)
        } else {
            let Some(mut found) = count.await? else { return Ok(None) };
            let flags = flagged.of(db, std::mem::take(&mut found.visitors)).await?;
            (found, flags)
        };
        // The whole is what `groups` counts for the span and filters without
        // dimensions (the panels' tests hold them equal): a goal panel's
        // conversion base on the same page takes it from here.
        let taken = self.taken(site.id);
        let mut wholes = taken.wholes.lock().unwrap_or_else(PoisonError::into_inner);
        wholes.push(((span.from, span.to), filters, found.whole.clone()));
        drop(wholes);
        found.whole.identified = identified.len() as i64;
        found.whole.hot = hot.len() as i64;
        Ok(Some(found))
    }

    /// The whole of `span` under `filters` as the panels' pass counted it
    /// on this snapshot, if it has.
    fn counted_whole(&self, site_id: i64, span: Span, filters: &[Filter]) -> Option<Counts> {
        let taken = self.taken(site_id);
        let wholes = taken.wholes.lock().unwrap_or_else(PoisonError::into_inner);
        let found = wholes.iter().find(|(at, counted, _)| *at == (span.from, span.to) && counted == filters);
        found.map(|(_, _, whole)| whole.clone())
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
        let pieces = self.pieces(db, site, (span, buckets), [&*held, &*tail], now).await?;
        let lowering = lowering(db);
        let (buckets, dimensions, filters) = (buckets.cloned(), dimensions.to_vec(), filters.to_vec());
        counted(move || {
            let mut tallies = Tallies::default();
            for table in [&*held, &*tail] {
                tallies.add(table, (span, buckets.as_ref()), (&dimensions, &filters), &pieces, lowering)?;
            }
            Some(tallies)
        })
        .await
    }
}
