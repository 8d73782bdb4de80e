//! The email outbox: rows added in the transaction of what caused them,
//! claimed by workers on every instance (one worker per row at a time) and
//! settled after each attempt.

use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, ExprTrait, LockBehavior, LockType, OnConflict, Query},
};

use entity::email_outbox;

use super::Email;

pub const PENDING: &str = "pending";
pub const SENT: &str = "sent";
pub const FAILED: &str = "failed";

/// Adds a message, due now. Answers false when its `dedupe_key` is already
/// in the outbox (another instance queued the same digest).
pub async fn enqueue(db: &impl ConnectionTrait, email: Email, now: i64) -> Result<bool, DbErr> {
    let row = email_outbox::ActiveModel {
        id: NotSet,
        org_id: Set(email.org_id),
        user_id: Set(email.user_id),
        kind: Set(email.kind.to_owned()),
        recipient: Set(email.to),
        subject: Set(email.rendered.subject),
        text_body: Set(email.rendered.text),
        html_body: Set(email.rendered.html),
        list_unsubscribe: Set(email.list_unsubscribe),
        dedupe_key: Set(email.dedupe_key),
        status: Set(PENDING.to_owned()),
        attempts: Set(0),
        next_attempt_at: Set(Some(now)),
        last_error: Set(None),
        created_at: Set(now),
        sent_at: Set(None),
    };
    let added = email_outbox::Entity::insert(row)
        .on_conflict(OnConflict::column(email_outbox::Column::DedupeKey).do_nothing().to_owned())
        .exec_without_returning(db)
        .await?;
    Ok(added == 1)
}

/// Claims up to `limit` due messages for one attempt each: the attempt count
/// goes up and the row is not due again until `lease_until`, when a worker
/// that died mid-send has lost its claim. `SKIP LOCKED` lets the workers of
/// several PostgreSQL instances claim at once without taking each other's rows.
pub async fn claim(
    db: &impl ConnectionTrait,
    now: i64,
    lease_until: i64,
    limit: u64,
) -> Result<Vec<email_outbox::Model>, DbErr> {
    use email_outbox::Column as C;
    let due = Query::select()
        .column(C::Id)
        .from(email_outbox::Entity)
        .and_where(Expr::col(C::Status).eq(PENDING))
        .and_where(Expr::col(C::NextAttemptAt).lte(now))
        .order_by(C::NextAttemptAt, sea_orm::Order::Asc)
        .limit(limit)
        .lock_with_tables_behavior(LockType::Update, [email_outbox::Entity], LockBehavior::SkipLocked)
        .to_owned();
    let mut claimed = email_outbox::Entity::update_many()
        .col_expr(C::Attempts, Expr::col(C::Attempts).add(1))
        .col_expr(C::NextAttemptAt, Expr::value(lease_until))
        .filter(C::Id.in_subquery(due))
        .exec_with_returning(db)
        .await?;
    claimed.sort_by_key(|message| message.id);
    Ok(claimed)
}

/// Where a message stands after an attempt.
pub struct Settled<'a> {
    pub status: &'static str,
    pub next_attempt_at: Option<i64>,
    pub error: Option<&'a str>,
    pub sent_at: Option<i64>,
}

/// Records an attempt's result if the attempt still holds the claim. A sent
/// message keeps its subject and recipient for the log; its bodies, which
/// may hold a reset or invitation link, are emptied.
pub async fn settle(
    db: &impl ConnectionTrait,
    claimed: &email_outbox::Model,
    settled: Settled<'_>,
) -> Result<bool, DbErr> {
    use email_outbox::Column as C;
    let mut update = email_outbox::Entity::update_many()
        .col_expr(C::Status, Expr::value(settled.status))
        .col_expr(C::NextAttemptAt, Expr::value(settled.next_attempt_at))
        .col_expr(C::LastError, Expr::value(settled.error.map(str::to_owned)))
        .col_expr(C::SentAt, Expr::value(settled.sent_at));
    if settled.status != PENDING {
        update = update.col_expr(C::TextBody, Expr::value("")).col_expr(C::HtmlBody, Expr::value(""));
    }
    let updated = update
        .filter(C::Id.eq(claimed.id))
        .filter(C::Attempts.eq(claimed.attempts))
        .filter(C::Status.eq(PENDING))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// The latest messages to one address, newest first.
pub async fn latest_to(
    db: &impl ConnectionTrait,
    recipient: &str,
    limit: u64,
) -> Result<Vec<email_outbox::Model>, DbErr> {
    email_outbox::Entity::find()
        .filter(email_outbox::Column::Recipient.eq(recipient))
        .order_by_desc(email_outbox::Column::Id)
        .limit(limit)
        .all(db)
        .await
}
