//! Retention: a site's `retentionDays` bounds how long visitor-level data
//! lives. The purge deletes, per site, the events, sessions, identities,
//! clicks and delivery-log entries older than that, and the visitors not seen
//! since, a small batch per statement so collection never waits long behind
//! it. The page and link-click rollups hold no visitor and stay, so totals
//! over old windows keep their pageviews and clicks; the visitors and sessions
//! a purge deletes leave their hourly rollups with them, so visitor counts
//! and the scored list keep agreeing with the rows.

use std::time::Duration;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait, QueryFilter, QuerySelect,
    QueryTrait, Statement, TransactionTrait, Value,
    sea_query::{Expr, ExprTrait, IntoColumnRef, IntoIden},
};

use entity::{
    conversion, event, identity, link_click, site, tracked_session, visitor, visitor_active_hour, visitor_link,
    visitor_page, webhook_delivery,
};

use crate::{
    error::AppResult,
    service::{
        credit,
        tracking::{
            rollup::{self, Deltas, SessionKey, SessionTally},
            rollup_store,
            writes::Writes,
        },
    },
    time::{DAY_MS, now_ms},
};

/// Rows one statement deletes at most.
const BATCH: u64 = 200;
/// How often the job runs after its first run at start.
pub const EVERY: Duration = Duration::from_secs(60 * 60);

/// What a purge deleted, over all sites.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    pub events: u64,
    pub sessions: u64,
    pub identities: u64,
    pub clicks: u64,
    pub deliveries: u64,
    pub conversions: u64,
    pub visitors: u64,
}

/// Deletes what every site with a retention keeps no longer, as of `now`
/// (the job passes the clock; tests pass any time they like).
pub async fn purge(db: &DatabaseConnection, now: i64) -> AppResult<Purged> {
    let sites: Vec<(i64, Option<i32>)> = site::Entity::find()
        .select_only()
        .column(site::Column::Id)
        .column(site::Column::RetentionDays)
        .filter(site::Column::RetentionDays.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    let mut purged = Purged::default();
    for (site_id, days) in sites {
        let Some(days) = days.filter(|days| *days > 0) else { continue };
        let cutoff = now - i64::from(days) * DAY_MS;
        // First, so a read that sees any row gone knows the rollups no longer
        // sum the rows before the cutoff.
        mark_purged(db, site_id, cutoff).await?;
        purged.events += in_batches::<event::Entity>(
            db,
            [event::Column::Id, event::Column::SiteId, event::Column::Timestamp],
            site_id,
            cutoff,
            None,
        )
        .await?;
        purged.sessions += in_batches::<tracked_session::Entity>(
            db,
            [tracked_session::Column::Id, tracked_session::Column::SiteId, tracked_session::Column::EndedAt],
            site_id,
            cutoff,
            Some(|rows| Uncount::Sessions(rows.iter().map(rollup::session_entry).collect())),
        )
        .await?;
        recount_cut_visits(db, site_id, cutoff).await?;
        purged.identities += in_batches::<identity::Entity>(
            db,
            [identity::Column::Id, identity::Column::SiteId, identity::Column::IdentifiedAt],
            site_id,
            cutoff,
            None,
        )
        .await?;
        purged.clicks += in_batches::<link_click::Entity>(
            db,
            [link_click::Column::Id, link_click::Column::SiteId, link_click::Column::CreatedAt],
            site_id,
            cutoff,
            None,
        )
        .await?;
        purged.deliveries += in_batches::<webhook_delivery::Entity>(
            db,
            [webhook_delivery::Column::Id, webhook_delivery::Column::SiteId, webhook_delivery::Column::CreatedAt],
            site_id,
            cutoff,
            None,
        )
        .await?;
        purged.conversions += in_batches::<conversion::Entity>(
            db,
            [conversion::Column::Id, conversion::Column::SiteId, conversion::Column::OccurredAt],
            site_id,
            cutoff,
            None,
        )
        .await?;
        // A visitor's pages viewed only before the cutoff: their pageviews are gone.
        in_batches::<visitor_page::Entity>(
            db,
            [visitor_page::Column::Id, visitor_page::Column::SiteId, visitor_page::Column::LastViewed],
            site_id,
            cutoff,
            None,
        )
        .await?;
        // A visitor's links clicked only before the cutoff: those clicks are gone.
        in_batches::<visitor_link::Entity>(
            db,
            [visitor_link::Column::Id, visitor_link::Column::SiteId, visitor_link::Column::LastClicked],
            site_id,
            cutoff,
            None,
        )
        .await?;
        // A visitor's active hours before the cutoff; their counts stay, as
        // the rollups' rows do (a range read from them starts after it).
        in_batches::<visitor_active_hour::Entity>(
            db,
            [
                visitor_active_hour::Column::VisitorId,
                visitor_active_hour::Column::SiteId,
                visitor_active_hour::Column::Hour,
            ],
            site_id,
            cutoff,
            None,
        )
        .await?;
        purged.visitors += in_batches::<visitor::Entity>(
            db,
            [visitor::Column::Id, visitor::Column::SiteId, visitor::Column::LastSeen],
            site_id,
            cutoff,
            Some(|rows| Uncount::Visitors(rows.to_vec())),
        )
        .await?;
    }
    if purged != Purged::default() {
        tracing::info!(?purged, "retention purge");
    }
    Ok(purged)
}

/// Records that the site's rows before `cutoff` are being deleted: Explore
/// reads its per-value rollups only for ranges that start at or after it.
/// Like every hourly rollup they hold no visitor and stay, keeping what the
/// rows held before the purge, which a recount of the rows left would not.
async fn mark_purged(db: &DatabaseConnection, site_id: i64, cutoff: i64) -> AppResult<()> {
    site::Entity::update_many()
        .col_expr(site::Column::PurgedBefore, Expr::value(cutoff))
        .filter(site::Column::Id.eq(site_id))
        .filter(site::Column::PurgedBefore.is_null().or(site::Column::PurgedBefore.lt(cutoff)))
        .exec(db)
        .await?;
    Ok(())
}

/// A visit that began before the cutoff and ended after it keeps its row but
/// has lost its older events: its counts of human events and pageviews are
/// taken again from the events left, so Explore, which reads a visit inside
/// its range from these counts, stays equal to the rows. Only such visits
/// are left before the cutoff once the older ones are deleted. A recount
/// that changes a visit stores no event, so it moves the site's settled
/// generation in its own transaction: Explore's copies of the visits then
/// load again rather than keep the counts they read before it.
async fn recount_cut_visits(db: &DatabaseConnection, site_id: i64, cutoff: i64) -> AppResult<()> {
    let backend = db.get_database_backend();
    let (site, before, human) = match backend {
        DbBackend::Postgres => ("$1", "$2", "$3"),
        _ => ("?1", "?2", "?3"),
    };
    let events =
        format!("(SELECT COUNT(*) FROM events e WHERE e.session_id = tracked_sessions.id AND e.is_bot = {human})");
    let pageviews = format!(
        "(SELECT COUNT(*) FROM events e WHERE e.session_id = tracked_sessions.id AND e.is_bot = {human} \
         AND e.event_type = 'pageview')"
    );
    let sql = format!(
        "UPDATE tracked_sessions SET human_event_count = {events}, human_pageview_count = {pageviews} \
         WHERE site_id = {site} AND started_at < {before} \
         AND (human_event_count <> {events} OR human_pageview_count <> {pageviews})"
    );
    let values: Vec<Value> = vec![site_id.into(), cutoff.into(), false.into()];
    let txn = db.begin().await?;
    let recounted = txn.execute_raw(Statement::from_sql_and_values(backend, sql, values)).await?.rows_affected();
    if recounted > 0 {
        credit::cache::forget_all(&txn, site_id, now_ms()).await?;
    }
    txn.commit().await?;
    Ok(())
}

/// What a batch of deleted rows of `E` takes out of the rollups.
type UncountFn<E> = fn(&[<E as EntityTrait>::Model]) -> Uncount;

/// What deleted rows take out of the hourly rollups.
enum Uncount {
    /// Out of the hourly and last-touch rollups and their accounts.
    Visitors(Vec<visitor::Model>),
    Sessions(Vec<(SessionKey, SessionTally)>),
}

impl Uncount {
    async fn write(self, db: &impl ConnectionTrait) -> Result<(), DbErr> {
        let mut writes = Writes::new(db.get_database_backend());
        match self {
            Uncount::Visitors(rows) => {
                rollup_store::add_visitors_removed(&mut writes, &rows);
            }
            Uncount::Sessions(entries) => rollup_store::add_session_moves(&mut writes, Deltas::removed(entries)),
        }
        writes.send(db).await
    }
}

/// Deletes the site's rows of `E` whose time is before `cutoff`, a batch at a
/// time, each batch its own short statement. `columns`: id, site id, time.
/// With `uncount`, each batch's rows leave the rollups in the same
/// transaction as their delete.
async fn in_batches<E>(
    db: &DatabaseConnection,
    columns: [E::Column; 3],
    site_id: i64,
    cutoff: i64,
    uncount: Option<UncountFn<E>>,
) -> AppResult<u64>
where
    E: EntityTrait,
    E::Column: IntoColumnRef + IntoIden + Copy,
{
    let [id, site, time] = columns;
    let mut deleted = 0;
    loop {
        let mut tries = 0;
        let done = loop {
            match delete_batch::<E>(db, [id, site, time], site_id, cutoff, uncount).await {
                Ok(done) => break done,
                // A batch that deadlocked with a writer on PostgreSQL (each
                // takes row locks in its own order) was rolled back whole:
                // it is tried again rather than ending the hour's purge.
                Err(err) if crate::error::is_transient(&err) && tries < TRANSIENT_TRIES => {
                    tries += 1;
                    tracing::debug!(error = %err, tries, "retention batch failed, retrying");
                    tokio::time::sleep(Duration::from_millis(50 << tries)).await;
                }
                Err(err) => return Err(err.into()),
            }
        };
        deleted += done;
        // A short batch is not the end: a row a writer changed meanwhile can
        // drop out of a full one. Only a batch that deletes nothing is.
        if done == 0 {
            return Ok(deleted);
        }
        // Lets the batch writer take the database between two batches.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// How often a batch that failed for a transient reason is tried again.
const TRANSIENT_TRIES: u32 = 5;

/// Deletes one batch of the site's rows of `E` before `cutoff` (with their
/// rollup counts when `uncount`); answers how many it deleted.
async fn delete_batch<E>(
    db: &DatabaseConnection,
    [id, site, time]: [E::Column; 3],
    site_id: i64,
    cutoff: i64,
    uncount: Option<UncountFn<E>>,
) -> Result<u64, DbErr>
where
    E: EntityTrait,
    E::Column: IntoColumnRef + IntoIden + Copy,
{
    let batch =
        E::find().select_only().column(id).filter(site.eq(site_id)).filter(time.lt(cutoff)).limit(BATCH).into_query();
    // The time is checked on the row too: PostgreSQL checks it again on a
    // row a writer changed meanwhile, so a visitor who just came back stays.
    let delete = E::delete_many().filter(id.in_subquery(batch)).filter(time.lt(cutoff));
    // The delete comes first and answers the rows it took, so the rollups
    // lose exactly those (and SQLite's write lock is taken before anything
    // is read). Whatever it took, the attribution days kept after it no
    // longer hold: they go in the same transaction.
    let txn = db.begin().await?;
    let taken = match uncount {
        Some(uncount) => {
            let rows = delete.exec_with_returning(&txn).await?;
            uncount(&rows).write(&txn).await?;
            rows.len() as u64
        }
        None => delete.exec(&txn).await?.rows_affected,
    };
    if taken > 0 {
        credit::cache::forget_all(&txn, site_id, now_ms()).await?;
    }
    txn.commit().await?;
    Ok(taken)
}

/// Runs the purge now and then every hour, for as long as the server runs.
pub fn spawn_job(db: DatabaseConnection) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(EVERY);
        loop {
            every.tick().await;
            let now = now_ms();
            if let Err(err) = crate::service::salts::delete_before(&db, crate::service::salts::day_of(now)).await {
                tracing::warn!(error = ?err, "deleting yesterday's cookieless salt failed; it runs again in an hour");
            }
            if let Err(err) = purge(&db, now).await {
                tracing::warn!(error = ?err, "retention purge failed; it runs again in an hour");
            }
        }
    });
}
