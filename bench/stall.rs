//! One caller cannot stall an instance: while two clients loop the most
//! expensive GraphQL operation the limits accept (eight 30-day `stats`, at
//! the cost cap), single collect events and `/health/ready` keep their idle
//! latency. A probe sends one of each every 20 ms, first with nothing else
//! running, then beside the two clients; it prints p50/p99 of both phases,
//! their ratio (target: loaded p99 within 2x of idle) and any 503.
//!
//! It runs twice: once with the default read budget (the clients soon get
//! 429 and wait), and once with no budget at all, where only the one
//! connection per operation and the separate read connections protect the
//! rest.
//!
//! cargo bench --bench stall                      (SQLite, 20,000 visitors)
//! BENCH_VISITORS=130000 cargo bench --bench stall
//! BENCH_SECONDS=20 cargo bench --bench stall     (longer phases)
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

#[path = "common.rs"]
mod common;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use serde_json::{Value, json};

const PROBE_EVERY: Duration = Duration::from_millis(20);

/// Latencies of one phase.
#[derive(Default)]
struct Probe {
    collect: Vec<Duration>,
    ready: Vec<Duration>,
    /// `/health/live`, which touches no database: what the machine and the
    /// runtime add by themselves.
    live: Vec<Duration>,
    unavailable: usize,
}

impl Probe {
    fn p(&mut self, p: f64) -> (f64, f64, f64) {
        self.collect.sort();
        self.ready.sort();
        self.live.sort();
        (common::percentile(&self.collect, p), common::percentile(&self.ready, p), common::percentile(&self.live, p))
    }
}

async fn probe(server: &common::Server, seconds: u64) -> Probe {
    let http = reqwest::Client::new();
    let mut probe = Probe::default();
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut n = 0u64;
    while Instant::now() < until {
        n += 1;
        let event = json!({ "site": server.site, "type": "pageview", "tracker_vid": format!("probe-{n}"), "url": "https://bench.example/probe" });
        let started = Instant::now();
        let collected = http
            .post(format!("{}/api/collect", server.base))
            .header("content-type", "text/plain")
            .header("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36")
            .body(event.to_string())
            .send()
            .await
            .unwrap();
        probe.collect.push(started.elapsed());
        probe.unavailable += usize::from(collected.status().as_u16() == 503);
        let started = Instant::now();
        let ready = http.get(format!("{}/health/ready", server.base)).send().await.unwrap();
        probe.ready.push(started.elapsed());
        probe.unavailable += usize::from(ready.status().as_u16() == 503);
        let started = Instant::now();
        http.get(format!("{}/health/live", server.base)).send().await.unwrap();
        probe.live.push(started.elapsed());
        tokio::time::sleep(PROBE_EVERY).await;
    }
    probe
}

/// What the attacking clients got.
#[derive(Default)]
struct Attack {
    answered: AtomicUsize,
    limited: AtomicUsize,
    unavailable: AtomicUsize,
}

/// Eight 30-day windows: 24,000 of the 25,000 points one operation may cost.
fn most_expensive(site: i64) -> String {
    let fields: String = (0..8)
        .map(|i| format!("s{i}: stats(siteId: {site}, timeRange: \"30d\") {{ overview {{ uniqueVisitors pageviews }} topPages {{ page views }} countries {{ country visitors }} }} "))
        .collect();
    format!("{{ {fields} }}")
}

async fn api_key(server: &common::Server, name: &str) -> String {
    let created: Value = reqwest::Client::new()
        .post(format!("{}/graphql", server.base))
        .header("cookie", &server.cookie)
        .json(
            &json!({ "query": "mutation($n: String!) { createApiKey(name: $n) { key } }", "variables": { "n": name } }),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    created["data"]["createApiKey"]["key"].as_str().unwrap().to_owned()
}

async fn scenario(label: &str, budget: Option<u32>, visitors: usize, seconds: u64) -> bool {
    let server = common::start(|config| {
        if let Some(points) = budget {
            config.query_cost_per_minute = points;
        }
    })
    .await;
    common::seed_unless_reused(&server, visitors).await;
    // BENCH_OPERATION=cheap swaps in a query that reads almost nothing, to
    // tell the cost of the reads from that of the requests themselves.
    let query = match std::env::var("BENCH_OPERATION").as_deref() {
        Ok("cheap") => "{ sites { id } }".to_owned(),
        _ => most_expensive(server.site),
    };
    // Warm the caches the way the idle phase will find them.
    probe(&server, 1).await;
    let mut idle = probe(&server, seconds).await;

    let stop = Arc::new(AtomicBool::new(false));
    let attack = Arc::new(Attack::default());
    let mut clients = Vec::new();
    for name in ["attacker-1", "attacker-2"] {
        let key = api_key(&server, name).await;
        let (stop, attack, query, base) = (stop.clone(), attack.clone(), query.clone(), server.base.clone());
        clients.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            while !stop.load(Ordering::Relaxed) {
                let answer = http
                    .post(format!("{base}/graphql"))
                    .bearer_auth(&key)
                    .json(&json!({ "query": query }))
                    .send()
                    .await
                    .unwrap();
                match answer.status().as_u16() {
                    429 => {
                        attack.limited.fetch_add(1, Ordering::Relaxed);
                        // A persistent attacker retries as soon as told.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    503 => {
                        attack.unavailable.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => {
                        let body: Value = answer.json().await.unwrap();
                        assert!(body.get("errors").is_none(), "{body}");
                        attack.answered.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut loaded = probe(&server, seconds).await;
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }

    let ((idle_c50, idle_r50, idle_l50), (idle_c99, idle_r99, idle_l99)) = (idle.p(0.5), idle.p(0.99));
    let ((load_c50, load_r50, load_l50), (load_c99, load_r99, load_l99)) = (loaded.p(0.5), loaded.p(0.99));
    let (collect_ratio, ready_ratio) = (load_c99 / idle_c99, load_r99 / idle_r99);
    let ready_met = load_r99 <= (2.0 * idle_r99).max(idle_r99 + 1.0);
    let met = collect_ratio <= 2.0 && ready_met && loaded.unavailable == 0 && idle.unavailable == 0;
    println!("\n{label} ({}, load average {})", server.backend, common::load_average());
    println!(
        "  expensive operations: {} answered, {} refused 429, {} refused 503",
        attack.answered.load(Ordering::Relaxed),
        attack.limited.load(Ordering::Relaxed),
        attack.unavailable.load(Ordering::Relaxed)
    );
    println!("  | probe | idle p50 | idle p99 | loaded p50 | loaded p99 | p99 ratio (target <= 2) |");
    println!("  |---|---|---|---|---|---|");
    println!(
        "  | collect | {idle_c50:.2} ms | {idle_c99:.2} ms | {load_c50:.2} ms | {load_c99:.2} ms | {collect_ratio:.2} |"
    );
    println!(
        "  | /health/ready | {idle_r50:.2} ms | {idle_r99:.2} ms | {load_r50:.2} ms | {load_r99:.2} ms | {ready_ratio:.2} |"
    );
    println!(
        "  | (/health/live, no database) | {idle_l50:.2} ms | {idle_l99:.2} ms | {load_l50:.2} ms | {load_l99:.2} ms | {:.2} |",
        load_l99 / idle_l99
    );
    println!(
        "  503 answers: {} idle, {} loaded; {} probes each; target (ready within 2x or +1 ms) {}; strict 2x for ready {}",
        idle.unavailable,
        loaded.unavailable,
        loaded.collect.len(),
        if met { "met" } else { "NOT met" },
        if ready_ratio <= 2.0 { "met" } else { "not met" }
    );
    met
}

#[tokio::main]
async fn main() {
    let visitors: usize = std::env::var("BENCH_VISITORS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let seconds: u64 = std::env::var("BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let defaults = leadtrail::config::Config::defaults().unwrap();
    let with_budget = scenario("default read budget", Some(defaults.query_cost_per_minute), visitors, seconds).await;
    let without = scenario("no read budget", None, visitors, seconds).await;
    if !(with_budget && without) {
        std::process::exit(1);
    }
}
