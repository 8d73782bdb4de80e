//! Runtime configuration: every setting is a CLI flag with an environment variable.

use std::net::IpAddr;

use clap::{Args, ValueEnum};

/// The most one GraphQL operation may cost (`graphql::cost`): lists count
/// their rows, windows their days. A page of 500 visitors with the list's
/// fields, one full profile, or eight 30-day reports fit.
pub const MAX_OPERATION_COST: usize = 25_000;

#[derive(Debug, Clone, Args)]
pub struct Config {
    /// Database URL: `sqlite://path?mode=rwc` or `postgres://user@host/db`.
    #[arg(long, global = true, env = "DATABASE_URL", default_value = "sqlite://leadtrail.db?mode=rwc")]
    pub database_url: String,

    #[arg(long, global = true, env = "HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,

    #[arg(long, global = true, env = "PORT", default_value_t = 8080)]
    pub port: u16,

    /// Public URL of this service ({base_url} in the spec); defaults to
    /// http://localhost:PORT, so http://localhost:8080.
    #[arg(long, global = true, env = "BASE_URL")]
    pub base_url: Option<String>,

    /// Base of short links ({short_link_base}); defaults to BASE_URL.
    #[arg(long, global = true, env = "SHORT_LINK_BASE")]
    pub short_link_base: Option<String>,

    /// Site used by identify and webhook calls that give no siteId.
    #[arg(long, global = true, env = "DEFAULT_SITE_ID", default_value_t = 4)]
    pub default_site_id: i64,

    #[arg(long, global = true, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// A GeoIP2/GeoLite2 City database (.mmdb) for IP geolocation.
    #[arg(long, global = true, env = "GEOIP_DB_PATH")]
    pub geoip_db_path: Option<String>,

    /// An ASN database for the network behind each visit: a MaxMind-format
    /// `.mmdb` or ip-location-db's `start,end,asn,org` CSV; several files
    /// (IPv4 and IPv6) separated by commas. Reloaded on change and SIGHUP.
    #[arg(long, global = true, env = "ASN_DB_PATH")]
    pub asn_db_path: Option<String>,

    /// Which proxy's client-IP and geo headers to believe.
    #[arg(long, global = true, env = "TRUST_PROXY", value_enum, default_value_t = TrustProxy::None)]
    pub trust_proxy: TrustProxy,

    /// Peers allowed to speak for TRUST_PROXY (comma-separated CIDRs or
    /// addresses, e.g. your load balancer, or Cloudflare's published ranges).
    /// Empty: any peer, which is only safe when nothing else can reach the port.
    #[arg(long, global = true, env = "TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_net)]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    #[arg(long, global = true, env = "DISABLE_REGISTRATION", default_value_t = false)]
    pub disable_registration: bool,

    #[arg(long, global = true, env = "MAX_SITES_PER_ACCOUNT", default_value_t = 10)]
    pub max_sites_per_account: u32,

    #[arg(long, global = true, env = "GRAPHQL_INTROSPECTION", default_value_t = true, action = clap::ArgAction::Set)]
    pub graphql_introspection: bool,

    #[arg(long, global = true, env = "WEBHOOK_TIMEOUT_SECS", default_value_t = 10)]
    pub webhook_timeout_secs: u64,

    /// Requests per client IP per minute on each credential endpoint.
    #[arg(long, global = true, env = "AUTH_RATE_LIMIT_PER_MINUTE", default_value_t = 10)]
    pub auth_rate_limit_per_minute: u32,

    /// GraphQL work each caller (user, API key, or address when signed out)
    /// may have run per minute, in the complexity points of a query's cost;
    /// REST routes and pages count too. At least the one-operation maximum.
    #[arg(long, global = true, env = "QUERY_COST_PER_MINUTE", default_value_t = 300_000)]
    pub query_cost_per_minute: u32,

    /// How long after a site's Explore copy began to load a query waits for
    /// it before it reads the rows instead (the copy goes on loading).
    #[arg(long, global = true, env = "EXPLORE_COPY_WAIT_MS", default_value_t = 500)]
    pub explore_copy_wait_ms: u64,

    /// Sign-in attempts per account (email) per minute, from all addresses together.
    #[arg(long, global = true, env = "AUTH_ACCOUNT_RATE_LIMIT_PER_MINUTE", default_value_t = 10)]
    pub auth_account_rate_limit_per_minute: u32,

    /// Collect requests per client IP per second.
    #[arg(long, global = true, env = "COLLECT_RATE_LIMIT_PER_SECOND", default_value_t = 200)]
    pub collect_rate_limit_per_second: u32,

    /// Collect requests per site per second, from all clients together.
    #[arg(long, global = true, env = "COLLECT_SITE_RATE_LIMIT_PER_SECOND", default_value_t = 2000)]
    pub collect_site_rate_limit_per_second: u32,

    /// Events the write queue holds before collect answers 503.
    #[arg(long, global = true, env = "COLLECT_QUEUE_CAPACITY", default_value_t = 10_000)]
    pub collect_queue_capacity: usize,

    /// SQLite's `synchronous` setting: `normal` survives a process crash,
    /// `full` also a power loss, at some write speed. PostgreSQL ignores it.
    #[arg(long, global = true, env = "SQLITE_SYNCHRONOUS", value_enum, default_value_t = SqliteSync::Normal)]
    pub sqlite_synchronous: SqliteSync,

    /// When set, `/metrics` answers only `Authorization: Bearer <this>`.
    #[arg(long, global = true, env = "METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,

    /// When set, `/metrics` is served on this address only (for example
    /// 127.0.0.1:9090), not on the public port.
    #[arg(long, global = true, env = "METRICS_ADDR")]
    pub metrics_addr: Option<std::net::SocketAddr>,

    /// Seconds a client has from the first byte of a request to the end of
    /// its head; then 408 and the connection closes.
    #[arg(long, global = true, env = "HEADER_TIMEOUT_SECS", default_value_t = 10)]
    pub header_timeout_secs: u64,

    /// Seconds a client has to send a request's whole body after its head; then 408.
    #[arg(long, global = true, env = "BODY_TIMEOUT_SECS", default_value_t = 30)]
    pub body_timeout_secs: u64,

    /// Seconds a kept-alive connection may sit without a request (or an
    /// answer go unread) before it is closed.
    #[arg(long, global = true, env = "IDLE_TIMEOUT_SECS", default_value_t = 60)]
    pub idle_timeout_secs: u64,

    /// Open connections the server holds at once (WebSockets included);
    /// more wait in the listen backlog.
    #[arg(long, global = true, env = "MAX_CONNECTIONS", default_value_t = 8192)]
    pub max_connections: usize,

    /// Seconds a GraphQL WebSocket stays open before the server closes it
    /// (code 4000) and the client reconnects and authenticates afresh.
    #[arg(long, global = true, env = "WS_MAX_LIFETIME_SECS", default_value_t = 3600)]
    pub ws_max_lifetime_secs: u64,

    /// SQLite connections that serve reads beside the one that writes;
    /// default: one fewer than the CPUs, at least one. PostgreSQL ignores it.
    #[arg(long, global = true, env = "SQLITE_READ_CONNECTIONS")]
    pub sqlite_read_connections: Option<u32>,

    /// Reads that may run on PostgreSQL at once, from this instance; more
    /// wait their turn. Default: one fewer than the CPUs, at least one.
    /// SQLite ignores it (its read connections are the cap).
    #[arg(long, global = true, env = "POSTGRES_READ_CONNECTIONS")]
    pub postgres_read_connections: Option<u32>,

    /// Allow webhook targets on private and loopback addresses and any host.
    /// For local development and tests only.
    /// Where email goes out: `smtp://user:pass@host:587` (STARTTLS when the
    /// server offers it) or `smtps://user:pass@host:465`. Unset: no email.
    #[arg(long, global = true, env = "SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,

    /// The sender of every email, e.g. `Leadtrail <leadtrail@example.com>`.
    #[arg(long, global = true, env = "EMAIL_FROM")]
    pub email_from: Option<String>,

    /// How long one SMTP exchange may take before it is retried later.
    #[arg(long, global = true, env = "SMTP_TIMEOUT_SECS", default_value_t = 20)]
    pub smtp_timeout_secs: u64,

    #[arg(long, global = true, env = "WEBHOOK_UNSAFE_ALLOW_ANY_TARGET", default_value_t = false)]
    pub webhook_unsafe_allow_any_target: bool,
}

/// Reads at once by default: all the CPUs but one, which stays free for
/// collect's writer and the requests that take no time.
fn all_cpus_but_one() -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    u32::try_from(cpus.saturating_sub(1)).unwrap_or(u32::MAX)
}

/// A network (`10.0.0.0/8`) or one address (`10.0.0.7`).
fn parse_net(value: &str) -> Result<ipnet::IpNet, String> {
    let value = value.trim();
    value
        .parse::<ipnet::IpNet>()
        .or_else(|_| value.parse::<IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{value} is not an address or a CIDR network"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SqliteSync {
    Normal,
    Full,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrustProxy {
    None,
    Cloudflare,
    Vercel,
    Xff,
}

impl Config {
    /// The configuration from environment variables and defaults alone (no flags).
    pub fn from_env() -> Result<Self, clap::Error> {
        use clap::{Command, FromArgMatches};
        let matches = Config::augment_args(Command::new("leadtrail"))
            .no_binary_name(true)
            .try_get_matches_from(Vec::<String>::new())?;
        Config::from_arg_matches(&matches)
    }

    /// The defaults alone, whatever the environment says: tests and benchmarks
    /// start from this, so a developer's `TRUST_PROXY` or `GEOIP_DB_PATH`
    /// cannot change their results.
    pub fn defaults() -> Result<Self, clap::Error> {
        use clap::{Command, FromArgMatches};
        let matches = Config::augment_args(Command::new("leadtrail"))
            .mut_args(|arg| arg.env(None))
            .no_binary_name(true)
            .try_get_matches_from(Vec::<String>::new())?;
        Config::from_arg_matches(&matches)
    }

    pub fn base_url(&self) -> String {
        match &self.base_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://localhost:{}", self.port),
        }
    }

    pub fn short_link_base(&self) -> String {
        match &self.short_link_base {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => self.base_url(),
        }
    }

    /// The origin (`scheme://host[:port]`) of BASE_URL, for the CSRF check.
    pub fn base_origin(&self) -> String {
        let base = self.base_url();
        url::Url::parse(&base).map(|url| url.origin().ascii_serialization()).unwrap_or(base)
    }

    /// QUERY_COST_PER_MINUTE, raised to what one operation may cost, so
    /// every operation the limits accept can run.
    pub fn query_cost_per_minute(&self) -> u32 {
        self.query_cost_per_minute.max(u32::try_from(MAX_OPERATION_COST).unwrap_or(u32::MAX))
    }

    pub fn sqlite_read_connections(&self) -> u32 {
        self.sqlite_read_connections.unwrap_or_else(all_cpus_but_one).max(1)
    }

    pub fn postgres_read_connections(&self) -> u32 {
        self.postgres_read_connections.unwrap_or_else(all_cpus_but_one).max(1)
    }

    pub fn secure_cookies(&self) -> bool {
        self.base_url().starts_with("https://")
    }
}
