//! The alert outbox (design §15). The batch writer adds rows in the
//! transaction that fired them; workers on every instance claim due rows,
//! each row by one worker at a time, and settle each attempt.

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect,
    sea_query::{Expr, ExprTrait, LockBehavior, LockType, OnConflict, Query},
};

use entity::{alert_delivery, alert_destination, site};

use super::trigger::AlertTrigger;
use crate::webhook::retry;

pub const PENDING: &str = "pending";
pub const DELIVERED: &str = "delivered";
pub const FAILED: &str = "failed";

/// A destination that new activity can fire.
pub(crate) struct Armed {
    pub id: i64,
    pub org_id: i64,
    pub site_id: i64,
    pub trigger: AlertTrigger,
    pub hot_threshold: i32,
}

/// The live destinations of these sites: turned on and not turned off by
/// failures. Read in the batch's transaction with a key-share lock
/// (PostgreSQL; SQLite's write lock covers it), so a destination deleted
/// meanwhile waits for the batch and its outbox rows instead of failing their
/// foreign key, while a worker recording an attempt on it does not wait.
pub(crate) async fn armed(db: &impl ConnectionTrait, site_ids: &[i64]) -> Result<Vec<Armed>, DbErr> {
    let destinations = alert_destination::Entity::find()
        .filter(alert_destination::Column::SiteId.is_in(site_ids.iter().copied()))
        .filter(alert_destination::Column::Enabled.eq(true))
        .filter(alert_destination::Column::DisabledReason.is_null())
        .lock(LockType::KeyShare)
        .all(db)
        .await?;
    if destinations.is_empty() {
        return Ok(Vec::new());
    }
    let thresholds: Vec<(i64, i32)> = site::Entity::find()
        .select_only()
        .columns([site::Column::Id, site::Column::HotThreshold])
        .filter(site::Column::Id.is_in(site_ids.iter().copied()))
        .into_tuple()
        .all(db)
        .await?;
    Ok(destinations
        .into_iter()
        .filter_map(|destination| {
            let trigger = AlertTrigger::parse(&destination.trigger)?;
            let &(_, hot_threshold) = thresholds.iter().find(|(id, _)| *id == destination.site_id)?;
            Some(Armed {
                id: destination.id,
                org_id: destination.org_id,
                site_id: destination.site_id,
                trigger,
                hot_threshold,
            })
        })
        .collect())
}

/// An alert a batch fired.
pub(crate) struct Fired<'a> {
    pub destination: &'a Armed,
    pub visitor_id: i64,
    pub tracker_vid: String,
    /// The account that fired it, for `account_became_hot`.
    pub account_key: Option<String>,
    /// The conversion that fired it, for `converted`.
    pub conversion_id: Option<i64>,
}

/// Adds the fired alerts, due now; an alert this visitor (or, for an
/// account's, this account) already fired for the destination is not added
/// again. Answers how many were added.
pub(crate) async fn enqueue(db: &impl ConnectionTrait, fired: Vec<Fired<'_>>, now: i64) -> Result<u64, DbErr> {
    let mut added = 0;
    for chunk in crate::service::tracking::writes::statement_chunks(fired) {
        let rows = chunk.into_iter().map(|fired| alert_delivery::ActiveModel {
            id: NotSet,
            org_id: Set(fired.destination.org_id),
            site_id: Set(fired.destination.site_id),
            destination_id: Set(fired.destination.id),
            visitor_id: Set(fired.visitor_id),
            tracker_vid: Set(fired.tracker_vid),
            trigger: Set(fired.destination.trigger.as_str().to_owned()),
            status: Set(PENDING.to_owned()),
            attempts: Set(0),
            next_attempt_at: Set(Some(now)),
            last_status_code: Set(None),
            last_error: Set(None),
            created_at: Set(now),
            delivered_at: Set(None),
            account_key: Set(fired.account_key),
            conversion_id: Set(fired.conversion_id),
        });
        // Any unique key: (destination, visitor), (destination, account), (destination, conversion).
        added += alert_delivery::Entity::insert_many(rows)
            .on_conflict(OnConflict::new().do_nothing().to_owned())
            .exec_without_returning(db)
            .await?;
    }
    Ok(added)
}

/// Claims up to `limit` due deliveries of live destinations for one attempt
/// each: the attempt count goes up and the row is not due again until
/// `lease_until`, when a worker that died mid-attempt has lost its claim. On
/// PostgreSQL, `SKIP LOCKED` lets workers on several instances claim at once
/// without waiting on, or taking, each other's rows.
pub(crate) async fn claim(
    db: &impl ConnectionTrait,
    now: i64,
    lease_until: i64,
    limit: u64,
) -> Result<Vec<alert_delivery::Model>, DbErr> {
    use alert_delivery::Column as D;
    let due = due_of_live_destinations(D::Id, now)
        .limit(limit)
        .lock_with_tables_behavior(LockType::Update, [alert_delivery::Entity], LockBehavior::SkipLocked)
        .to_owned();
    let mut claimed = alert_delivery::Entity::update_many()
        .col_expr(D::Attempts, Expr::col(D::Attempts).add(1))
        .col_expr(D::NextAttemptAt, Expr::value(lease_until))
        .filter(D::Id.in_subquery(due))
        .exec_with_returning(db)
        .await?;
    claimed.sort_by_key(|delivery| delivery.id);
    Ok(claimed)
}

/// A failed delivery claimed again on an admin's request, whatever its schedule.
pub(crate) async fn claim_failed(
    db: &impl ConnectionTrait,
    id: i64,
    lease_until: i64,
) -> Result<Option<alert_delivery::Model>, DbErr> {
    use alert_delivery::Column as D;
    Ok(alert_delivery::Entity::update_many()
        .col_expr(D::Attempts, Expr::col(D::Attempts).add(1))
        .col_expr(D::Status, Expr::value(PENDING))
        .col_expr(D::NextAttemptAt, Expr::value(lease_until))
        .filter(D::Id.eq(id))
        .filter(D::Status.eq(FAILED))
        .exec_with_returning(db)
        .await?
        .pop())
}

/// Where a delivery stands after an attempt.
pub(crate) struct Settled<'a> {
    pub status: &'static str,
    pub next_attempt_at: Option<i64>,
    pub status_code: Option<i32>,
    pub error: Option<&'a str>,
    pub delivered_at: Option<i64>,
}

/// Records an attempt's result, if the attempt still holds the claim (it
/// lost it only when it ran past its lease and another worker took over).
pub(crate) async fn settle(
    db: &impl ConnectionTrait,
    claimed: &alert_delivery::Model,
    settled: Settled<'_>,
) -> Result<bool, DbErr> {
    use alert_delivery::Column as D;
    let updated = alert_delivery::Entity::update_many()
        .col_expr(D::Status, Expr::value(settled.status))
        .col_expr(D::NextAttemptAt, Expr::value(settled.next_attempt_at))
        .col_expr(D::LastStatusCode, Expr::value(settled.status_code))
        .col_expr(D::LastError, Expr::value(settled.error.map(str::to_owned)))
        .col_expr(D::DeliveredAt, Expr::value(settled.delivered_at))
        .filter(D::Id.eq(claimed.id))
        .filter(D::Attempts.eq(claimed.attempts))
        .filter(D::Status.eq(PENDING))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// A destination's attempt succeeded: its run of failures is over.
pub(crate) async fn destination_succeeded(db: &impl ConnectionTrait, destination_id: i64) -> Result<(), DbErr> {
    alert_destination::Entity::update_many()
        .col_expr(alert_destination::Column::FailingSince, Expr::value(Option::<i64>::None))
        .col_expr(alert_destination::Column::LastFailedAt, Expr::value(Option::<i64>::None))
        .filter(alert_destination::Column::Id.eq(destination_id))
        .filter(alert_destination::Column::FailingSince.is_not_null())
        .exec(db)
        .await?;
    Ok(())
}

/// A destination's attempt failed: its run of failures goes on if the run's
/// last failure is recent (`retry::FAILURE_RUN_GAP_MS`), or starts now; a run
/// of a day (`retry::DISABLE_AFTER_MS`) turns it off with `reason`. Each step
/// is one statement, so workers on several instances agree. Answers whether
/// this call turned it off.
pub(crate) async fn destination_failed(
    db: &impl ConnectionTrait,
    destination_id: i64,
    now: i64,
    reason: &str,
) -> Result<bool, DbErr> {
    use alert_destination::Column as T;
    let run_goes_on =
        Expr::col(T::FailingSince).is_not_null().and(Expr::col(T::LastFailedAt).gte(now - retry::FAILURE_RUN_GAP_MS));
    alert_destination::Entity::update_many()
        .col_expr(T::FailingSince, Expr::case(run_goes_on, Expr::col(T::FailingSince)).finally(now).into())
        .col_expr(T::LastFailedAt, Expr::value(now))
        .filter(T::Id.eq(destination_id))
        .exec(db)
        .await?;
    let disabled = alert_destination::Entity::update_many()
        .col_expr(T::DisabledReason, Expr::value(reason))
        .filter(T::Id.eq(destination_id))
        .filter(T::DisabledReason.is_null())
        .filter(T::FailingSince.lte(now - retry::DISABLE_AFTER_MS))
        .exec(db)
        .await?;
    Ok(disabled.rows_affected == 1)
}

/// When the longest-waiting due delivery of a live destination became due.
/// A turned-off destination's deliveries wait by design and do not count.
pub(crate) async fn oldest_due(db: &impl ConnectionTrait, now: i64) -> Result<Option<i64>, DbErr> {
    let oldest = due_of_live_destinations(alert_delivery::Column::NextAttemptAt, now).limit(1).to_owned();
    let row = db.query_one(&oldest).await?;
    row.map(|row| row.try_get_by_index::<Option<i64>>(0)).transpose().map(Option::flatten)
}

/// `column` of the pending deliveries due by `now` whose destination is live,
/// the longest-waiting first.
fn due_of_live_destinations(column: alert_delivery::Column, now: i64) -> sea_orm::sea_query::SelectStatement {
    use alert_delivery::Column as D;
    use alert_destination::Column as T;
    Query::select()
        .column((alert_delivery::Entity, column))
        .from(alert_delivery::Entity)
        .inner_join(
            alert_destination::Entity,
            Expr::col((alert_destination::Entity, T::Id)).equals((alert_delivery::Entity, D::DestinationId)),
        )
        .and_where(Expr::col((alert_delivery::Entity, D::Status)).eq(PENDING))
        .and_where(Expr::col((alert_delivery::Entity, D::NextAttemptAt)).lte(now))
        .and_where(Expr::col((alert_destination::Entity, T::Enabled)).eq(true))
        .and_where(Expr::col((alert_destination::Entity, T::DisabledReason)).is_null())
        .order_by((alert_delivery::Entity, D::NextAttemptAt), sea_orm::Order::Asc)
        .to_owned()
}
