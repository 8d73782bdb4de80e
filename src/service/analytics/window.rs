//! Visitors and sessions of a window, read from the hourly rollups for its
//! whole hours and from the rows themselves for its first, partial hour, so a
//! read costs the window's hours, not the rows behind them. The counting rules
//! stay those of the rows: a visitor counts where it was last seen, a session
//! where it ended.

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QuerySelect, Select, sea_query::Expr,
};

use entity::{session_hour, site, tracked_session, visitor, visitor_hour};

use super::{score_sql_text, sum_of};
use crate::{error::AppResult, service::scoring, time::HOUR_MS};

/// A window from `start` (all time when `None`), split where the rollups can
/// take over: rows before `first_whole_hour` are read raw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    pub start: Option<i64>,
    pub first_whole_hour: Option<i64>,
}

impl Window {
    pub fn new(start: Option<i64>) -> Self {
        let first_whole_hour =
            start.map(|start| start.div_euclid(HOUR_MS) * HOUR_MS + if start % HOUR_MS == 0 { 0 } else { HOUR_MS });
        Window { start, first_whole_hour }
    }

    /// The raw part: `[start, first_whole_hour)`, when it is not empty.
    fn partial_hour(self) -> Option<(i64, i64)> {
        match (self.start, self.first_whole_hour) {
            (Some(start), Some(hour)) if start < hour => Some((start, hour)),
            _ => None,
        }
    }
}

/// Buckets a count falls in: one for the whole window, or UTC-aligned buckets
/// of whole hours (the partial first hour lies in the first bucket).
#[derive(Debug, Clone, Copy)]
pub(super) enum Buckets {
    One,
    Of(i64),
}

impl Buckets {
    pub fn sql(self, column: &str) -> Expr {
        match self {
            Buckets::One => Expr::val(0i64),
            // Integer division truncates toward zero in both backends; timestamps are positive.
            Buckets::Of(size) => Expr::cust(format!("({column} / {size}) * {size}")),
        }
    }

    /// Groups by bucket; a single bucket needs no grouping.
    fn group<E: EntityTrait>(self, select: Select<E>, column: &str) -> Select<E> {
        match self {
            Buckets::One => select,
            Buckets::Of(_) => select.group_by(self.sql(column)),
        }
    }

    fn of(self, instant: i64) -> i64 {
        match self {
            Buckets::One => 0,
            Buckets::Of(size) => instant.div_euclid(size) * size,
        }
    }
}

#[derive(Debug, FromQueryResult)]
pub(super) struct VisitorCount {
    pub bucket: i64,
    /// `None` when unknown.
    pub country: Option<String>,
    pub visitors: i64,
    pub identified: i64,
}

#[derive(Debug, FromQueryResult)]
pub(super) struct SessionCount {
    pub bucket: i64,
    pub channel: String,
    pub sessions: i64,
    pub seconds: i64,
}

/// Visitors last seen in the window, per bucket and country.
pub(super) async fn visitors(
    db: &impl ConnectionTrait,
    site_id: i64,
    is_bot: bool,
    window: Window,
    buckets: Buckets,
) -> AppResult<Vec<VisitorCount>> {
    let mut rollups = visitor_hour::Entity::find()
        .filter(visitor_hour::Column::SiteId.eq(site_id))
        .filter(visitor_hour::Column::IsBot.eq(is_bot));
    if let Some(hour) = window.first_whole_hour {
        rollups = rollups.filter(visitor_hour::Column::Hour.gte(hour));
    }
    let rows = rollups
        .select_only()
        .column_as(buckets.sql("visitor_hours.hour"), "bucket")
        .column(visitor_hour::Column::Country)
        .column_as(sum_of(Expr::col(visitor_hour::Column::Visitors)), "visitors")
        .column_as(sum_of(Expr::col(visitor_hour::Column::Identified)), "identified");
    let mut rows: Vec<VisitorCount> =
        buckets.group(rows, "visitor_hours.hour").group_by(visitor_hour::Column::Country).into_model().all(db).await?;
    for row in &mut rows {
        if row.country.as_deref() == Some("") {
            row.country = None;
        }
    }
    if let Some((start, end)) = window.partial_hour() {
        let identified = Expr::cust("CASE WHEN visitors.status = 'identified' THEN 1 ELSE 0 END");
        rows.extend(
            visitor::Entity::find()
                .filter(visitor::Column::SiteId.eq(site_id))
                .filter(visitor::Column::IsBot.eq(is_bot))
                .filter(visitor::Column::LastSeen.gte(start))
                .filter(visitor::Column::LastSeen.lt(end))
                .select_only()
                .column_as(Expr::val(buckets.of(start)), "bucket")
                .column(visitor::Column::Country)
                .column_as(visitor::Column::Id.count(), "visitors")
                .column_as(sum_of(identified), "identified")
                .group_by(visitor::Column::Country)
                .into_model::<VisitorCount>()
                .all(db)
                .await?,
        );
    }
    rows.retain(|row| row.visitors != 0);
    Ok(rows)
}

/// Human sessions that ended in the window, per bucket and channel.
pub(super) async fn sessions(
    db: &impl ConnectionTrait,
    site_id: i64,
    window: Window,
    buckets: Buckets,
) -> AppResult<Vec<SessionCount>> {
    let mut rollups = session_hour::Entity::find()
        .filter(session_hour::Column::SiteId.eq(site_id))
        .filter(session_hour::Column::IsBot.eq(false));
    if let Some(hour) = window.first_whole_hour {
        rollups = rollups.filter(session_hour::Column::Hour.gte(hour));
    }
    let rows = rollups
        .select_only()
        .column_as(buckets.sql("session_hours.hour"), "bucket")
        .column(session_hour::Column::Channel)
        .column_as(sum_of(Expr::col(session_hour::Column::Sessions)), "sessions")
        .column_as(sum_of(Expr::col(session_hour::Column::Seconds)), "seconds");
    let mut rows: Vec<SessionCount> =
        buckets.group(rows, "session_hours.hour").group_by(session_hour::Column::Channel).into_model().all(db).await?;
    if let Some((start, end)) = window.partial_hour() {
        rows.extend(
            tracked_session::Entity::find()
                .filter(tracked_session::Column::SiteId.eq(site_id))
                .filter(tracked_session::Column::IsBot.eq(false))
                .filter(tracked_session::Column::EndedAt.gte(start))
                .filter(tracked_session::Column::EndedAt.lt(end))
                .select_only()
                .column_as(Expr::val(buckets.of(start)), "bucket")
                .column(tracked_session::Column::Channel)
                .column_as(tracked_session::Column::Id.count(), "sessions")
                .column_as(sum_of(Expr::col(tracked_session::Column::DurationSeconds)), "seconds")
                .group_by(tracked_session::Column::Channel)
                .into_model::<SessionCount>()
                .all(db)
                .await?,
        );
    }
    rows.retain(|row| row.sessions != 0);
    Ok(rows)
}

/// Visitors last seen in the window whose score, recency included, reaches
/// the site's hot threshold. Recency adds at most `RECENCY_MAX`, so only
/// visitors whose stored points come within that of the threshold are read,
/// on the index in stored-score order.
pub(super) async fn hot_leads(
    db: &impl ConnectionTrait,
    site: &site::Model,
    is_bot: bool,
    start: Option<i64>,
    now: i64,
) -> AppResult<i64> {
    let mut candidates = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::IsBot.eq(is_bot))
        .filter(visitor::Column::Score.gte(site.hot_threshold - scoring::RECENCY_MAX));
    if let Some(start) = start {
        candidates = candidates.filter(visitor::Column::LastSeen.gte(start));
    }
    let hot = Expr::cust(format!(
        "CASE WHEN {} >= {} THEN 1 ELSE 0 END",
        score_sql_text("visitors", now),
        site.hot_threshold
    ));
    let count: Option<Option<i64>> =
        candidates.select_only().column_as(sum_of(hot), "hot").into_tuple().one(db).await?;
    Ok(count.flatten().unwrap_or(0))
}
