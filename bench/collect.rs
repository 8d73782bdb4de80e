//! Collect throughput: events per second through HTTP, each request answered
//! only once its events are committed, against a raw batched insert of the
//! same rows in the same run. SQLite always; PostgreSQL too when
//! BENCH_DATABASE_URL (or TEST_DATABASE_URL) names a server, on a fresh
//! database created for the run.
//!
//! With an ASN database (design §18) the same SQLite run is made again with
//! `ASN_DB_PATH` on a synthetic ip-location-db CSV of ASN_RANGES ranges,
//! every request from a company network, so each visitor also gets its
//! network and account: the lookup's and the accounts' cost, as a ratio.
//! Both servers run at once and take turns, one slice of each traffic at a
//! time (SLICES), so a few slow seconds of the machine fall on both sides;
//! the pair runs BENCH_ROUNDS times (3) and the median ratio is the verdict; BENCH_ASN=with or without runs one side once, for a profiler;
//! BENCH_SINGLE_REQUESTS (20,000) sets the one-event requests per concurrency.
//!
//! cargo bench --bench collect
//! BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo bench --bench collect
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

#[path = "common.rs"]
mod common;

// As in the binary, so the service is measured as it runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use entity::event;
use futures_util::{StreamExt, stream};
use sea_orm::{ActiveValue::Set, EntityTrait, QueryOrder, TransactionTrait};
use serde_json::{Value, json};

const EVENTS: usize = 100_000;
const VISITORS: usize = 2_000;
const BATCH: usize = 100;
/// Batched requests in flight. Each waits for its commit, so the writer
/// commits up to this many batches together.
const BATCH_CONCURRENCY: usize = 16;
/// One-event requests per concurrency (`BENCH_SINGLE_REQUESTS` overrides):
/// a few seconds each, so longer runs steady the single-event ratios.
const SINGLE_REQUESTS: usize = 20_000;
/// Single-event requests in flight: the tracker's case, many browsers at once.
/// Each waits for its commit, so throughput rises with concurrency (group
/// commit); 32 is the concurrency of the figures before commit-acknowledged.
const SINGLE_CONCURRENCY: [usize; 2] = [32, 128];
const UA: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";
const PAGES: [&str; 6] = ["/", "/pricing", "/blog/post", "/docs", "/contact", "/features"];
/// IPv4 ranges in the synthetic ASN file: about as many as ip-location-db's
/// `asn-ipv4.csv` holds.
const ASN_RANGES: u32 = 500_000;
/// Companies the bench's visitors come from.
const COMPANIES: usize = 300;

/// The synthetic ASN file: ASN_RANGES /24-sized ranges from 1.0.0.0 up, each
/// of an organisation (none on the shipped hosting or ISP lists).
fn asn_file(dir: &std::path::Path) -> String {
    use std::io::Write;
    let path = dir.join("asn-ipv4.csv");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("asn file"));
    for range in 0..ASN_RANGES {
        let start = (1_u32 << 24) + range * 256;
        let (a, b) = (std::net::Ipv4Addr::from(start), std::net::Ipv4Addr::from(start + 255));
        writeln!(out, "{a},{b},{},\"Company {} Networks, Inc.\"", 4_200_000_000 + range % 50_000, range % 50_000)
            .expect("asn row");
    }
    out.flush().expect("asn file");
    path.display().to_string()
}

/// The address a visitor browses from: one of COMPANIES networks.
fn address(visitor: usize) -> String {
    let range = (visitor % COMPANIES) as u32 * 1_601 % ASN_RANGES;
    std::net::Ipv4Addr::from((1_u32 << 24) + range * 256 + 7).to_string()
}

/// Realistic traffic: each visitor browses several pages within one session.
/// The `n`th event is of visitor `first_visitor + n % VISITORS`.
fn event(site: i64, n: usize, base_ts: i64, first_visitor: usize) -> Value {
    let visitor = first_visitor + n % VISITORS;
    let step = n / VISITORS;
    json!({
        "site": site,
        "type": if n % 10 == 9 { "custom_event" } else { "pageview" },
        "event_name": "cta_click",
        "tracker_vid": format!("bench-{visitor}"),
        "url": format!("https://bench.example{}?utm_source=bench", PAGES[(visitor + step) % PAGES.len()]),
        "title": "Bench page",
        "referrer": "https://www.google.com/",
        "ts": base_ts + (step as i64) * 1_000,
    })
}

/// POSTs every body to `url` from a desktop browser, `concurrency` at a time;
/// returns the statuses.
async fn post_all(http: &reqwest::Client, url: &str, bodies: Vec<(String, String)>, concurrency: usize) -> Vec<u16> {
    stream::iter(bodies)
        .map(|(body, from)| async move {
            http.post(url)
                .header("user-agent", UA)
                .header("x-forwarded-for", from)
                .body(body)
                .send()
                .await
                .map(|response| response.status().as_u16())
                .unwrap_or(0)
        })
        .buffer_unordered(concurrency)
        .collect()
        .await
}

struct Figures {
    backend: &'static str,
    batched: f64,
    /// (concurrency, events per second)
    single: Vec<(usize, f64)>,
    raw: f64,
}

/// Slices each traffic is cut into. Sides measured together take turns
/// slice by slice, so a machine that slows down for a few seconds (a VM's
/// neighbours, a timer) moves both sides' figures alike.
const SLICES: usize = 10;

/// Events sent and time spent by one side in one kind of traffic.
#[derive(Default, Clone, Copy)]
struct Timed {
    events: usize,
    elapsed: std::time::Duration,
}

impl Timed {
    fn add(&mut self, events: usize, elapsed: std::time::Duration) {
        self.events += events;
        self.elapsed += elapsed;
    }

    fn rate(&self) -> f64 {
        common::rate(self.events, self.elapsed)
    }
}

/// One server under measurement and the traffic it has taken so far.
struct Side {
    server: common::Server,
    http: reqwest::Client,
    url: String,
    base_ts: i64,
    batched: Timed,
    /// Per entry of SINGLE_CONCURRENCY.
    single: Vec<Timed>,
}

impl Side {
    async fn start(postgres: Option<&str>, asn: Option<&str>) -> Side {
        // Every run believes X-Forwarded-For, so only the lookup differs.
        let server = common::start_on(postgres, |config| {
            config.trust_proxy = leadtrail::config::TrustProxy::Xff;
            config.asn_db_path = asn.map(str::to_owned);
        })
        .await;
        let max_concurrency = SINGLE_CONCURRENCY.into_iter().chain([BATCH_CONCURRENCY]).max().unwrap_or(1);
        // Keep every connection open between requests, as wrk would.
        let http = reqwest::Client::builder().pool_max_idle_per_host(max_concurrency).build().expect("client");
        let base_ts = leadtrail::time::now_ms() - 3_600_000;
        let url = format!("{}/api/collect", server.base);
        // Warm up connections and caches, as before commit-acknowledged: one
        // batch, so most visitors are created during the measured run.
        let warm: Vec<Value> = (0..BATCH).map(|n| event(server.site, n, base_ts, 0)).collect();
        let warmed =
            http.post(&url).header("user-agent", UA).json(&json!({ "events": warm })).send().await.expect("warm-up");
        assert_eq!(warmed.status().as_u16(), 202, "warm-up accepted");
        let single = vec![Timed::default(); SINGLE_CONCURRENCY.len()];
        Side { server, http, url, base_ts, batched: Timed::default(), single }
    }

    /// Slice `slice` of the batched traffic: requests of BATCH events, each
    /// a browser's (its visitors' company, by its first event).
    async fn batched_slice(&mut self, slice: usize) {
        let per_slice = EVENTS / BATCH / SLICES;
        let bodies: Vec<(String, String)> = (slice * per_slice..(slice + 1) * per_slice)
            .map(|b| {
                let first = BATCH + b * BATCH;
                let events: Vec<Value> =
                    (0..BATCH).map(|i| event(self.server.site, first + i, self.base_ts, 0)).collect();
                (json!({ "events": events }).to_string(), address(first % VISITORS))
            })
            .collect();
        let started = Instant::now();
        let statuses = post_all(&self.http, &self.url, bodies, BATCH_CONCURRENCY).await;
        // Every 202 already means committed; the flush only proves it.
        self.server.state.writer.flush().await;
        let elapsed = started.elapsed();
        assert!(statuses.iter().all(|&s| s == 202), "every batch accepted");
        self.batched.add(per_slice * BATCH, elapsed);
    }

    /// Slice `slice` of the tracker-style traffic at the `index`th
    /// concurrency: one event per request, from VISITORS visitors other than
    /// the batched traffic's, each always from its own company's network. (The
    /// batched traffic's visitors came from their batch's network; sending
    /// them from another would measure people moving between two companies'
    /// offices, each move rewriting the visitor's account and search words,
    /// not the lookup.)
    async fn single_slice(&mut self, index: usize, slice: usize) {
        let per_slice = single_requests() / SLICES;
        let first = BATCH + EVENTS + (index * SLICES + slice) * per_slice;
        let singles: Vec<(String, String)> = (first..first + per_slice)
            .map(|n| (event(self.server.site, n, self.base_ts, VISITORS).to_string(), address(n % VISITORS)))
            .collect();
        let started = Instant::now();
        let statuses = post_all(&self.http, &self.url, singles, SINGLE_CONCURRENCY[index]).await;
        self.server.state.writer.flush().await;
        let elapsed = started.elapsed();
        assert!(statuses.iter().all(|&s| s == 202), "every single event accepted");
        self.single[index].add(per_slice, elapsed);
    }

    /// The baseline: the same event rows, inserted raw in batches, no HTTP,
    /// no sessions; then the side's figures.
    async fn finish(self) -> Figures {
        let template = event::Entity::find()
            .order_by_asc(event::Column::Id)
            .one(&self.server.state.db)
            .await
            .expect("query")
            .expect("an event");
        let rows: Vec<event::ActiveModel> = (0..EVENTS)
            .map(|n| event::ActiveModel {
                site_id: Set(template.site_id),
                visitor_id: Set(template.visitor_id),
                session_id: Set(template.session_id),
                event_type: Set("pageview".to_owned()),
                event_name: Set(String::new()),
                page: Set(PAGES[n % PAGES.len()].to_owned()),
                page_title: Set(Some("Bench page".to_owned())),
                referrer: Set(Some("https://www.google.com/".to_owned())),
                props: Set("{}".to_owned()),
                engaged_ms: Set(0),
                is_bot: Set(false),
                timestamp: Set(self.base_ts + n as i64),
                ..Default::default()
            })
            .collect();
        let started = Instant::now();
        for transaction in rows.chunks(2_000) {
            let txn = self.server.state.db.begin().await.expect("begin");
            for chunk in transaction.chunks(200) {
                event::Entity::insert_many(chunk.to_vec()).exec_without_returning(&txn).await.expect("insert");
            }
            txn.commit().await.expect("commit");
        }
        let raw = common::rate(EVENTS, started.elapsed());
        let single = SINGLE_CONCURRENCY.into_iter().zip(self.single.iter().map(Timed::rate)).collect();
        Figures { backend: self.server.backend, batched: self.batched.rate(), single, raw }
    }
}

/// Runs every traffic through `sides`, which take turns slice by slice (the
/// first side first in even slices, last in odd ones); answers each side's
/// figures, in order.
async fn run_together(mut sides: Vec<Side>) -> Vec<Figures> {
    for slice in 0..SLICES {
        for side in in_turn(&mut sides, slice) {
            side.batched_slice(slice).await;
        }
    }
    for index in 0..SINGLE_CONCURRENCY.len() {
        for slice in 0..SLICES {
            for side in in_turn(&mut sides, slice) {
                side.single_slice(index, slice).await;
            }
        }
    }
    let mut figures = Vec::new();
    for side in sides {
        figures.push(side.finish().await);
    }
    figures
}

fn in_turn(sides: &mut [Side], slice: usize) -> Vec<&mut Side> {
    let mut order: Vec<&mut Side> = sides.iter_mut().collect();
    if slice % 2 == 1 {
        order.reverse();
    }
    order
}

async fn run(postgres: Option<&str>, asn: Option<&str>) -> Figures {
    let side = Side::start(postgres, asn).await;
    run_together(vec![side]).await.pop().expect("one side")
}

fn print(figures: &Figures) {
    let Figures { backend, batched, raw, .. } = figures;
    println!(
        "collect benchmark ({backend}; every 202 is sent after the commit; load average {})",
        common::load_average()
    );
    println!(
        "  through HTTP, batched:   {batched:>10.0} events/s ({} events from {VISITORS} visitors, batches of {BATCH}, concurrency {BATCH_CONCURRENCY})",
        EVENTS
    );
    for (concurrency, rate) in &figures.single {
        println!(
            "  through HTTP, single:    {rate:>10.0} events/s ({} one-event requests, concurrency {concurrency})",
            single_requests()
        );
    }
    println!("  raw batched insert:      {raw:>10.0} rows/s (baseline: 200 rows a statement, 2,000 a transaction)");
    println!("  ratio HTTP batched / raw insert: {:.2}", batched / raw);
}

fn single_requests() -> usize {
    std::env::var("BENCH_SINGLE_REQUESTS")
        .ok()
        .and_then(|raw| raw.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(SINGLE_REQUESTS)
}

/// Rounds of the SQLite pair (without and with the ASN lookup, taking
/// turns slice by slice).
fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS").ok().and_then(|raw| raw.parse().ok()).filter(|&n| n > 0).unwrap_or(3)
}

/// `BENCH_ASN=without` or `with` runs only that side, once (for a profiler).
fn only_side() -> Option<bool> {
    match std::env::var("BENCH_ASN").as_deref() {
        Ok("with") => Some(true),
        Ok("without") => Some(false),
        _ => None,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) { (values[mid - 1] + values[mid]) / 2.0 } else { values[mid] }
}

#[tokio::main]
async fn main() {
    if std::env::var("RUST_LOG").is_ok() {
        tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).init();
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let asn = asn_file(dir.path());
    if let Some(with) = only_side() {
        print(&run(None, with.then_some(asn.as_str())).await);
        return;
    }
    // Each round's ratio, per traffic: batched first, then each concurrency.
    let mut ratios: Vec<Vec<f64>> = Vec::new();
    for round in 1..=rounds() {
        println!("round {round}:");
        let sides = vec![Side::start(None, None).await, Side::start(None, Some(&asn)).await];
        let mut figures = run_together(sides).await;
        let with_asn = figures.pop().expect("with the lookup");
        let sqlite = figures.pop().expect("without the lookup");
        print(&sqlite);
        println!("with ASN_DB_PATH ({ASN_RANGES} ranges, visitors from {COMPANIES} company networks):");
        print(&with_asn);
        let mut round_ratios = vec![with_asn.batched / sqlite.batched];
        round_ratios.extend(with_asn.single.iter().zip(&sqlite.single).map(|((_, with), (_, without))| with / without));
        println!("  ratio with / without ASN lookup: batched {:.3}", round_ratios[0]);
        for (concurrency, ratio) in SINGLE_CONCURRENCY.iter().zip(&round_ratios[1..]) {
            println!("                                   single, concurrency {concurrency}: {ratio:.3}");
        }
        ratios.push(round_ratios);
    }
    let of = |column: usize| median(ratios.iter().map(|round| round[column]).collect());
    println!("median ratio with / without ASN lookup over {} rounds:", ratios.len());
    println!("  batched {:.3}", of(0));
    for (index, concurrency) in SINGLE_CONCURRENCY.iter().enumerate() {
        println!("  single, concurrency {concurrency}: {:.3}", of(index + 1));
    }
    println!("  target: at least 0.90 (within 10%)");
    if let Some(url) = common::postgres_url() {
        let postgres = run(Some(&url), None).await;
        print(&postgres);
    } else {
        println!("(set BENCH_DATABASE_URL=postgres://... to measure PostgreSQL too)");
    }
}
