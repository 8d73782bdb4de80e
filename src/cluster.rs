//! Signals between instances that share one PostgreSQL database, carried by
//! LISTEN/NOTIFY so no other server is needed: a changed link or site leaves
//! every instance's cache at once, and every instance's `liveVisitors`
//! subscribers see events stored by any of them, and a revoked credential or
//! membership closes the GraphQL sockets that used it on every instance. On
//! SQLite there is one process, and the same calls only reach local listeners.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, Statement, sqlx::postgres::PgListener};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};

use crate::{
    ingest::{link_cache::LinkCache, site_cache::SiteCache},
    service::tracking::{Activity, EventKind},
};

const CACHE_CHANNEL: &str = "leadtrail_cache";
const LIVE_CHANNEL: &str = "leadtrail_live";
const ACCESS_CHANNEL: &str = "leadtrail_access";
/// PostgreSQL refuses NOTIFY payloads of 8000 bytes or more.
const MAX_PAYLOAD: usize = 7_000;
/// Payloads sent in one statement.
const PAYLOADS_PER_STATEMENT: usize = 32;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum CacheSignal {
    Link { link_id: i64, site_id: i64 },
    Site { site_id: i64 },
    All,
}

/// Access that ended: open GraphQL sockets that rest on it close at once.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AccessRevoked {
    /// One sign-in session ended (sign-out).
    Session { session_id: i64 },
    /// Everything a person's sockets rest on may have changed: their
    /// password, a role, a membership, or the account itself.
    User { user_id: i64 },
    /// An API key was revoked.
    ApiKey { key_id: i64 },
    /// An org went, with its keys and memberships.
    Org { org_id: i64 },
    /// Signals may have been missed (the listener reconnected): every socket
    /// checks its credential again.
    Unknown,
}

/// Stored events as one instance tells the others: (site, visitor, user id,
/// event type, page, time).
#[derive(Serialize, Deserialize)]
struct LiveSignal {
    origin: u64,
    events: Vec<(i64, String, Option<String>, String, String, i64)>,
}

pub struct Cluster {
    db: DatabaseConnection,
    postgres: bool,
    /// Tells this instance's own live messages from the others'.
    origin: u64,
    sites: Arc<SiteCache>,
    links: Arc<LinkCache>,
    outgoing: mpsc::UnboundedSender<Vec<Activity>>,
    access: broadcast::Sender<AccessRevoked>,
}

impl Cluster {
    /// Starts listening (PostgreSQL only) and returns the handle the services
    /// signal through. `live` receives the events other instances stored.
    pub fn start(
        db: DatabaseConnection,
        sites: Arc<SiteCache>,
        links: Arc<LinkCache>,
        live: broadcast::Sender<Activity>,
    ) -> Arc<Self> {
        let postgres = db.get_database_backend() == DatabaseBackend::Postgres;
        let (outgoing, queued) = mpsc::unbounded_channel();
        let (access, _) = broadcast::channel(256);
        let cluster = Arc::new(Self { db, postgres, origin: rand::random(), sites, links, outgoing, access });
        if postgres {
            tokio::spawn(publish(cluster.db.clone(), cluster.origin, queued));
            tokio::spawn(listen(cluster.clone(), live));
        }
        cluster
    }

    /// A link was edited, turned off or deleted.
    pub async fn link_changed(&self, link_id: i64, site_id: i64) {
        self.signal(CacheSignal::Link { link_id, site_id }).await;
    }

    /// A site was edited or deleted, and with it its links.
    pub async fn site_changed(&self, site_id: i64) {
        self.signal(CacheSignal::Site { site_id }).await;
    }

    /// Many sites went at once (an org or an account was deleted).
    pub async fn all_changed(&self) {
        self.signal(CacheSignal::All).await;
    }

    /// Access ended; every instance's sockets hear it.
    pub async fn access_revoked(&self, revoked: AccessRevoked) {
        self.access.send(revoked).ok();
        if !self.postgres {
            return;
        }
        let Ok(payload) = serde_json::to_string(&revoked) else { return };
        // The change is committed; sockets elsewhere still check their
        // credential within `graphql::socket::RECHECK`.
        if let Err(err) = notify(&self.db, ACCESS_CHANNEL, &[payload]).await {
            tracing::warn!(error = %err, "could not tell the other instances about revoked access");
        }
    }

    /// Revoked access as this instance hears of it, its own included.
    pub fn access_signals(&self) -> broadcast::Receiver<AccessRevoked> {
        self.access.subscribe()
    }

    fn forget(&self, signal: CacheSignal) {
        match signal {
            CacheSignal::Link { link_id, site_id } => self.links.evict(Some(link_id), site_id),
            CacheSignal::Site { site_id } => {
                self.sites.evict(site_id);
                self.links.evict(None, site_id);
            }
            CacheSignal::All => {
                self.sites.clear();
                self.links.clear();
            }
        }
    }

    async fn signal(&self, signal: CacheSignal) {
        self.forget(signal);
        if !self.postgres {
            return;
        }
        let payload = match serde_json::to_string(&signal) {
            Ok(payload) => payload,
            Err(err) => return tracing::error!(error = %err, "cannot encode a cache signal"),
        };
        // The change itself is committed; without the signal the other
        // instances still refresh their entries within 30 seconds.
        if let Err(err) = notify(&self.db, CACHE_CHANNEL, &[payload]).await {
            tracing::warn!(error = %err, "could not tell the other instances about a change");
        }
    }

    /// Hands committed events to the other instances' live streams, off the
    /// writer's path.
    pub fn publish(&self, activities: &[Activity]) {
        if self.postgres && !activities.is_empty() {
            self.outgoing.send(activities.to_vec()).ok();
        }
    }
}

async fn notify(db: &DatabaseConnection, channel: &str, payloads: &[String]) -> Result<(), sea_orm::DbErr> {
    for group in payloads.chunks(PAYLOADS_PER_STATEMENT) {
        let calls: Vec<String> = (0..group.len()).map(|index| format!("pg_notify($1, ${})", index + 2)).collect();
        let mut values: Vec<sea_orm::Value> = vec![channel.into()];
        values.extend(group.iter().map(|payload| payload.as_str().into()));
        let sql = format!("SELECT {}", calls.join(", "));
        db.execute_raw(Statement::from_sql_and_values(DatabaseBackend::Postgres, sql, values)).await?;
    }
    Ok(())
}

/// Sends what the writer committed, a few statements per round however
/// busy it is: everything queued meanwhile goes together.
async fn publish(db: DatabaseConnection, origin: u64, mut queued: mpsc::UnboundedReceiver<Vec<Activity>>) {
    while let Some(first) = queued.recv().await {
        let mut activities = first;
        while let Ok(more) = queued.try_recv() {
            activities.extend(more);
        }
        let payloads = live_payloads(origin, &activities);
        if let Err(err) = notify(&db, LIVE_CHANNEL, &payloads).await {
            tracing::warn!(error = %err, "could not share live events with the other instances");
        }
    }
}

/// Splits the events into payloads under PostgreSQL's size limit.
fn live_payloads(origin: u64, activities: &[Activity]) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut signal = LiveSignal { origin, events: Vec::new() };
    let mut size = 0;
    for activity in activities {
        let mut entry = (
            activity.site_id,
            activity.tracker_vid.clone(),
            activity.identified_user_id.clone(),
            activity.event_type.to_owned(),
            activity.page.clone(),
            activity.timestamp,
        );
        // Measured as sent: escaping can make a page up to six times longer.
        let mut entry_size = serialized_len(&entry);
        if entry_size > MAX_PAYLOAD {
            // A shortened page still shows the event on the other instances.
            entry.4 = entry.4.chars().take(256).collect();
            entry_size = serialized_len(&entry);
            if entry_size > MAX_PAYLOAD {
                continue;
            }
        }
        if size + entry_size > MAX_PAYLOAD && !signal.events.is_empty() {
            payloads.extend(serde_json::to_string(&signal).ok());
            signal.events.clear();
            size = 0;
        }
        size += entry_size;
        signal.events.push(entry);
    }
    if !signal.events.is_empty() {
        payloads.extend(serde_json::to_string(&signal).ok());
    }
    payloads
}

fn serialized_len(entry: &impl Serialize) -> usize {
    // Room for the comma between entries.
    serde_json::to_string(entry).map_or(usize::MAX, |json| json.len() + 1)
}

/// Applies the other instances' signals until the database closes. After a
/// lost connection every cache is dropped, since signals may have been missed.
async fn listen(cluster: Arc<Cluster>, live: broadcast::Sender<Activity>) {
    let pool = cluster.db.get_postgres_connection_pool().clone();
    while !pool.is_closed() {
        let started = Instant::now();
        let mut listener = match PgListener::connect_with(&pool).await {
            Ok(listener) => listener,
            Err(err) => {
                tracing::warn!(error = %err, "cannot listen for cluster signals; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if let Err(err) = listener.listen_all([CACHE_CHANNEL, LIVE_CHANNEL, ACCESS_CHANNEL]).await {
            tracing::warn!(error = %err, "cannot listen for cluster signals; retrying");
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        cluster.forget(CacheSignal::All);
        cluster.access.send(AccessRevoked::Unknown).ok();
        loop {
            match listener.try_recv().await {
                Ok(Some(notification)) => match notification.channel() {
                    CACHE_CHANNEL => match serde_json::from_str(notification.payload()) {
                        Ok(signal) => cluster.forget(signal),
                        Err(_) => cluster.forget(CacheSignal::All),
                    },
                    ACCESS_CHANNEL => {
                        let revoked = serde_json::from_str(notification.payload()).unwrap_or(AccessRevoked::Unknown);
                        cluster.access.send(revoked).ok();
                    }
                    _ => relay_live(&cluster, &live, notification.payload()),
                },
                // The connection dropped and will be made again: anything
                // sent meanwhile is lost, so nothing cached can be trusted.
                Ok(None) => {
                    cluster.forget(CacheSignal::All);
                    cluster.access.send(AccessRevoked::Unknown).ok();
                }
                Err(err) => {
                    if !pool.is_closed() {
                        tracing::warn!(error = %err, "cluster signals interrupted; listening again");
                    }
                    break;
                }
            }
        }
        if started.elapsed() < Duration::from_secs(1) {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

fn relay_live(cluster: &Cluster, live: &broadcast::Sender<Activity>, payload: &str) {
    let Ok(signal) = serde_json::from_str::<LiveSignal>(payload) else {
        return;
    };
    if signal.origin == cluster.origin {
        return;
    }
    for (site_id, tracker_vid, identified_user_id, event_type, page, timestamp) in signal.events {
        let Some(kind) = EventKind::parse(&event_type) else { continue };
        live.send(Activity { site_id, tracker_vid, identified_user_id, event_type: kind.as_str(), page, timestamp })
            .ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(page: String) -> Activity {
        Activity {
            site_id: 1,
            tracker_vid: "v".repeat(36),
            identified_user_id: None,
            event_type: "pageview",
            page,
            timestamp: 1,
        }
    }

    #[test]
    fn live_payloads_stay_under_the_notify_limit_and_keep_every_event() {
        // (events, page): control characters are escaped to six bytes each.
        let cases = [
            (0, "/".to_owned()),
            (1, "/".to_owned()),
            (500, "/".repeat(40)),
            (50, "/".repeat(2000)),
            (3, "/".repeat(5000)),
            (20, "\u{1}".repeat(2000)),
            (20, "é".repeat(1500)),
        ];
        for (count, page) in cases {
            let activities: Vec<Activity> = (0..count).map(|_| activity(page.clone())).collect();
            let payloads = live_payloads(7, &activities);
            assert!(payloads.iter().all(|p| p.len() < 8000), "{count} x {page:.10}");
            let signals: Vec<LiveSignal> = payloads.iter().map(|p| serde_json::from_str(p).unwrap()).collect();
            let pages: Vec<&String> = signals.iter().flat_map(|s| s.events.iter().map(|e| &e.4)).collect();
            assert_eq!(pages.len(), count, "every event is sent: {count} x {page:.10}");
            assert!(pages.iter().all(|sent| page.starts_with(sent.as_str())), "a page is sent whole or shortened");
        }
    }
}
