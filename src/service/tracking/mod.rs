//! Recording visitor activity. The batch writer hands this module a batch of
//! write operations (collected events, identifies, clicks). In one transaction
//! it loads and locks what they touch (`load`), works out what changes
//! (`sessionize`, pure), and writes the result (`flush`).

mod clicks;
mod flush;
mod json_rows;
mod load;
pub(crate) mod rollup;
pub(crate) mod rollup_store;
mod sessionize;
mod slots;
mod triggers;
pub(crate) mod writes;

pub(crate) use sessionize::new_visitor;
pub use triggers::AlertTrigger;

use std::sync::Arc;

use sea_orm::{DatabaseConnection, DbErr, TransactionTrait};

use crate::enrich::{ClientInfo, Geo, source::Utm};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Pageview,
    CustomEvent,
    /// An engagement ping: extends the open session's time; not shown as an event.
    Ping,
}

impl EventKind {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "pageview" => Some(Self::Pageview),
            "custom_event" => Some(Self::CustomEvent),
            "ping" => Some(Self::Ping),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pageview => "pageview",
            Self::CustomEvent => "custom_event",
            Self::Ping => "ping",
        }
    }
}

/// Who sent a hit; shared by every event of one request.
#[derive(Debug, Clone)]
pub struct Client {
    /// Shared with the user-agent cache.
    pub info: Arc<ClientInfo>,
    pub geo: Geo,
}

/// A validated, enriched event, ready to be recorded.
#[derive(Debug, Clone)]
pub struct CollectedEvent {
    pub site_id: i64,
    pub tracker_vid: String,
    pub kind: EventKind,
    pub event_name: String,
    pub page: String,
    pub page_title: Option<String>,
    /// The referrer as the browser sent it.
    pub referrer: Option<String>,
    /// The host of the referrer when it is another site.
    pub external_referrer_host: Option<String>,
    pub utm: Utm,
    /// The `lt_click` id of the tracking-link click that brought the visitor.
    pub click_key: Option<String>,
    /// A JSON object.
    pub props: String,
    pub engaged_ms: i64,
    /// Whether the page matches one of the site's high-value patterns.
    pub high_value: bool,
    pub timestamp: i64,
    pub client: Arc<Client>,
}

/// An identify call, already validated and authorized.
#[derive(Debug, Clone)]
pub struct IdentifyCommand {
    pub site_id: i64,
    pub tracker_vid: String,
    pub user_id: Option<String>,
    pub email: Option<String>,
    pub name: Option<String>,
    pub company: Option<String>,
    pub phone: Option<String>,
    /// A JSON object.
    pub traits: String,
    pub source: String,
    pub source_detail: Option<String>,
    pub identified_at: i64,
}

/// A redirect through a tracking link.
#[derive(Debug, Clone)]
pub struct ClickCommand {
    /// The link as it was when clicked; its labels are copied onto the click.
    pub link: Arc<entity::link::Model>,
    /// The `lt_click` id added to the destination.
    pub click_key: String,
    pub referrer: Option<String>,
    /// Bots and HEAD requests are stored but do not count.
    pub is_bot: bool,
    /// Already added to the link's human clicks when it was let through (a
    /// capped link counts at the redirect, so `max_clicks` holds across instances).
    pub counted: bool,
    pub client: Arc<Client>,
    pub created_at: i64,
}

pub enum WriteOp {
    Events(Vec<CollectedEvent>),
    Identify(Box<IdentifyCommand>),
    Click(Box<ClickCommand>),
}

impl WriteOp {
    /// How many queue slots the operation takes. An identify takes one, so a
    /// full queue refuses it up front like an event (design §12).
    pub fn event_count(&self) -> usize {
        match self {
            WriteOp::Events(events) => events.len(),
            WriteOp::Identify(_) => 1,
            WriteOp::Click(_) => 1,
        }
    }
}

/// A stored event, for the live stream.
#[derive(Debug, Clone)]
pub struct Activity {
    pub site_id: i64,
    pub tracker_vid: String,
    pub identified_user_id: Option<String>,
    pub event_type: &'static str,
    pub page: String,
    pub timestamp: i64,
}

/// Splits rows into multi-row statements of power-of-two sizes up to 128
/// rows, so the database reuses eight prepared statements instead of
/// preparing one for every batch size, and a batch needs few statements.
pub(crate) fn statement_chunks<T>(rows: Vec<T>) -> impl Iterator<Item = Vec<T>> {
    const SIZES: [usize; 8] = [128, 64, 32, 16, 8, 4, 2, 1];
    let mut left = rows.len();
    let mut rows = rows.into_iter();
    std::iter::from_fn(move || {
        let size = SIZES.into_iter().find(|&size| size <= left)?;
        left -= size;
        Some(rows.by_ref().take(size).collect())
    })
}

/// What a committed batch stored.
pub struct Applied {
    /// The stored events, for the live stream.
    pub activities: Vec<Activity>,
    /// Alert deliveries the batch added to the outbox.
    pub alerts_queued: u64,
}

/// Applies the operations in order, in one transaction with the alerts they
/// fire, and answers what was stored once it has committed.
pub async fn apply(db: &DatabaseConnection, ops: &[&WriteOp]) -> Result<Applied, DbErr> {
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
    let activities = flush::write(&txn, &mut batch).await?;
    let alerts_queued = flush::queue_alerts(&txn, &batch, crate::time::now_ms()).await?;
    txn.commit().await?;
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
