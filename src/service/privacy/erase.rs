//! Erasure (GDPR article 17): a visitor leaves no trace. Its events, sessions
//! and identity history are deleted, its clicks stay as anonymous counts, its
//! delivery-log entries go, and its pageviews leave the hourly rollups, so
//! every figure afterwards is as if it had never come.

use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseBackend, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Statement, TransactionTrait,
    sea_query::{Expr, ExprTrait},
};

use entity::{
    alert_delivery, conversion, event, identity, link_click, tracked_session, visitor, visitor_link, visitor_page,
    visitor_value, webhook_delivery,
};

use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::{
        access, credit,
        tracking::{
            EventKind, active_hours, page_rollups, rollup, rollup_store,
            value_rollups::{self, RolledDimension, ValueKey, ValueTally},
            visitor_values::{self, VisitorCount},
            writes::Writes,
        },
    },
};

/// What an erasure removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Erased {
    pub events: u64,
    pub sessions: u64,
    pub identities: u64,
    /// Clicks untied from the visitor; they stay as anonymous counts.
    pub clicks: u64,
}

/// Erases one visitor of a site. Admins only; an unknown visitor is 404.
///
/// The visitor's row is locked first, as the batch writer locks it, so an
/// erasure and a batch for the same visitor run one after the other: a write
/// acknowledged before the erasure is erased with it, and one that commits
/// after it starts a new visitor.
///
/// On SQLite a deleted row's bytes would stay in the file's free space and in
/// the write-ahead log until overwritten. The erasure runs with
/// `secure_delete`, which zeroes what it deletes, and then truncates the log,
/// so the erased text is in neither file afterwards.
pub async fn erase_visitor(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site_id: i64,
    tracker_vid: &str,
) -> AppResult<Erased> {
    let sqlite = db.get_database_backend() == DatabaseBackend::Sqlite;
    if sqlite {
        // The pool's one connection runs the erasure's transaction next.
        db.execute_unprepared("PRAGMA secure_delete = ON").await?;
    }
    let erased = erase_in_transaction(db, viewer, site_id, tracker_vid).await;
    if sqlite {
        // Other writes zero only what costs no extra I/O (FAST, `db`); only
        // erasure overwrites whole freed pages.
        db.execute_unprepared("PRAGMA secure_delete = FAST").await?;
        if erased.is_ok() {
            truncate_log(db).await?;
        }
    }
    erased
}

/// Copies the write-ahead log into the database file and empties it, so the
/// erased rows' earlier versions in the log are gone. A reader in the middle
/// of a read keeps the log from emptying; such reads are short, so this
/// tries again for a while, and says so in the log if it never could.
async fn truncate_log(db: &DatabaseConnection) -> AppResult<()> {
    for _ in 0..100 {
        let done = db
            .query_one_raw(Statement::from_string(DatabaseBackend::Sqlite, "PRAGMA wal_checkpoint(TRUNCATE)"))
            .await?
            .and_then(|row| row.try_get_by_index::<i64>(0).ok())
            .is_some_and(|busy| busy == 0);
        if done {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tracing::warn!("after an erasure, readers kept the write-ahead log from emptying; the next checkpoint empties it");
    Ok(())
}

async fn erase_in_transaction(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site_id: i64,
    tracker_vid: &str,
) -> AppResult<Erased> {
    let txn = db.begin().await?;
    let (site, _) = access::site(&txn, viewer, site_id, Role::Admin).await?;
    let found = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::TrackerVid.eq(tracker_vid))
        .lock_exclusive()
        .one(&txn)
        .await?
        .ok_or_else(|| AppError::not_found("visitor"))?;

    let (names, custom) = subtract_from_page_hours(&txn, site.id, found.id).await?;
    visitor_page::Entity::delete_many().filter(visitor_page::Column::VisitorId.eq(found.id)).exec(&txn).await?;
    visitor_link::Entity::delete_many().filter(visitor_link::Column::VisitorId.eq(found.id)).exec(&txn).await?;
    let events = event::Entity::delete_many().filter(event::Column::VisitorId.eq(found.id)).exec(&txn).await?;
    // The rows the delete answers are those it took (a retention purge may
    // have taken some first), so the rollups lose exactly those.
    let sessions = tracked_session::Entity::delete_many()
        .filter(tracked_session::Column::VisitorId.eq(found.id))
        .exec_with_returning(&txn)
        .await?;
    subtract_from_visitor_and_session_hours(&txn, &found, &sessions, names, &custom).await?;
    let values = visitor_value::Entity::delete_many()
        .filter(visitor_value::Column::VisitorId.eq(found.id))
        .exec_with_returning(&txn)
        .await?;
    subtract_from_visitor_counts(&txn, &values).await?;
    active_hours::erase(&txn, site.id, found.id).await?;
    let identities =
        identity::Entity::delete_many().filter(identity::Column::VisitorId.eq(found.id)).exec(&txn).await?;
    let clicks = link_click::Entity::update_many()
        .col_expr(link_click::Column::VisitorId, Expr::value(Option::<i64>::None))
        .col_expr(link_click::Column::TrackerVid, Expr::value(Option::<String>::None))
        // The network says where the person was; it goes with them.
        .col_expr(link_click::Column::Asn, Expr::value(Option::<i64>::None))
        .col_expr(link_click::Column::Network, Expr::value(Option::<String>::None))
        .filter(link_click::Column::SiteId.eq(site.id))
        .filter(
            link_click::Column::VisitorId
                .eq(found.id)
                .or(link_click::Column::TrackerVid.eq(found.tracker_vid.as_str())),
        )
        .exec(&txn)
        .await?;
    webhook_delivery::Entity::delete_many()
        .filter(webhook_delivery::Column::SiteId.eq(site.id))
        .filter(webhook_delivery::Column::TrackerVid.eq(found.tracker_vid.as_str()))
        .exec(&txn)
        .await?;
    // An alert not yet sent must not carry the erased person anywhere.
    alert_delivery::Entity::delete_many().filter(alert_delivery::Column::VisitorId.eq(found.id)).exec(&txn).await?;
    // Their conversions: those tied to them, and any still waiting for them by email or user id.
    conversion::Entity::delete_many().filter(conversion::Column::VisitorId.eq(found.id)).exec(&txn).await?;
    let mut waiting = Condition::any();
    if let Some(email) = &found.email {
        waiting = waiting.add(conversion::Column::Email.eq(email.to_lowercase()));
    }
    if let Some(user) = &found.identified_user_id {
        waiting = waiting.add(conversion::Column::UserId.eq(user.as_str()));
    }
    if found.email.is_some() || found.identified_user_id.is_some() {
        conversion::Entity::delete_many()
            .filter(conversion::Column::SiteId.eq(site.id))
            .filter(conversion::Column::VisitorId.is_null())
            .filter(waiting)
            .exec(&txn)
            .await?;
    }
    visitor::Entity::delete_by_id(found.id).exec(&txn).await?;
    // Their outcomes and visits leave the attribution days, whenever they were.
    credit::cache::forget_all(&txn, site.id, crate::time::now_ms()).await?;
    // Its account's span, without it.
    if let Some((key, _)) = rollup::account_entry(&found) {
        let mut writes = Writes::new(txn.get_database_backend());
        rollup_store::add_account_span_refresh(&mut writes, &[key]);
        writes.send(&txn).await?;
    }
    txn.commit().await?;
    Ok(Erased {
        events: events.rows_affected,
        sessions: sessions.len() as u64,
        identities: identities.rows_affected,
        clicks: clicks.rows_affected,
    })
}

/// A human custom event of the erased visitor: its time, name and visit.
struct CustomEvent {
    timestamp: i64,
    name: String,
    session_id: i64,
}

/// Takes the visitor and its sessions out of the rollup rows they are
/// counted in, and its events (`names`, and `custom` with their visits'
/// values) out of the event-name rows.
async fn subtract_from_visitor_and_session_hours(
    db: &impl ConnectionTrait,
    found: &visitor::Model,
    sessions: &[tracked_session::Model],
    mut names: rollup::Deltas<ValueKey, ValueTally>,
    custom: &[CustomEvent],
) -> AppResult<()> {
    let mut writes = Writes::new(db.get_database_backend());
    rollup_store::add_visitors_removed(&mut writes, std::slice::from_ref(found));
    rollup_store::add_session_moves(&mut writes, rollup::Deltas::removed(sessions.iter().map(rollup::session_entry)));
    let values = value_rollups::visitor_values_of(found);
    let entries = sessions.iter().flat_map(|visit| value_rollups::visit_entries(visit, &values));
    entries.for_each(|entry| names.moved(Some(entry), None));
    let visits: HashMap<i64, &tracked_session::Model> = sessions.iter().map(|visit| (visit.id, visit)).collect();
    for event in custom {
        // A visit a retention purge took first took its events' counts with it.
        let Some(visit) = visits.get(&event.session_id) else { continue };
        let entries =
            value_rollups::name_by_entries(found.site_id, EventKind::CustomEvent, &event.name, event.timestamp, visit);
        entries.into_iter().for_each(|entry| names.moved(Some(entry), None));
    }
    value_rollups::add_value_moves(&mut writes, names);
    writes.send(db).await?;
    Ok(())
}

/// Takes the visitor's rows out of the per-value visitor counts.
async fn subtract_from_visitor_counts(db: &impl ConnectionTrait, values: &[visitor_value::Model]) -> AppResult<()> {
    let counted = values.iter().filter_map(|row| {
        let dimension = RolledDimension::of_code(row.dimension)?;
        Some((visitor_values::count_key(row.site_id, dimension, &row.value, row.last_hour), VisitorCount(1)))
    });
    let mut writes = Writes::new(db.get_database_backend());
    visitor_values::add_count_moves(&mut writes, rollup::Deltas::removed(counted));
    writes.send(db).await?;
    Ok(())
}

/// Takes the visitor's human events out of the hourly page rollups, in key
/// order as the writer adds them, so the two never wait on each other in a
/// cycle; answers what they take out of the event-name rows, and the custom
/// events, whose rows with their visits' values go with the visits.
async fn subtract_from_page_hours(
    db: &impl ConnectionTrait,
    site_id: i64,
    visitor_id: i64,
) -> AppResult<(rollup::Deltas<ValueKey, ValueTally>, Vec<CustomEvent>)> {
    let rows: Vec<(i64, String, String, String, i64)> = event::Entity::find()
        .select_only()
        .column(event::Column::Timestamp)
        .column(event::Column::Page)
        .column(event::Column::EventType)
        .column(event::Column::EventName)
        .column(event::Column::SessionId)
        .filter(event::Column::VisitorId.eq(visitor_id))
        .filter(event::Column::IsBot.eq(false))
        .order_by_asc(event::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let mut names = rollup::Deltas::new();
    let mut custom = Vec::new();
    let mut human = Vec::new();
    for (timestamp, page, event_type, name, session_id) in rows {
        let kind = if event_type == "pageview" { EventKind::Pageview } else { EventKind::CustomEvent };
        names.moved(Some(value_rollups::name_entry(site_id, kind, &name, timestamp)), None);
        if kind == EventKind::CustomEvent {
            custom.push(CustomEvent { timestamp, name: name.clone(), session_id });
        }
        human.push((timestamp, page, kind == EventKind::Pageview));
    }
    let counts =
        page_rollups::counted(human.iter().map(|(at, page, pageview)| (site_id, *at, page.as_str(), *pageview)));
    page_rollups::subtract(db, site_id, counts).await?;
    Ok((names, custom))
}
