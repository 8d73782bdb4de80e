//! Collect latency while the retention purge deletes most of a million events:
//! tracker-style single events at a fixed rate, first with no purge (the
//! baseline), then while `privacy::retention::purge` deletes everything older
//! than a day, in the same run. Prints p50/p99/max of both and their ratio.
//!
//! cargo bench --bench retention                        (SQLite, about 1M events)
//! BENCH_VISITORS=20000 cargo bench --bench retention   (a quicker, smaller run)
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

#[path = "common.rs"]
mod common;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use entity::site;
use leadtrail::{
    seed::{self, SeedOptions},
    service::privacy::retention,
    time::now_ms,
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
use serde_json::json;
use tokio::sync::mpsc;

/// Collect requests per second during each phase: a busy site's tracker.
const RATE: u64 = 400;
const BASELINE: Duration = Duration::from_secs(10);
const UA: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";

struct Latencies {
    sorted: Vec<Duration>,
    failed: usize,
}

impl Latencies {
    fn line(&self, name: &str) -> String {
        format!(
            "{name:<22} {:>8} {:>9.2} {:>9.2} {:>9.2} {:>8}",
            self.sorted.len(),
            common::percentile(&self.sorted, 0.5),
            common::percentile(&self.sorted, 0.99),
            self.sorted.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
            self.failed
        )
    }
}

/// Sends one single-event collect request every 1/RATE s until `until`
/// resolves, each on its own task, and gathers their latencies.
async fn collect_at_fixed_rate(server: &common::Server, until: impl std::future::Future<Output = ()>) -> Latencies {
    let http = reqwest::Client::new();
    let url = format!("{}/api/collect", server.base);
    let (sent, mut done) = mpsc::unbounded_channel::<Option<Duration>>();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / RATE));
    tokio::pin!(until);
    let mut n = 0u64;
    loop {
        tokio::select! {
            _ = &mut until => break,
            _ = tick.tick() => {
                n += 1;
                let body = json!({
                    "site": server.site,
                    "type": "pageview",
                    "tracker_vid": format!("live-{}", n % 500),
                    "url": "https://bench.example/pricing",
                    "ts": now_ms(),
                })
                .to_string();
                let (http, url, sent) = (http.clone(), url.clone(), sent.clone());
                tokio::spawn(async move {
                    let started = Instant::now();
                    let ok = http.post(&url).header("user-agent", UA).body(body).send().await
                        .is_ok_and(|reply| reply.status().as_u16() == 202);
                    sent.send(ok.then(|| started.elapsed())).ok();
                });
            }
        }
    }
    drop(sent);
    let mut latencies = Latencies { sorted: Vec::new(), failed: 0 };
    while let Some(result) = done.recv().await {
        match result {
            Some(latency) => latencies.sorted.push(latency),
            None => latencies.failed += 1,
        }
    }
    latencies.sorted.sort();
    latencies
}

#[tokio::main]
async fn main() {
    let visitors: usize = std::env::var("BENCH_VISITORS").ok().and_then(|v| v.parse().ok()).unwrap_or(130_000);
    let server = common::start(|_| {}).await;
    let db = server.state.db.clone();
    let started = Instant::now();
    let report =
        seed::run(&db, SeedOptions { site_id: server.site, visitors, days: 30, seed: 3 }, |_| {}).await.expect("seed");
    println!(
        "retention benchmark ({}; collect at {RATE} requests/s; load average {})",
        server.backend,
        common::load_average()
    );
    println!("seeded {} events over 30 days in {:.1}s", report.events, started.elapsed().as_secs_f64());

    let baseline = collect_at_fixed_rate(&server, tokio::time::sleep(BASELINE)).await;

    site::Entity::update_many()
        .col_expr(site::Column::RetentionDays, Expr::value(1))
        .filter(site::Column::Id.eq(server.site))
        .exec(&db)
        .await
        .expect("set the retention");
    let purge_started = Instant::now();
    let (purged_tx, purged_rx) = tokio::sync::oneshot::channel();
    let purge_db = db.clone();
    tokio::spawn(async move {
        let purged = retention::purge(&purge_db, now_ms()).await.expect("purge");
        purged_tx.send((purged, purge_started.elapsed())).ok();
    });
    let (during, (purged, took)) = {
        let mut result = None;
        let latencies = collect_at_fixed_rate(&server, async {
            result = purged_rx.await.ok();
        })
        .await;
        (latencies, result.expect("the purge finished"))
    };

    println!(
        "purged {} events, {} sessions, {} visitors, {} clicks in {:.1}s",
        purged.events,
        purged.sessions,
        purged.visitors,
        purged.clicks,
        took.as_secs_f64()
    );
    println!("{:<22} {:>8} {:>9} {:>9} {:>9} {:>8}", "collect", "requests", "p50 ms", "p99 ms", "max ms", "failed");
    println!("{}", baseline.line("without a purge"));
    println!("{}", during.line("while purging"));
    let ratio = common::percentile(&during.sorted, 0.99) / common::percentile(&baseline.sorted, 0.99).max(0.001);
    println!("p99 while purging / p99 without: {ratio:.2}");
}
