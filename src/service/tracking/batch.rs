//! One batch of the writer, applied: the operations in order, in one
//! transaction with the alerts they fire.

use std::collections::BTreeMap;

use sea_orm::{DatabaseConnection, DbErr, TransactionTrait};

use crate::service::credit;

use super::{
    Activity, WriteOp, clicks, flush, load, quiet_sites::QuietSites, sessionize, value_batch,
    visitor_values::WrittenValues, writes,
};

/// What a committed batch stored.
pub struct Applied {
    /// The stored events, for the live stream.
    pub activities: Vec<Activity>,
    /// Alert deliveries the batch added to the outbox.
    pub alerts_queued: u64,
}

/// Applies the operations in order, in one transaction with the alerts they
/// fire, and answers what was stored once it has committed.
/// `quiet` is the writer's knowledge of sites no account alert can fire on,
/// `written` of the visitor rows it has brought up to their hour.
pub async fn apply(
    db: &DatabaseConnection,
    ops: &[&WriteOp],
    quiet: &QuietSites,
    written: &WrittenValues,
) -> Result<Applied, DbErr> {
    if ops.iter().all(|op| matches!(op, WriteOp::Click(_))) {
        return apply_clicks(db, ops).await;
    }
    let txn = db.begin().await?;
    let mut batch = load::load(&txn, ops).await?;
    for op in ops {
        match op {
            WriteOp::Events(events) => events.iter().for_each(|event| batch.record(event)),
            WriteOp::Identify(command) => batch.identify(command),
            WriteOp::Click(click) => batch.click(click),
        }
    }
    let activities = flush::write(&txn, &mut batch, written).await?;
    let now = crate::time::now_ms();
    flush::tie_conversions(&txn, &batch, now).await?;
    for (site_id, earliest) in earliest_by_site(&batch) {
        credit::cache::forget_from(&txn, site_id, earliest, now).await?;
    }
    let alerts_queued = flush::queue_alerts(&txn, &batch, quiet, now).await?;
    txn.commit().await?;
    value_batch::remember(written, &batch);
    Ok(Applied { activities, alerts_queued })
}

/// The earliest instant the batch wrote about, per site: its events, the
/// visits it opened or grew (from where they began, or began before), its
/// identifications. The attribution days kept from there on are forgotten,
/// site by site in order, so two instances take the sites' rows alike.
fn earliest_by_site(batch: &sessionize::Batch<'_>) -> BTreeMap<i64, i64> {
    let mut earliest: BTreeMap<i64, i64> = BTreeMap::new();
    let mut note = |site_id: i64, at: i64| {
        let seen = earliest.entry(site_id).or_insert(at);
        *seen = (*seen).min(at);
    };
    for pending in &batch.events {
        note(pending.event.site_id, pending.event.timestamp);
    }
    for slot in batch.sessions.iter().filter(|slot| slot.dirty || slot.is_new()) {
        note(slot.model.site_id, slot.stored_start.unwrap_or(slot.model.started_at).min(slot.model.started_at));
    }
    for pending in &batch.identities {
        note(pending.command.site_id, pending.command.identified_at);
    }
    earliest
}

/// A batch of redirects only: a click reads nothing and fires no alert, so
/// the batch is its writes alone, which on SQLite go in one call with their
/// `BEGIN` and `COMMIT`. This is the redirect's hot path.
async fn apply_clicks(db: &DatabaseConnection, ops: &[&WriteOp]) -> Result<Applied, DbErr> {
    let mut batch = sessionize::Batch::new();
    for op in ops {
        if let WriteOp::Click(click) = op {
            batch.click(click);
        }
    }
    let mut writes = writes::Writes::new(db.get_database_backend());
    clicks::write_clicks(&mut writes, &batch);
    writes.commit(db).await?;
    Ok(Applied { activities: Vec::new(), alerts_queued: 0 })
}
