//! Visitor analytics: the scored list, the live stream, overview statistics,
//! visitor profiles and session timelines. Every entry point starts from a
//! scoped finder; bots are left out unless a caller asks for them.

pub mod attribution;
pub mod desk;
pub mod live;
pub mod profile;
mod ranking;
pub mod series;
pub mod session;
pub mod stats;
pub mod visitors;
mod window;

use sea_orm::{
    AccessMode, ColumnTrait, ConnectionTrait, DatabaseBackend, DatabaseConnection, DatabaseTransaction, EntityTrait,
    IsolationLevel, QueryFilter, TransactionTrait,
    sea_query::{Expr, Func},
};

use entity::{site, visitor};

use super::{access, scoring};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    time::{DAY_MS, HOUR_MS},
};

/// A window ending now. Windows roll: `24h` is the last 24 hours, not today.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeRange {
    Hours24,
    Days7,
    Days30,
    All,
}

impl TimeRange {
    /// Parses `24h`, `7d`, `30d` and, where `allow_all`, `all`; empty means `7d`.
    pub fn parse(value: Option<&str>, allow_all: bool) -> AppResult<TimeRange> {
        match value.map(str::trim).filter(|v| !v.is_empty()).unwrap_or("7d") {
            "24h" => Ok(TimeRange::Hours24),
            "7d" => Ok(TimeRange::Days7),
            "30d" => Ok(TimeRange::Days30),
            "all" if allow_all => Ok(TimeRange::All),
            _ if allow_all => Err(AppError::validation("timeRange", "must be 24h, 7d, 30d or all")),
            _ => Err(AppError::validation("timeRange", "must be 24h, 7d or 30d")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TimeRange::Hours24 => "24h",
            TimeRange::Days7 => "7d",
            TimeRange::Days30 => "30d",
            TimeRange::All => "all",
        }
    }

    /// The first instant inside the window.
    pub fn start(self, now: i64) -> Option<i64> {
        match self {
            TimeRange::Hours24 => Some(now - 24 * HOUR_MS),
            TimeRange::Days7 => Some(now - 7 * DAY_MS),
            TimeRange::Days30 => Some(now - 30 * DAY_MS),
            TimeRange::All => None,
        }
    }
}

/// A visitor with its score at the time of the request.
#[derive(Debug, Clone)]
pub struct ScoredVisitor {
    pub visitor: visitor::Model,
    pub score: i32,
    pub hot: bool,
}

impl ScoredVisitor {
    pub fn new(visitor: visitor::Model, hot_threshold: i32, now: i64) -> Self {
        let score = scoring::total(visitor.score, visitor.last_seen, now);
        ScoredVisitor { visitor, score, hot: score >= hot_threshold }
    }
}

/// `scoring::total` as SQL, so lists sort by the score they show: recency
/// is a CASE over the same whole-millisecond ages at which `scoring` drops a
/// point, so both compare the same integers.
pub(crate) fn score_sql_text(table: &str, now: i64) -> String {
    let mut recency = String::from("(CASE");
    for (dropped, threshold) in scoring::formula::RECENCY_THRESHOLDS.iter().enumerate() {
        let points = scoring::RECENCY_MAX - dropped as i32;
        recency.push_str(&format!(" WHEN {now} - {table}.last_seen < {threshold} THEN {points}"));
    }
    recency.push_str(" ELSE 0 END)");
    let sum = format!("({table}.score + {recency})");
    format!("(CASE WHEN {sum} > {cap} THEN {cap} ELSE {sum} END)", cap = scoring::MAX_SCORE)
}

/// A visitor of a site the viewer can read, by its `tracker_vid`.
pub async fn find_visitor(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    tracker_vid: &str,
) -> AppResult<(site::Model, visitor::Model)> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let visitor = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::TrackerVid.eq(tracker_vid))
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("visitor"))?;
    Ok((site, visitor))
}

/// One visitor of a site the viewer can read, scored as of `now`.
pub async fn scored_visitor(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    tracker_vid: &str,
    now: i64,
) -> AppResult<ScoredVisitor> {
    let (site, visitor) = find_visitor(db, viewer, site_id, tracker_vid).await?;
    Ok(ScoredVisitor::new(visitor, site.hot_threshold, now))
}

/// One consistent view for a read made of several statements (rollups and
/// the rows of a partial hour, a ranking read in chunks): PostgreSQL's
/// default gives each statement its own snapshot, so a visitor moved between
/// two of them could be counted twice or not at all. SQLite's read
/// transaction keeps its snapshot from its first read.
pub(crate) async fn snapshot(db: &DatabaseConnection) -> AppResult<DatabaseTransaction> {
    Ok(match db.get_database_backend() {
        DatabaseBackend::Postgres => {
            db.begin_with_config(Some(IsolationLevel::RepeatableRead), Some(AccessMode::ReadOnly)).await?
        }
        _ => db.begin().await?,
    })
}

/// SUM as a BIGINT: PostgreSQL sums a BIGINT column to NUMERIC.
pub(crate) fn sum_of(expression: Expr) -> Expr {
    Func::cast_as(Func::sum(expression), "BIGINT").into()
}
