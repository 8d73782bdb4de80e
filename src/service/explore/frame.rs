//! Where a query's counts come from: its frame (span, dimensions, time
//! buckets), its groups over one snapshot, and what the explorer page reads
//! ahead so that its counts run beside its reads.

use chrono_tz::Tz;
use sea_orm::ConnectionTrait;

use entity::site;

use super::{
    conversion,
    figures::{self, Ask, Groups, Scope},
    query::{DateRange, Dimension, Grain, Query},
    range::{self, Buckets, Span},
    taken::Taken,
    visit_copy::SiteKey,
};
use crate::error::{AppError, AppResult};

/// The most buckets a time dimension may split a range into (a year of
/// hours fits; a century of them does not).
pub const MAX_BUCKETS: i64 = 10_000;

/// The span a query's range covers (`all` begins at the site's first event).
pub async fn span_of(db: &impl ConnectionTrait, site_id: i64, zone: Tz, query: &Query, now: i64) -> AppResult<Span> {
    let first_event = if query.date_range == DateRange::All { figures::first_event(db, site_id).await? } else { None };
    Ok(range::resolve(&query.date_range, zone, now, first_event))
}

/// The dimensions with a bare `time` given its grain.
fn resolved_dimensions(query: &Query, grain: Grain) -> Vec<Dimension> {
    query
        .dimensions
        .iter()
        .map(
            |dimension| {
                if *dimension == Dimension::Time(None) { Dimension::Time(Some(grain)) } else { dimension.clone() }
            },
        )
        .collect()
}

/// A query's span, its dimensions with a bare `time` given the span's
/// grain, and the buckets of its time dimension.
pub struct Frame {
    pub span: Span,
    pub dimensions: Vec<Dimension>,
    pub time_grain: Option<Grain>,
    pub buckets: Option<Buckets>,
}

impl Frame {
    pub async fn of(db: &impl ConnectionTrait, site_id: i64, zone: Tz, query: &Query, now: i64) -> AppResult<Frame> {
        let span = span_of(db, site_id, zone, query, now).await?;
        let dimensions = resolved_dimensions(query, range::auto_grain(span));
        let time_grain = dimensions.iter().find_map(|dimension| match dimension {
            Dimension::Time(Some(grain)) => Some(*grain),
            _ => None,
        });
        let buckets = time_grain.map(|grain| Buckets::new(grain, span, zone));
        if let Some(buckets) = &buckets
            && buckets.count(span) > MAX_BUCKETS
        {
            return Err(AppError::validation(
                "dimensions",
                format!(
                    "a time dimension may hold at most {MAX_BUCKETS} buckets: choose a coarser one or a shorter range"
                ),
            ));
        }
        Ok(Frame { span, dimensions, time_grain, buckets })
    }
}

/// The groups of a query's own range, as `build` reads them when `known`
/// holds none: the explorer page reads its event panels' groups this way
/// beside its visit panels, and hands them to `build`.
pub async fn groups(
    db: &impl ConnectionTrait,
    site: &site::Model,
    zone: Tz,
    query: &Query,
    now: i64,
    taken: &Taken,
) -> AppResult<Groups> {
    let Frame { span, dimensions, buckets, .. } = Frame::of(db, site.id, zone, query, now).await?;
    let goals = taken.goals(db, site.id).await?;
    conversion::check_goals_exist(&query.filters, goals)?;
    let scope = Scope::of(site, now, goals, taken);
    let ask = Ask { dimensions: &dimensions, filters: &query.filters, metrics: &query.metrics };
    conversion::groups(db, &scope, ask, span, buckets.as_ref()).await
}

/// Reads ahead what counting `query` over the visit copy reads from the
/// database (the pieces of the visits the edges of its span, its buckets
/// and its earlier period cut), so the explorer page has it read while it
/// counts its panels.
pub async fn warm(
    db: &impl ConnectionTrait,
    site: &site::Model,
    zone: Tz,
    query: &Query,
    now: i64,
    taken: &Taken,
) -> AppResult<()> {
    let Frame { span, time_grain, buckets, .. } = Frame::of(db, site.id, zone, query, now).await?;
    let key = SiteKey { id: site.id, created_at: site.created_at };
    taken.visits.warm_pieces(db, key, (span, buckets.as_ref()), now).await?;
    if let Some(mode) = &query.include.comparisons {
        let earlier = range::comparison(span, mode, zone);
        let earlier_buckets = time_grain.map(|grain| Buckets::new(grain, earlier, zone));
        taken.visits.warm_pieces(db, key, (earlier, earlier_buckets.as_ref()), now).await?;
    }
    Ok(())
}

/// Finds ahead the events of `query`'s span its filters keep (`warm`'s
/// kin): the explorer page then groups them for its event panels at once.
pub async fn warm_events(
    db: &impl ConnectionTrait,
    site: &site::Model,
    zone: Tz,
    query: &Query,
    now: i64,
    taken: &Taken,
) -> AppResult<()> {
    let span = span_of(db, site.id, zone, query, now).await?;
    let goals = taken.goals(db, site.id).await?;
    let key = SiteKey { id: site.id, created_at: site.created_at };
    Ok(taken.visits.warm_events(db, key, (span, &query.filters), (goals, now)).await?)
}
