//! Shared setup for the benchmarks: a real server on loopback over a fresh
//! database, and a signed-in account with one site.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]
#![allow(dead_code)]

use std::time::Duration;

use leadtrail::{config::Config, db, state::AppState};
use sea_orm::{ConnectionTrait, Database};
use serde_json::{Value, json};

pub struct Server {
    pub base: String,
    pub state: AppState,
    pub cookie: String,
    pub site: i64,
    pub backend: &'static str,
    /// Started on BENCH_REUSE_DATABASE: the data is already there.
    pub reused: bool,
    _dir: tempfile::TempDir,
    _pg: Option<FreshPostgres>,
}

/// The PostgreSQL server to benchmark on, if any: BENCH_DATABASE_URL, else
/// TEST_DATABASE_URL. Each run creates its own empty database there.
pub fn postgres_url() -> Option<String> {
    ["BENCH_DATABASE_URL", "TEST_DATABASE_URL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|url| !url.is_empty()))
}

/// A database created for one run and dropped after it.
pub struct FreshPostgres {
    admin_url: String,
    name: String,
}

impl FreshPostgres {
    /// Creates an empty database on the server `admin_url` names; returns its URL.
    pub async fn create(admin_url: &str) -> (Self, String) {
        let name = format!("lt_bench_{}", std::process::id());
        let admin = Database::connect(admin_url).await.expect("connect to the PostgreSQL server");
        admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.expect("drop");
        admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.expect("create bench database");
        admin.close().await.ok();
        let mut url = url::Url::parse(admin_url).expect("a PostgreSQL URL");
        url.set_path(&format!("/{name}"));
        (Self { admin_url: admin_url.to_owned(), name }, url.to_string())
    }
}

impl Drop for FreshPostgres {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop may run inside the benchmark's runtime; use a thread with its own.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(async move {
                if let Ok(admin) = Database::connect(&admin_url).await {
                    admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.ok();
                }
            });
        })
        .join()
        .ok();
    }
}

/// Starts the service on SQLite, or on a fresh database on the PostgreSQL
/// server named by BENCH_DATABASE_URL (or TEST_DATABASE_URL), limits raised.
pub async fn start(configure: impl Fn(&mut Config)) -> Server {
    start_on(postgres_url().as_deref(), configure).await
}

/// Starts the service on a fresh database: on the PostgreSQL server
/// `postgres` names, or on SQLite in a temporary directory. With
/// BENCH_REUSE_DATABASE (a database URL) it runs on that database instead,
/// as left by an earlier run that was stopped before it dropped it, with the
/// bench user and its first site: a 10M-event seed on PostgreSQL takes over
/// an hour, the measurement minutes.
pub async fn start_on(postgres: Option<&str>, configure: impl Fn(&mut Config)) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let mut config = Config::defaults().expect("config");
    // The benches time the steady state: the first read that needs
    // Explore's copies waits for them to load (not the rows beside a load).
    config.explore_copy_wait_ms = 3_600_000;
    let mut reuse = std::env::var("BENCH_REUSE_DATABASE").ok().filter(|url| !url.is_empty());
    // An SQLite file that does not exist yet is made and seeded there, and
    // kept for the next run.
    let mut kept = None;
    if let Some(path) = reuse.as_deref().and_then(sqlite_path).filter(|path| !std::path::Path::new(path).exists()) {
        println!("seeding a new database at {path}, kept for BENCH_REUSE_DATABASE");
        kept = reuse.take().map(|url| if url.contains("mode=") { url } else { format!("{url}?mode=rwc") });
    }
    let (pg, backend) = match (&reuse, postgres) {
        _ if kept.is_some() => {
            config.database_url = kept.unwrap_or_default();
            (None, "SQLite")
        }
        (Some(url), _) => {
            config.database_url = url.clone();
            (None, if url.starts_with("postgres") { "PostgreSQL" } else { "SQLite" })
        }
        (None, Some(admin_url)) => {
            let (pg, url) = FreshPostgres::create(admin_url).await;
            config.database_url = url;
            (Some(pg), "PostgreSQL")
        }
        (None, None) => {
            config.database_url = format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display());
            (None, "SQLite")
        }
    };
    config.base_url = Some(base.clone());
    config.auth_rate_limit_per_minute = 1_000_000;
    config.auth_account_rate_limit_per_minute = 1_000_000;
    config.query_cost_per_minute = 1_000_000_000;
    config.collect_rate_limit_per_second = 1_000_000;
    config.collect_site_rate_limit_per_second = 1_000_000;
    config.collect_queue_capacity = 200_000;
    configure(&mut config);
    let conn = db::connect(&config).await.expect("connect");
    db::migrate(&conn).await.expect("migrate");
    let state = AppState::new(conn, config).expect("state");
    tokio::spawn(leadtrail::serve(listener, state.clone(), std::future::pending()));

    let http = reqwest::Client::new();
    let account = if reuse.is_some() { "sign-in" } else { "sign-up" };
    let signed_up = http
        .post(format!("{base}/api/auth/{account}/email"))
        .json(&json!({ "name": "Bench", "email": "bench@example.com", "password": "benchmark password" }))
        .send()
        .await
        .expect("sign up");
    let body: Value = signed_up.json().await.expect("sign-up body");
    let cookie = format!("session={}", body["token"].as_str().expect("token"));
    if reuse.is_some() {
        let sites: Value = http
            .get(format!("{base}/api/sites"))
            .header("cookie", &cookie)
            .send()
            .await
            .expect("list sites")
            .json()
            .await
            .expect("sites body");
        let site = sites["sites"][0]["siteId"].as_i64().expect("the reused database has the bench site");
        return Server { base, state, cookie, site, backend, reused: true, _dir: dir, _pg: pg };
    }
    let site: Value = http
        .post(format!("{base}/api/sites"))
        .header("cookie", &cookie)
        .json(&json!({ "domain": "bench.example" }))
        .send()
        .await
        .expect("create site")
        .json()
        .await
        .expect("site body");
    let site = site["site"]["siteId"].as_i64().expect("site id");
    Server { base, state, cookie, site, backend, reused: false, _dir: dir, _pg: pg }
}

/// The file of an `sqlite://` URL.
fn sqlite_path(url: &str) -> Option<&str> {
    let path = url.strip_prefix("sqlite://")?;
    Some(path.split('?').next().unwrap_or(path))
}

/// Seeds `visitors` visitors of 30 days' traffic into the bench site and
/// reports it, unless the server runs on a kept database that has them.
pub async fn seed_unless_reused(server: &Server, visitors: usize) {
    if server.reused {
        println!("reusing the seeded database (BENCH_REUSE_DATABASE)");
        return;
    }
    let options = leadtrail::seed::SeedOptions { site_id: server.site, visitors, days: 30, seed: 1 };
    let seeding = std::time::Instant::now();
    let report = leadtrail::seed::run(&server.state.db, options, |_| {}).await.expect("seed");
    let seeded = seeding.elapsed();
    println!(
        "seeded {} events ({} visitors, {} sessions, {} link clicks) in {:.1}s: {:.0} events/s",
        report.events,
        report.visitors,
        report.sessions,
        report.clicks,
        seeded.as_secs_f64(),
        rate(report.events as usize, seeded)
    );
}

/// Latency percentiles of a sorted sample, in milliseconds.
pub fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

pub fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

/// The 1-minute load average, to print beside the figures: other work on the
/// machine skews them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The lead desk's queries the benchmarks time (design §19): the plain list,
/// then search, each filter and each sort, as `/leads` and `GET /api/visitor`
/// take them (the seed's data has something for each to find).
pub const DESK_CASES: [(&str, &str); 17] = [
    ("plain (baseline)", ""),
    ("search q=person1", "q=person1"),
    ("status=identified", "status=identified"),
    ("hot", "hot=1"),
    ("country=DE", "country=DE"),
    ("channel=Organic Search", "channel=Organic+Search"),
    ("campaign=brand", "campaign=brand"),
    ("link=seed-ad", "link=seed-ad"),
    ("visited=/pricing", "visited=%2Fpricing"),
    ("account=asn:4200000012", "account=asn%3A4200000012"),
    ("form", "form=1"),
    ("minScore=40", "minScore=40"),
    ("sort=last_seen", "sort=last_seen"),
    ("sort=pageviews", "sort=pageviews"),
    ("sort=time", "sort=time"),
    ("sort=sessions asc", "sort=sessions&order=asc"),
    ("search+channel+sort", "q=example&channel=Direct&sort=pageviews"),
];

/// The desk's target p95: 100 ms on about a million events, 300 ms on ten million.
pub fn desk_target_ms(visitors: usize) -> f64 {
    if visitors >= 1_000_000 { 300.0 } else { 100.0 }
}

/// The process's peak resident memory in KiB (VmHWM).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .and_then(|line| line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()))
        })
        .unwrap_or(0)
}

/// Starts a new peak: the kernel sets VmHWM back to the current RSS.
pub fn reset_peak_rss() {
    std::fs::write("/proc/self/clear_refs", "5").ok();
}
