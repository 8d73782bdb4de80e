//! Shared application state.

use std::{ops::Deref, sync::Arc};

use sea_orm::DatabaseConnection;
use tokio::sync::broadcast;

use crate::{
    auth::rate_limit::{CredentialLimiter, KeyedLimiter, ReadBudget},
    cluster::Cluster,
    config::Config,
    db::checkpoint::Checkpoints,
    enrich::GeoIp,
    metrics::Metrics,
    service::{
        alerts::due::AlertsDue,
        delivery::Delivery,
        explore::visit_copy::{Loader, VisitCopies},
        tracking::{
            Activity, link_cache::LinkCache, live::LiveStream, quiet_sites::QuietSites, salt_cache::SaltCache,
            site_cache::SiteCache, writer::Writer,
        },
    },
    time::Clock,
    webhook::WebhookClient,
};

/// Invitations one person may send per hour: enough to bring a team in,
/// too few to spray addresses.
pub const INVITATIONS_PER_HOUR: u32 = 30;

#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub db: DatabaseConnection,
    /// Where GraphQL reads go (`db::read_pool`); `db` itself on PostgreSQL.
    pub reads: DatabaseConnection,
    /// On PostgreSQL, turns for reads (POSTGRES_READ_CONNECTIONS at once), so
    /// long reads leave a CPU to collect's writer and the short requests, as
    /// SQLite's few read connections do. `None` on SQLite.
    pub read_turns: Option<Arc<tokio::sync::Semaphore>>,
    pub config: Config,
    pub credential_limiter: CredentialLimiter,
    /// Sign-in attempts per account, whatever address they come from.
    pub sign_in_limiter: KeyedLimiter<String>,
    /// Reset and verification emails per address, whatever address asks:
    /// nobody can flood someone's inbox through Leadtrail.
    pub email_request_limiter: KeyedLimiter<String>,
    /// Invitations each person may send per hour.
    pub invite_limiter: KeyedLimiter<i64>,
    /// GraphQL work per caller and minute (`graphql::cost`).
    pub read_budget: ReadBudget,
    pub collect_limiter: KeyedLimiter<std::net::IpAddr>,
    /// Caps one site's collect traffic, so a flood aimed at one site cannot starve the others.
    pub site_collect_limiter: KeyedLimiter<i64>,
    /// Every stored visitor event, for the `liveVisitors` subscription.
    pub live: broadcast::Sender<Activity>,
    pub writer: Writer,
    pub geoip: Option<Arc<GeoIp>>,
    /// The ASN database (`ASN_DB_PATH`), reloaded when it changes.
    pub asn: Option<Arc<crate::enrich::network::AsnDb>>,
    pub salts: SaltCache,
    /// Each site's closed visits in memory, for filtered Explore queries.
    pub visit_copies: Arc<VisitCopies>,
    /// Sites as the collect endpoint sees them.
    pub sites: Arc<SiteCache>,
    /// Short links as the redirect sees them.
    pub links: Arc<LinkCache>,
    /// Signals to and from the other instances: changes, revoked access.
    pub cluster: Arc<Cluster>,
    /// What sending webhooks and alerts needs.
    pub delivery: Delivery,
    pub metrics: Metrics,
    /// The database's latest answer to the background ping (`/health/ready`).
    pub readiness: Arc<crate::db::readiness::Readiness>,
    /// BASE_URL's origin, which cookie-authenticated writes must come from.
    pub base_origin: String,
}

impl AppState {
    /// Opens the GeoIP database if one is configured and starts the batch
    /// writer; call it inside the Tokio runtime.
    pub fn new(mut db: DatabaseConnection, config: Config) -> Result<Self, String> {
        let metrics = Metrics::default();
        let mut reads = crate::db::read_pool(
            &db,
            &config.database_url,
            config.sqlite_synchronous,
            config.sqlite_read_connections(),
        )
        .map_err(|err| format!("cannot open the read connections: {err}"))?;
        // Explore's copies load on a connection of their own (`visit_copy::Loader`).
        let mut copy_loads = crate::db::read_pool(&db, &config.database_url, config.sqlite_synchronous, 1)
            .map_err(|err| format!("cannot open the copy loads' connection: {err}"))?;
        for pool in [&mut db, &mut reads, &mut copy_loads] {
            let statements = metrics.db_statements.clone();
            pool.set_metric_callback(move |_| {
                statements.inc();
            });
        }
        let visit_copies = Arc::new(VisitCopies::new(Loader {
            pool: copy_loads,
            wait: std::time::Duration::from_millis(config.explore_copy_wait_ms),
            loads: metrics.copy_loads.clone(),
            tail_reads: metrics.copy_tail_reads.clone(),
        }));
        let read_turns = (db.get_database_backend() == sea_orm::DatabaseBackend::Postgres).then(|| {
            let turns = usize::try_from(config.postgres_read_connections()).unwrap_or(1);
            Arc::new(tokio::sync::Semaphore::new(turns))
        });
        let geoip = match &config.geoip_db_path {
            Some(path) => {
                Some(Arc::new(GeoIp::open(path).map_err(|err| format!("cannot open GEOIP_DB_PATH {path}: {err}"))?))
            }
            None => None,
        };
        let asn = match &config.asn_db_path {
            Some(setting) if !setting.trim().is_empty() => {
                let asn = crate::enrich::network::AsnDb::open(setting)
                    .map_err(|err| format!("cannot open ASN_DB_PATH {setting}: {err}"))?;
                asn.watch();
                Some(asn)
            }
            _ => None,
        };
        let webhook_timeout = std::time::Duration::from_secs(config.webhook_timeout_secs.max(1));
        let webhooks = WebhookClient::new(webhook_timeout, config.webhook_unsafe_allow_any_target)?;
        let alerts_due = AlertsDue::default();
        let (live, _) = broadcast::channel(1024);
        let sites = Arc::new(SiteCache::default());
        let links = Arc::new(LinkCache::default());
        let cluster = Cluster::start(db.clone());
        // The caches forget what changed, here or on another instance.
        let quiet_sites = Arc::new(QuietSites::default());
        let (site_cache, link_cache, quiet) = (sites.clone(), links.clone(), quiet_sites.clone());
        cluster.on_change(move |change| {
            site_cache.forget(change);
            link_cache.forget(change);
            quiet.forget(change);
        });
        let checkpoints = Checkpoints::start(
            &db,
            &config.database_url,
            config.sqlite_synchronous,
            metrics.sqlite_checkpoints.clone(),
        );
        let writer = Writer::spawn(
            db.clone(),
            config.collect_queue_capacity,
            LiveStream::connect(cluster.clone(), live.clone()),
            alerts_due.clone(),
            checkpoints,
            quiet_sites,
        );
        let smtp_timeout = std::time::Duration::from_secs(config.smtp_timeout_secs.max(1));
        let mailer = crate::email::Mailer::from_settings(
            config.smtp_url.as_deref(),
            config.email_from.as_deref(),
            smtp_timeout,
        )?;
        let delivery = Delivery {
            webhooks,
            base_url: config.base_url(),
            allow_any_webhook_target: config.webhook_unsafe_allow_any_target,
            webhook_timeout,
            clock: Clock::default(),
            alerts_due,
            mailer,
            smtp_timeout,
            email_due: Default::default(),
        };
        Ok(Self(Arc::new(Shared {
            credential_limiter: KeyedLimiter::per_minute(config.auth_rate_limit_per_minute),
            sign_in_limiter: KeyedLimiter::per_minute(config.auth_account_rate_limit_per_minute),
            email_request_limiter: KeyedLimiter::per_minute(config.auth_account_rate_limit_per_minute),
            invite_limiter: KeyedLimiter::per_hour(INVITATIONS_PER_HOUR),
            read_budget: ReadBudget::per_minute(config.query_cost_per_minute()),
            collect_limiter: KeyedLimiter::per_second(config.collect_rate_limit_per_second),
            site_collect_limiter: KeyedLimiter::per_second(config.collect_site_rate_limit_per_second),
            base_origin: config.base_origin(),
            readiness: crate::db::readiness::Readiness::start(db.clone()),
            db,
            read_turns,
            reads,
            config,
            live,
            writer,
            geoip,
            asn,
            salts: SaltCache::default(),
            visit_copies,
            sites,
            links,
            cluster,
            delivery,
            metrics,
        })))
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
