//! Visitors and sessions of a window, read from the hourly rollups for its
//! whole hours and from the rows themselves for its first, partial hour, so a
//! read costs the window's hours, not the rows behind them. The counting rules
//! stay those of the rows: a visitor counts where it was last seen, a session
//! where it ended.

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QuerySelect, Select, sea_query::Expr,
};

use entity::{session_hour, site, tracked_session, visitor, visitor_hour, visitor_touch_hour};

use super::{score_sql_text, sum_of};
use crate::{
    error::AppResult,
    service::scoring,
    time::{DAY_MS, HOUR_MS},
};

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
                .column_as(Expr::cust("COUNT(*)"), "visitors")
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

/// Visitors by their last touch: the latest visit's channel and campaign,
/// and whether they submitted a form, each only when given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Touch<'a> {
    pub channel: Option<&'a str>,
    pub campaign: Option<&'a str>,
    pub submitted_form: bool,
}

#[derive(Debug, Default, FromQueryResult)]
pub(super) struct Tally {
    pub visitors: Option<i64>,
    pub identified: Option<i64>,
}

/// Visitors last seen in the window whose last touch is `touch`, and of
/// them the identified: the last-touch rollups for its whole hours, the
/// rows for its first, partial hour.
pub(super) async fn touched_visitors(
    db: &impl ConnectionTrait,
    site_id: i64,
    is_bot: bool,
    window: Window,
    touch: Touch<'_>,
) -> AppResult<(i64, i64)> {
    use visitor_touch_hour::Column as R;
    let mut rollups = visitor_touch_hour::Entity::find().filter(R::SiteId.eq(site_id)).filter(R::IsBot.eq(is_bot));
    if let Some(hour) = window.first_whole_hour {
        rollups = rollups.filter(R::Hour.gte(hour));
    }
    if let Some(channel) = touch.channel {
        rollups = rollups.filter(R::Channel.eq(channel));
    }
    if let Some(campaign) = touch.campaign {
        rollups = rollups.filter(R::Campaign.eq(campaign));
    }
    if touch.submitted_form {
        rollups = rollups.filter(R::SubmittedForm.eq(true));
    }
    let whole: Tally = rollups
        .select_only()
        .column_as(sum_of(Expr::col(R::Visitors)), "visitors")
        .column_as(sum_of(Expr::col(R::Identified)), "identified")
        .into_model()
        .one(db)
        .await?
        .unwrap_or_default();
    let mut visitors = whole.visitors.unwrap_or(0);
    let mut identified = whole.identified.unwrap_or(0);
    if let Some((start, end)) = window.partial_hour() {
        use visitor::Column as V;
        let mut rows = visitor::Entity::find()
            .filter(V::SiteId.eq(site_id))
            .filter(V::IsBot.eq(is_bot))
            .filter(V::LastSeen.gte(start))
            .filter(V::LastSeen.lt(end));
        if let Some(channel) = touch.channel {
            rows = rows.filter(V::LastChannel.eq(channel));
        }
        if let Some(campaign) = touch.campaign {
            rows = rows.filter(V::LastCampaign.eq(campaign));
        }
        if touch.submitted_form {
            rows = rows.filter(V::FormSubmits.gt(0));
        }
        let partial: Tally = rows
            .select_only()
            .column_as(Expr::cust("COUNT(*)"), "visitors")
            .column_as(sum_of(Expr::cust("CASE WHEN visitors.status = 'identified' THEN 1 ELSE 0 END")), "identified")
            .into_model()
            .one(db)
            .await?
            .unwrap_or_default();
        visitors += partial.visitors.unwrap_or(0);
        identified += partial.identified.unwrap_or(0);
    }
    Ok((visitors, identified))
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
                .column_as(Expr::cust("COUNT(*)"), "sessions")
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
/// the site's hot threshold. Recency depends only on the days since the last
/// visit, so visitors are read one UTC day of last visit at a time, and of each
/// day only those whose stored points plus that day's largest recency can reach
/// the threshold (on the `(site_id, is_bot, day, score, last_seen)` index). Visits older
/// than the fade have no recency left: only stored points at the threshold count.
pub(super) async fn hot_leads(
    db: &impl ConnectionTrait,
    site: &site::Model,
    is_bot: bool,
    start: Option<i64>,
    now: i64,
) -> AppResult<i64> {
    let visitors = |min_stored: i32| {
        let mut query = visitor::Entity::find()
            .filter(visitor::Column::SiteId.eq(site.id))
            .filter(visitor::Column::IsBot.eq(is_bot))
            .filter(visitor::Column::Score.gte(min_stored));
        if let Some(start) = start {
            // `+` keeps SQLite from picking a last_seen index over the day index.
            query = query.filter(Expr::cust(format!("+visitors.last_seen >= {start}")));
        }
        query
    };
    let seeks = hot_seeks(site.hot_threshold, start, now);
    let mut hot = 0;
    for (day, min_stored) in seeks.days {
        let query = visitors(min_stored).filter(Expr::cust(format!("last_seen / {DAY_MS} = {day}")));
        hot += count_hot(db, query, site.hot_threshold, now).await?;
    }
    if let Some(faded) = seeks.faded_before {
        let query = visitors(site.hot_threshold).filter(Expr::cust(format!("+visitors.last_seen < {faded}")));
        hot += count_hot(db, query, site.hot_threshold, now).await?;
    }
    Ok(hot)
}

/// Where hot leads can be: per UTC day of last visit with recency left, the
/// fewest stored points that can reach the threshold; and before
/// `faded_before`, no recency is left, so only stored points at the threshold.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct HotSeeks {
    /// (UTC day number, least stored points), newest day first.
    pub days: Vec<(i64, i32)>,
    pub faded_before: Option<i64>,
}

pub(super) fn hot_seeks(threshold: i32, start: Option<i64>, now: i64) -> HotSeeks {
    let today = now.div_euclid(DAY_MS);
    // Whole days after which no recency is left.
    let fade_days = (scoring::recency_fade_ms() + DAY_MS - 1) / DAY_MS;
    let mut days = Vec::new();
    // A day after today holds visits stamped a little ahead of the clock.
    for days_back in -1..=fade_days {
        let day = today - days_back;
        if start.is_some_and(|start| (day + 1) * DAY_MS <= start) {
            continue;
        }
        // The youngest visit of this UTC day has the most recency left.
        let youngest = now - ((day + 1) * DAY_MS - 1);
        days.push((day, threshold - scoring::recency_points(youngest)));
    }
    let faded = (today - fade_days) * DAY_MS;
    HotSeeks { days, faded_before: start.is_none_or(|start| start < faded).then_some(faded) }
}

async fn count_hot(
    db: &impl ConnectionTrait,
    candidates: Select<visitor::Entity>,
    threshold: i32,
    now: i64,
) -> AppResult<i64> {
    let hot = Expr::cust(format!("CASE WHEN {} >= {threshold} THEN 1 ELSE 0 END", score_sql_text("visitors", now)));
    let count: Option<Option<i64>> =
        candidates.select_only().column_as(sum_of(hot), "hot").into_tuple().one(db).await?;
    Ok(count.flatten().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hot visitor is a candidate of exactly one seek, for visits at
    /// any time of day, from a day ahead to forty days back.
    #[test]
    fn every_hot_visitor_lies_in_exactly_one_seek() {
        let noon = 1_800_000_000_000 / DAY_MS * DAY_MS + DAY_MS / 2;
        for now in [noon - DAY_MS / 2, noon - 7 * 60_000, noon, noon + DAY_MS / 2 - 1] {
            for (threshold, start) in
                [(70, None), (70, Some(now - DAY_MS)), (30, Some(now - 7 * DAY_MS)), (95, Some(now - 30 * DAY_MS))]
            {
                let seeks = hot_seeks(threshold, start, now);
                let mut last_seen = now + 2 * HOUR_MS;
                while last_seen > now - 40 * DAY_MS {
                    for stored in 0..=110 {
                        let hot =
                            scoring::total(stored, last_seen, now) >= threshold && start.is_none_or(|s| last_seen >= s);
                        let day = last_seen.div_euclid(DAY_MS);
                        let in_day = seeks.days.iter().filter(|(d, min)| *d == day && stored >= *min).count();
                        let in_faded =
                            usize::from(seeks.faded_before.is_some_and(|f| last_seen < f) && stored >= threshold);
                        if hot {
                            assert_eq!(
                                in_day + in_faded,
                                1,
                                "now {now}, seen {last_seen}, stored {stored}, threshold {threshold}"
                            );
                        }
                        assert!(in_day + in_faded <= 1, "counted twice: seen {last_seen}, stored {stored}");
                    }
                    last_seen -= 37 * 60_000;
                }
            }
        }
    }
}
