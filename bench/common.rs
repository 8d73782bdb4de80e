//! Shared setup for the benchmarks: a real server on loopback over a fresh
//! database, and a signed-in account with one site.
#![allow(dead_code)]

use std::time::Duration;

use leadtrail::{config::Config, db, state::AppState};
use serde_json::{Value, json};

pub struct Server {
    pub base: String,
    pub state: AppState,
    pub cookie: String,
    pub site: i64,
    _dir: tempfile::TempDir,
}

/// Starts the service on SQLite (or BENCH_DATABASE_URL) with limits raised.
pub async fn start(configure: impl Fn(&mut Config)) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let mut config = Config::from_env().expect("config");
    config.database_url = std::env::var("BENCH_DATABASE_URL")
        .unwrap_or_else(|_| format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display()));
    config.base_url = Some(base.clone());
    config.auth_rate_limit_per_minute = 1_000_000;
    config.collect_rate_limit_per_second = 1_000_000;
    config.collect_site_rate_limit_per_second = 1_000_000;
    config.collect_queue_capacity = 200_000;
    configure(&mut config);
    let conn = db::connect(&config.database_url).await.expect("connect");
    db::migrate(&conn).await.expect("migrate");
    let state = AppState::new(conn, config).expect("state");
    tokio::spawn(leadtrail::serve(listener, state.clone(), std::future::pending()));

    let http = reqwest::Client::new();
    let signed_up = http
        .post(format!("{base}/api/auth/sign-up/email"))
        .json(&json!({ "name": "Bench", "email": "bench@example.com", "password": "benchmark password" }))
        .send()
        .await
        .expect("sign up");
    let body: Value = signed_up.json().await.expect("sign-up body");
    let cookie = format!("session={}", body["token"].as_str().expect("token"));
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
    Server { base, state, cookie, site, _dir: dir }
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
