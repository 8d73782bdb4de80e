//! One batch of the writer, applied: the operations in order, in one
//! transaction with the alerts they fire.

use sea_orm::{DatabaseConnection, DbErr, TransactionTrait};

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
    let alerts_queued = flush::queue_alerts(&txn, &batch, quiet, now).await?;
    txn.commit().await?;
    value_batch::remember(written, &batch);
    Ok(Applied { activities, alerts_queued })
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
