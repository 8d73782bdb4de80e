//! The web app's pages on a seeded dataset of about a million events: each
//! page is fetched signed in, as a browser would, and timed from request to
//! the last byte of HTML. Beside each page it prints its GraphQL document's
//! own time through /graphql (the page's floor), so the ratio shows what
//! rendering costs. The target is a p95 under 50 ms for every page.
//!
//! cargo bench --bench web                       (SQLite, 130,000 visitors, about 1M events)
//! BENCH_VISITORS=20000 cargo bench --bench web  (a quicker, smaller run)
//! BENCH_PAGES=/links ...                       (only the pages whose path holds it)
//! BENCH_ONLY=desk ...                            (only /leads with each desk query,
//!                                                 e.g. on a kept 10M seed whose overview is slow)
//! BENCH_ONLY=panels ...                          (the filtered explorer without its previous
//!                                                 period, and each panel's full view alone)
//! BENCH_ONLY=live ...                            (the explorer pages quiet, then while
//!                                                 collect takes an event every 100 ms)
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

#[path = "common.rs"]
mod common;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

const WARM_UP: usize = 5;
const RUNS: usize = 60;
const TARGET_P95_MS: f64 = 50.0;
/// `visit:channel is Organic Search`, as the page's address carries it.
const FILTERED_BY_CHANNEL: &str = "%5B%5B%22is%22%2C%22visit%3Achannel%22%2C%5B%22Organic%20Search%22%5D%5D%5D";

async fn measure(http: &reqwest::Client, url: &str, cookie: &str) -> (f64, f64, usize) {
    let mut bytes = 0;
    let mut times = Vec::with_capacity(RUNS);
    for run in 0..WARM_UP + RUNS {
        let started = Instant::now();
        let reply = http.get(url).header("cookie", cookie).send().await.expect("page");
        assert_eq!(reply.status(), 200, "{url}");
        bytes = reply.bytes().await.expect("body").len();
        if run >= WARM_UP {
            times.push(started.elapsed());
        }
    }
    times.sort();
    (common::percentile(&times, 0.5), common::percentile(&times, 0.95), bytes)
}

/// The 1-minute load average, so a run on a busy machine can be told apart.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

#[tokio::main]
async fn main() {
    let visitors: usize = std::env::var("BENCH_VISITORS").ok().and_then(|v| v.parse().ok()).unwrap_or(130_000);
    let server = common::start(|_| {}).await;
    let db = server.state.db.clone();
    let site = server.site;
    common::seed_unless_reused(&server, visitors).await;

    // The busiest visitor and their latest session, for the pages about one visitor.
    let top = entity::visitor::Entity::find()
        .filter(entity::visitor::Column::SiteId.eq(site))
        .order_by_desc(entity::visitor::Column::TotalEvents)
        .one(&db)
        .await
        .unwrap()
        .expect("a visitor");
    let session = entity::tracked_session::Entity::find()
        .filter(entity::tracked_session::Column::VisitorId.eq(top.id))
        .order_by_desc(entity::tracked_session::Column::StartedAt)
        .one(&db)
        .await
        .unwrap()
        .expect("a session");
    let vid = url::form_urlencoded::byte_serialize(top.tracker_vid.as_bytes()).collect::<String>();
    // The most clicked link, for its analytics page.
    let link = entity::link::Entity::find()
        .filter(entity::link::Column::SiteId.eq(site))
        .order_by_desc(entity::link::Column::HumanClicks)
        .one(&db)
        .await
        .unwrap()
        .expect("a link");
    let pages = [
        "/".to_owned(),
        "/?range=24h".to_owned(),
        "/?range=30d".to_owned(),
        format!("/?range=30d&filters={FILTERED_BY_CHANNEL}"),
        "/?range=30d&panel=visit:source".to_owned(),
        "/live".to_owned(),
        "/leads".to_owned(),
        "/leads?range=30d".to_owned(),
        "/leads?range=30d&hot=1".to_owned(),
        "/leads?range=30d&page=20".to_owned(),
        format!("/visitor/{vid}?site={site}"),
        format!("/visitor/{vid}"),
        format!("/session/{}?site={site}", session.id),
        format!("/talk/incoming?visitor={vid}"),
        "/links".to_owned(),
        format!("/links/lnk_{}", link.id),
        format!("/links/lnk_{}?range=30d", link.id),
        "/settings".to_owned(),
        "/settings/team".to_owned(),
        "/settings/webhooks".to_owned(),
        "/settings/account".to_owned(),
    ];

    // BENCH_PAGES=/links times only the pages whose path holds it.
    let pages: Vec<String> = match std::env::var("BENCH_PAGES") {
        Ok(part) => pages.into_iter().filter(|page| page.contains(&part)).collect(),
        Err(_) => pages.to_vec(),
    };
    let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
    if std::env::var("BENCH_ONLY").is_ok_and(|only| only == "panels") {
        measure_panels(&http, &server).await;
        return;
    }
    if std::env::var("BENCH_ONLY").is_ok_and(|only| only == "live") {
        measure_live(&http, &server).await;
        return;
    }
    let desk_only = std::env::var("BENCH_ONLY").is_ok_and(|only| only == "desk");
    if !desk_only {
        measure_pages(&http, &server, &pages).await;
        measure_live(&http, &server).await;
    }
    if !desk_only {
        measure_link_credit(&http, &server, site, link.id).await;
    }
    measure_desk(&http, &server, visitors).await;
    if !desk_only {
        measure_overview_fields(&http, &server, site).await;
    }
}

/// Each page, beside the target.
async fn measure_pages(http: &reqwest::Client, server: &common::Server, pages: &[String]) {
    println!("\n{:<34} {:>10} {:>10} {:>10}  target p95 < {TARGET_P95_MS} ms", "page", "p50 ms", "p95 ms", "KB");
    let mut missed = 0;
    for page in pages {
        let (p50, p95, bytes) = measure(http, &format!("{}{page}", server.base), &server.cookie).await;
        let met = p95 < TARGET_P95_MS;
        missed += usize::from(!met);
        println!(
            "{:<34} {:>10.2} {:>10.2} {:>10.1}  {}",
            page,
            p50,
            p95,
            bytes as f64 / 1024.0,
            if met { "met" } else { "MISSED" }
        );
    }
    println!("\n{} of {} pages met the target. Load average: {}", pages.len() - missed, pages.len(), load_average());
}

/// What a link brought, as its page asked before (the site's report by link
/// under each model, three times, keeping one row of each) and as it asks
/// now (`Link.brought`, from the link's own visitors), in the same run.
async fn measure_link_credit(http: &reqwest::Client, server: &common::Server, site: i64, link: i64) {
    let url = format!("{}/graphql", server.base);
    let before = "query($s: Int) { workspace(siteId: $s) { \
        a: attributionReport(model: \"first_touch\", by: \"link\", range: \"30d\") { rows { value leads } } \
        b: attributionReport(model: \"last_touch\", by: \"link\", range: \"30d\") { rows { value leads } } \
        c: attributionReport(model: \"linear\", by: \"link\", range: \"30d\") { rows { value leads } } } }";
    let after = "query($id: ID!) { link(id: $id) { brought(range: \"30d\") { model leads } } }";
    let variables = serde_json::json!({ "s": site, "id": format!("lnk_{link}") });
    println!("\n{:<44} {:>10} {:>10}", "what a link brought, 30 days (GraphQL)", "p50 ms", "p95 ms");
    let mut base = 0.0;
    for (name, query) in [("the site's report by link, three models", before), ("Link.brought", after)] {
        let mut times = Vec::with_capacity(RUNS);
        for run in 0..WARM_UP + RUNS {
            let started = Instant::now();
            let reply = http
                .post(&url)
                .header("cookie", &server.cookie)
                .header("origin", &server.base)
                .json(&serde_json::json!({ "query": query, "variables": variables }))
                .send()
                .await
                .expect("graphql");
            let body: serde_json::Value = reply.json().await.expect("graphql body");
            assert!(body.get("errors").is_none(), "{name}: {body}");
            if run >= WARM_UP {
                times.push(started.elapsed());
            }
        }
        times.sort();
        let (p50, p95) = (common::percentile(&times, 0.5), common::percentile(&times, 0.95));
        if base == 0.0 {
            base = p50;
        }
        println!("{name:<44} {p50:>10.2} {p95:>10.2}   {:.2} of the first", p50 / base);
    }
}

/// The lead desk: search, each filter and each sort, beside the plain list.
async fn measure_desk(http: &reqwest::Client, server: &common::Server, visitors: usize) {
    let target = common::desk_target_ms(visitors);
    println!(
        "\n{:<28} {:>10} {:>10} {:>12}  target p95 < {target} ms",
        "/leads?range=30d&...", "p50 ms", "p95 ms", "p50 / plain"
    );
    let mut plain = 0.0;
    let mut desk_missed = 0;
    for (name, query) in common::DESK_CASES {
        let url = format!("{}/leads?range=30d&{query}", server.base);
        let (p50, p95, _) = measure(http, &url, &server.cookie).await;
        if query.is_empty() {
            plain = p50;
        }
        let met = p95 < target;
        desk_missed += usize::from(!met);
        println!("{name:<28} {p50:>10.2} {p95:>10.2} {:>12.2}  {}", p50 / plain, if met { "met" } else { "MISSED" });
    }
    println!("{} of {} desk queries met the target.", common::DESK_CASES.len() - desk_missed, common::DESK_CASES.len());
}

/// Where the filtered explorer's time goes: the page without its previous
/// period, and each panel's full view alone (the tiles and the chart, and
/// that one panel).
async fn measure_panels(http: &reqwest::Client, server: &common::Server) {
    let page = format!("{}/?range=30d&filters={}", server.base, FILTERED_BY_CHANNEL);
    println!("\n{:<34} {:>10} {:>10}", "filtered explorer", "p50 ms", "p95 ms");
    for (name, url) in
        [("the page".to_owned(), page.clone()), ("compare=off".to_owned(), format!("{page}&compare=off"))]
            .into_iter()
            .chain(
                leadtrail::service::explore::dashboard::PANELS
                    .iter()
                    .map(|spec| (format!("panel={}", spec.dimension), format!("{page}&panel={}", spec.dimension))),
            )
    {
        let (p50, p95, _) = measure(http, &url, &server.cookie).await;
        println!("{name:<34} {p50:>10.2} {p95:>10.2}");
    }
}

/// The explorer pages on a live site: each quiet, then while collect takes
/// a pageview every 100 ms (so most fetches find their copies' tails moved
/// since the last), in the same run.
async fn measure_live(http: &reqwest::Client, server: &common::Server) {
    let pages =
        [format!("/?range=30d&filters={FILTERED_BY_CHANNEL}"), "/?range=30d".to_owned(), "/?range=24h".to_owned()];
    println!("\n{:<34} {:>16} {:>16} {:>8}", "explorer, quiet / live", "quiet p50 / p95", "live p50 / p95", "p50 x");
    for page in pages {
        let url = format!("{}{page}", server.base);
        let (quiet50, quiet95, _) = measure(http, &url, &server.cookie).await;
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let trickle = tokio::spawn({
            let (http, collect, site) = (http.clone(), format!("{}/api/collect", server.base), server.site);
            async move {
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                for n in 0u64.. {
                    tokio::select! {
                        _ = tick.tick() => {}
                        _ = stopped.changed() => break,
                    }
                    let event = serde_json::json!({
                        "site": site, "type": "pageview", "tracker_vid": format!("live-{}", n % 40),
                        "url": format!("https://bench.example/live/{}?utm_source=live", n % 7),
                        "referrer": "https://www.google.com/",
                    });
                    let sent = http.post(&collect).header("user-agent", LIVE_UA).json(&event).send().await;
                    assert_eq!(sent.expect("collect").status(), 202, "the trickle's event");
                }
            }
        });
        let (live50, live95, _) = measure(http, &url, &server.cookie).await;
        stop.send(true).ok();
        trickle.await.expect("the trickle");
        println!("{page:<34} {quiet50:>7.2} / {quiet95:>6.2} {live50:>7.2} / {live95:>6.2} {:>8.2}", live50 / quiet50);
    }
    println!("Load average: {}", load_average());
}

/// A desktop browser, for the live trickle's events.
const LIVE_UA: &str =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36";

/// What the overview's document is made of: each field alone, through /graphql.
async fn measure_overview_fields(http: &reqwest::Client, server: &common::Server, site: i64) {
    let fields = [
        (
            "stats",
            "stats(siteId: $s, timeRange: $r) { overview { uniqueVisitors sessions pageviews hotLeads } \
             topPages { page views } countries { country visitors } }",
        ),
        (
            "traffic",
            "traffic(siteId: $s, timeRange: $r) { uniqueVisitors sessions pageviews hotLeads \
             buckets { start pageviews visitors sessions } topPages { page views } sources { channel sessions } }",
        ),
        ("visitors(first: 5)", "visitors(siteId: $s, timeRange: $r, first: 5) { nodes { trackerVid score } }"),
    ];

    println!("\n{:<34} {:>10} {:>10}", "overview field", "p50 ms", "p95 ms");
    for range in ["24h", "7d", "30d"] {
        for (name, field) in fields {
            let body = serde_json::json!({ "query": format!("query($s: Int!, $r: String) {{ {field} }}"), "variables": { "s": site, "r": range } }).to_string();
            let mut times = Vec::with_capacity(RUNS);
            for run in 0..WARM_UP + RUNS {
                let started = Instant::now();
                let reply = http
                    .post(format!("{}/graphql", server.base))
                    .header("cookie", &server.cookie)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await
                    .expect("graphql");
                let text = reply.text().await.expect("body");
                assert!(!text.contains("\"errors\""), "{text}");
                if run >= WARM_UP {
                    times.push(started.elapsed());
                }
            }
            times.sort();
            println!(
                "{:<34} {:>10.2} {:>10.2}",
                format!("{name} {range}"),
                common::percentile(&times, 0.5),
                common::percentile(&times, 0.95)
            );
        }
    }
}
