//! Signals between instances that share one PostgreSQL database, carried by
//! LISTEN/NOTIFY so no other server is needed. The bus knows no cache and no
//! stream: caches register with `on_change` and forget what changed, open
//! sockets listen to `access_signals`, and the live stream sends and hears
//! its own messages on `LIVE` (`service::tracking::live`). On SQLite there is
//! one process, and the same calls only reach this process's listeners.

use std::{
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, Statement, sqlx::postgres::PgListener};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};

const CHANGE_CHANNEL: &str = "leadtrail_cache";
const ACCESS_CHANNEL: &str = "leadtrail_access";
/// The channel of the live stream's messages, which only that stream reads.
pub const LIVE: &str = "leadtrail_live";
/// PostgreSQL refuses NOTIFY payloads of 8000 bytes or more.
pub const MAX_PAYLOAD: usize = 7_000;
/// Payloads sent in one statement.
const PAYLOADS_PER_STATEMENT: usize = 32;

/// Something cached on every instance changed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Changed {
    /// A link was edited, turned off or deleted.
    Link { link_id: i64, site_id: i64 },
    /// A site was edited or deleted, and with it its links.
    Site { site_id: i64 },
    /// A site's alert destination was created or changed (it may fire now
    /// where nothing could before).
    Alerts { site_id: i64 },
    /// Many things at once (an org or an account went), or signals may have
    /// been missed (the listener reconnected): nothing cached can be trusted.
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

type ChangeListener = Box<dyn Fn(Changed) + Send + Sync>;
type LiveListener = Box<dyn Fn(&str) + Send + Sync>;

pub struct Cluster {
    db: DatabaseConnection,
    postgres: bool,
    /// Tells this instance's own messages from the others'.
    origin: u64,
    change_listeners: RwLock<Vec<ChangeListener>>,
    live_listener: RwLock<Option<LiveListener>>,
    outgoing: mpsc::UnboundedSender<(&'static str, Vec<String>)>,
    access: broadcast::Sender<AccessRevoked>,
}

impl Cluster {
    /// Starts listening (PostgreSQL only) and returns the handle signals go
    /// through.
    pub fn start(db: DatabaseConnection) -> Arc<Self> {
        let postgres = db.get_database_backend() == DatabaseBackend::Postgres;
        let (outgoing, queued) = mpsc::unbounded_channel();
        let (access, _) = broadcast::channel(256);
        let cluster = Arc::new(Self {
            db,
            postgres,
            origin: rand::random(),
            change_listeners: RwLock::default(),
            live_listener: RwLock::default(),
            outgoing,
            access,
        });
        if postgres {
            tokio::spawn(send_queued(cluster.db.clone(), queued));
            tokio::spawn(listen(cluster.clone()));
        }
        cluster
    }

    /// This instance's mark on the messages it sends.
    pub fn origin(&self) -> u64 {
        self.origin
    }

    /// Whether other instances can be there to hear.
    pub fn shared(&self) -> bool {
        self.postgres
    }

    /// Calls `listener` with every change, this instance's and the others'.
    pub fn on_change(&self, listener: impl Fn(Changed) + Send + Sync + 'static) {
        if let Ok(mut listeners) = self.change_listeners.write() {
            listeners.push(Box::new(listener));
        }
    }

    /// Calls `listener` with every message on `LIVE`, from any instance.
    pub fn on_live(&self, listener: impl Fn(&str) + Send + Sync + 'static) {
        if let Ok(mut slot) = self.live_listener.write() {
            *slot = Some(Box::new(listener));
        }
    }

    /// Something changed: this instance's listeners hear it at once, the
    /// others' within moments.
    pub async fn changed(&self, change: Changed) {
        self.tell_listeners(change);
        if !self.postgres {
            return;
        }
        let Ok(payload) = serde_json::to_string(&change) else { return };
        // The change itself is committed; without the signal the other
        // instances still refresh their entries within 30 seconds.
        if let Err(err) = notify(&self.db, CHANGE_CHANNEL, &[payload]).await {
            tracing::warn!(error = %err, "could not tell the other instances about a change");
        }
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

    /// Sends messages on `LIVE` to the other instances, off the caller's
    /// path: everything queued while one statement runs goes in the next.
    pub fn send_live(&self, payloads: Vec<String>) {
        if self.postgres && !payloads.is_empty() {
            self.outgoing.send((LIVE, payloads)).ok();
        }
    }

    fn tell_listeners(&self, change: Changed) {
        if let Ok(listeners) = self.change_listeners.read() {
            listeners.iter().for_each(|listener| listener(change));
        }
    }

    fn hear_live(&self, payload: &str) {
        if let Ok(slot) = self.live_listener.read()
            && let Some(listener) = slot.as_ref()
        {
            listener(payload);
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

/// Sends what was queued, a few statements per round however busy the
/// senders are: everything queued meanwhile goes together.
async fn send_queued(db: DatabaseConnection, mut queued: mpsc::UnboundedReceiver<(&'static str, Vec<String>)>) {
    while let Some((channel, first)) = queued.recv().await {
        let mut payloads = first;
        while let Ok((_, more)) = queued.try_recv() {
            payloads.extend(more);
        }
        if let Err(err) = notify(&db, channel, &payloads).await {
            tracing::warn!(error = %err, "could not send messages to the other instances");
        }
    }
}

/// Hands the other instances' signals to this one's listeners until the
/// database closes. After a lost connection every listener hears that
/// everything may have changed, since signals may have been missed.
async fn listen(cluster: Arc<Cluster>) {
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
        if let Err(err) = listener.listen_all([CHANGE_CHANNEL, LIVE, ACCESS_CHANNEL]).await {
            tracing::warn!(error = %err, "cannot listen for cluster signals; retrying");
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        cluster.tell_listeners(Changed::All);
        cluster.access.send(AccessRevoked::Unknown).ok();
        loop {
            match listener.try_recv().await {
                Ok(Some(notification)) => match notification.channel() {
                    CHANGE_CHANNEL => {
                        cluster.tell_listeners(serde_json::from_str(notification.payload()).unwrap_or(Changed::All));
                    }
                    ACCESS_CHANNEL => {
                        let revoked = serde_json::from_str(notification.payload()).unwrap_or(AccessRevoked::Unknown);
                        cluster.access.send(revoked).ok();
                    }
                    _ => cluster.hear_live(notification.payload()),
                },
                // The connection dropped and will be made again: anything
                // sent meanwhile is lost, so nothing cached can be trusted.
                Ok(None) => {
                    cluster.tell_listeners(Changed::All);
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
