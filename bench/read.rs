//! Read paths on a seeded dataset of about a million events: the visitor list
//! (limit 500), a profile, stats over 30 and 7 days, link analytics over 30 days and
//! the live stream. Each is
//! timed through REST, through GraphQL with the same document, and as a
//! direct service call, in the same run; it prints p50/p95 and the ratios.
//!
//! cargo bench --bench read                        (SQLite, 130,000 visitors, about 1M events)
//! BENCH_VISITORS=1300000 cargo bench --bench read (about 10M events; seeding takes a while)
//! BENCH_VISITORS=20000 cargo bench --bench read   (a quicker, smaller run)
//! BENCH_DATABASE_URL=postgres://... cargo bench --bench read
//! BENCH_REUSE_DATABASE=postgres://.../lt_bench_N cargo bench --bench read (measure again on a kept seed)
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

#[path = "common.rs"]
mod common;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::{
    future::Future,
    time::{Duration, Instant},
};

use leadtrail::{
    auth::Viewer,
    service::{
        analytics::{self, TimeRange, live, profile, stats, visitors},
        explore, funnels, link_stats,
    },
    state::AppState,
    time::now_ms,
};
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait};
use serde_json::{Value, json};

const WARM_UP: usize = 5;
const RUNS: usize = 60;

struct Sample {
    p50: f64,
    p95: f64,
}

async fn measure<F, Fut>(call: F) -> Sample
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    measure_runs(WARM_UP, RUNS, call).await
}

async fn measure_runs<F, Fut>(warm_up: usize, runs: usize, mut call: F) -> Sample
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..warm_up {
        call().await;
    }
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        call().await;
        times.push(started.elapsed());
    }
    times.sort();
    Sample { p50: common::percentile(&times, 0.5), p95: common::percentile(&times, 0.95) }
}

struct Route {
    name: &'static str,
    rest: String,
    document: &'static str,
    variables: Value,
    target_p95_ms: f64,
}

/// The date range of the Explore and goals cases: the last 30 days, but
/// starting the day after the site's first event when they would start on
/// or before it. A live site's 30-day range cuts a day that holds data, and
/// the visits crossing its start are then read apart; a fresh seed's data
/// begins where "30d" does, which measured only the easier case.
async fn range_inside_data(db: &DatabaseConnection, site: i64) -> Value {
    let today = chrono::Utc::now().date_naive();
    let month = today - chrono::Days::new(29);
    let first = explore::figures::first_event(db, site).await.expect("first event");
    let after_first =
        first.and_then(chrono::DateTime::from_timestamp_millis).map(|at| at.date_naive() + chrono::Days::new(1));
    let start = after_first.map_or(month, |after_first| after_first.max(month));
    json!([start.to_string(), today.to_string()])
}

/// Explore's dimensions, timed one by one ("" is the aggregate).
const EXPLORE_DIMENSIONS: [&str; 21] = [
    "",
    "visit:source",
    "visit:channel",
    "visit:referrer",
    "visit:utm_source",
    "visit:utm_medium",
    "visit:utm_campaign",
    "visit:device",
    "visit:browser",
    "visit:os",
    "visit:country",
    "visit:region",
    "visit:city",
    "visit:entry_page",
    "visit:exit_page",
    "visitor:status",
    "visitor:account",
    "event:page",
    "event:name",
    "time:day",
    "time:hour",
];

/// Copies whose first query waits for them to load, so it shows the cost.
/// They load on a connection of their own, as the server's do: the query
/// waiting for them holds one of the pool's.
fn waiting_copies(state: &AppState) -> std::sync::Arc<explore::visit_copy::VisitCopies> {
    use explore::visit_copy::{Loader, VisitCopies};
    let config = &state.config;
    let pool = leadtrail::db::read_pool(&state.db, &config.database_url, config.sqlite_synchronous, 1)
        .expect("the copies' connection");
    let loader =
        Loader { pool, wait: Duration::from_secs(3600), loads: Default::default(), tail_reads: Default::default() };
    std::sync::Arc::new(VisitCopies::new(loader))
}

/// Filtered whole-visit queries through the service, read from the rows
/// (no copies) and from a visit copy, one after the other in this run; and
/// what loading a copy costs the first query.
async fn visit_copy_against_rows(state: &AppState, viewer: &Viewer, site: i64, range: &Value, runs: usize) {
    let db = &state.db;
    let copies = waiting_copies(state);
    let one = json!([["is", "visit:channel", ["Organic Search"]]]);
    let two =
        json!([["is", "visit:channel", ["Organic Search", "Direct", "Email"]], ["is_not", "visit:device", ["tablet"]]]);
    let body = |dimension: &str, filters: &Value| {
        json!({ "site_id": site, "metrics": ["visitors", "visits", "pageviews", "bounce_rate"], "date_range": range,
                "dimensions": [dimension], "filters": filters })
    };
    let started = Instant::now();
    explore::run(db, viewer, Some(site), &body("visit:source", &one), (now_ms(), Some(copies.clone())))
        .await
        .expect("copy");
    let cold = started.elapsed().as_secs_f64() * 1000.0;
    println!(
        "\n{:<44} {:>17} {:>17} {:>7}",
        "Whole visits, service: rows vs visit copy", "rows p50/p95", "copy p50/p95", "ratio"
    );
    println!(
        "(the first query loaded the copy in {cold:.0} ms, RSS now {:.0} MB)",
        common::peak_rss_kib() as f64 / 1024.0
    );
    // The explore section's own event cases: read per event (the event copy).
    let three = json!([
        ["is", "visit:channel", ["Organic Search", "Direct", "Email"]],
        ["is_not", "visit:device", ["tablet"]],
        ["contains", "event:page", ["/"]]
    ]);
    let per_event = |dimension: &str, filters: &Value| {
        json!({ "site_id": site, "metrics": ["visitors", "pageviews"], "date_range": range,
                "dimensions": [dimension], "filters": filters })
    };
    let mut cases = Vec::new();
    for (label, filters) in [("1 filter", &one), ("2 filters", &two)] {
        for dimension in ["visit:source", "visit:country", "visit:entry_page", "time:day"] {
            cases.push((format!("{dimension} 30d, {label}"), body(dimension, filters)));
        }
    }
    cases.push(("event:page 30d, 1 filter".to_owned(), per_event("event:page", &one)));
    for dimension in ["visit:source", "event:page", "visit:country", "time:day"] {
        cases.push((format!("{dimension} 30d, 3 filters (event:page)"), per_event(dimension, &three)));
    }
    // The first event query loads the event copy.
    let started = Instant::now();
    explore::run(db, viewer, Some(site), &cases[8].1, (now_ms(), Some(copies.clone()))).await.expect("event copy");
    println!(
        "(the first event query loaded the event copy in {:.0} ms, RSS now {:.0} MB)",
        started.elapsed().as_secs_f64() * 1000.0,
        common::peak_rss_kib() as f64 / 1024.0
    );
    for (label, body) in &cases {
        let rows = measure_runs(1, runs, || async {
            explore::run(db, viewer, Some(site), body, (now_ms(), None)).await.expect("rows");
        })
        .await;
        let copied = measure_runs(1, runs, || async {
            explore::run(db, viewer, Some(site), body, (now_ms(), Some(copies.clone()))).await.expect("copy");
        })
        .await;
        println!(
            "{:<44} {:>8.2}/{:>8.2} {:>8.2}/{:>8.2} {:>7.3}",
            label,
            rows.p50,
            rows.p95,
            copied.p50,
            copied.p95,
            copied.p50 / rows.p50
        );
    }
}

/// A funnel and goal conversions through the service, from the rows and
/// from the copies, one after the other in the same run.
async fn funnel_copy_against_rows(state: &AppState, viewer: &Viewer, site: i64, range: &Value) {
    let db = &state.db;
    let copies = waiting_copies(state);
    let ask = || funnels::FunnelAsk {
        site_id: Some(site),
        steps: funnels::StepsAsked::Goals(["Docs", "Pricing", "Demo", "Form"].map(str::to_owned).to_vec()),
        window_days: Some(7),
        date_range: range.clone(),
        breakdown: None,
    };
    let started = Instant::now();
    let copied = funnels::report(db, viewer, ask(), (now_ms(), Some(copies.clone()))).await.expect("copy");
    let cold = started.elapsed().as_secs_f64() * 1000.0;
    let rows = funnels::report(db, viewer, ask(), (now_ms(), None)).await.expect("rows");
    let visitors = |report: &funnels::FunnelReport| report.figures.iter().map(|step| step.visitors).collect::<Vec<_>>();
    assert_eq!(visitors(&copied), visitors(&rows), "the copy and the rows agree");
    println!(
        "\n{:<44} {:>17} {:>17} {:>7}",
        "Funnel and goals, service: rows vs copies", "rows p50/p95", "copy p50/p95", "ratio"
    );
    println!(
        "(the first report loaded the copies in {cold:.0} ms, RSS now {:.0} MB; steps {:?})",
        common::peak_rss_kib() as f64 / 1024.0,
        visitors(&rows)
    );
    let rows = measure_runs(1, 5, || async {
        funnels::report(db, viewer, ask(), (now_ms(), None)).await.expect("rows");
    })
    .await;
    let copied = measure_runs(1, 10, || async {
        funnels::report(db, viewer, ask(), (now_ms(), Some(copies.clone()))).await.expect("copy");
    })
    .await;
    println!(
        "{:<44} {:>8.2}/{:>8.2} {:>8.2}/{:>8.2} {:>7.3}",
        "4-step funnel 30d, 7-day window",
        rows.p50,
        rows.p95,
        copied.p50,
        copied.p95,
        copied.p50 / rows.p50
    );
    let by_source = json!({ "site_id": site, "metrics": ["visitors", "events", "conversion_rate"], "date_range": range,
                            "dimensions": ["visit:source"], "filters": [["is", "event:goal", ["Form"]]] });
    let rows = measure_runs(1, 5, || async {
        explore::run(db, viewer, Some(site), &by_source, (now_ms(), None)).await.expect("rows");
    })
    .await;
    let copied = measure_runs(1, 10, || async {
        explore::run(db, viewer, Some(site), &by_source, (now_ms(), Some(copies.clone()))).await.expect("copy");
    })
    .await;
    println!(
        "{:<44} {:>8.2}/{:>8.2} {:>8.2}/{:>8.2} {:>7.3}",
        "goal conversions by source 30d",
        rows.p50,
        rows.p95,
        copied.p50,
        copied.p95,
        copied.p50 / rows.p50
    );
}

#[tokio::main]
async fn main() {
    let visitors: usize = std::env::var("BENCH_VISITORS").ok().and_then(|v| v.parse().ok()).unwrap_or(130_000);
    let server = common::start(|_| {}).await;
    let db = server.state.db.clone();
    let site = server.site;

    common::seed_unless_reused(&server, visitors).await;
    let site_model = entity::site::Entity::find_by_id(site).one(&db).await.expect("site").expect("site row");
    let viewer = Viewer::ApiKey { org_id: site_model.org_id, key_id: 0 };
    let top = visitors::list(
        &db,
        &viewer,
        visitors::ListQuery { site_id: site, range: TimeRange::Days30, bots: false, limit: 1, offset: 0 },
        now_ms(),
    )
    .await
    .expect("list");
    let vid = top.visitors[0].visitor.tracker_vid.clone();

    let routes = [
        Route {
            name: "visitor list (limit 500, 30d)",
            rest: format!("/api/visitor?siteId={site}&limit=500&timeRange=30d"),
            document: include_str!("../src/rest/documents/visitor_list.graphql"),
            variables: json!({ "siteId": site, "first": 500, "timeRange": "30d" }),
            target_p95_ms: 50.0,
        },
        Route {
            name: "visitor profile",
            rest: format!("/api/visitor/{vid}?siteId={site}"),
            document: include_str!("../src/rest/documents/visitor_profile.graphql"),
            variables: json!({ "siteId": site, "id": vid }),
            target_p95_ms: 20.0,
        },
        Route {
            name: "stats 30d",
            rest: format!("/api/stats?siteId={site}&timeRange=30d"),
            document: include_str!("../src/rest/documents/stats.graphql"),
            variables: json!({ "siteId": site, "timeRange": "30d" }),
            target_p95_ms: 100.0,
        },
        Route {
            name: "stats 7d",
            rest: format!("/api/stats?siteId={site}&timeRange=7d"),
            document: include_str!("../src/rest/documents/stats.graphql"),
            variables: json!({ "siteId": site, "timeRange": "7d" }),
            target_p95_ms: 50.0,
        },
        Route {
            name: "link analytics 30d",
            rest: format!("/api/link-analytics?siteId={site}&range=30d"),
            document: include_str!("../src/rest/documents/link_analytics.graphql"),
            variables: json!({ "siteId": site, "range": "30d" }),
            target_p95_ms: 100.0,
        },
        Route {
            name: "live stream (24h)",
            rest: format!("/api/visitors?siteId={site}"),
            document: include_str!("../src/rest/documents/live_stream.graphql"),
            variables: json!({ "siteId": site }),
            target_p95_ms: 30.0,
        },
    ];

    let http = reqwest::Client::new();
    println!();
    println!(
        "{:<30} {:>17} {:>17} {:>17} {:>12} {:>14}  target p95",
        "route", "REST p50/p95", "GraphQL p50/p95", "direct p50/p95", "REST/GQL", "GQL/direct"
    );
    // BENCH_ONLY=explore (or routes, desk, accounts, goals, csv) runs one section.
    let only = std::env::var("BENCH_ONLY").ok().filter(|only| !only.is_empty());
    let wanted = |section: &str| only.as_deref().is_none_or(|only| only == section);
    for (index, route) in routes.iter().enumerate().filter(|_| wanted("routes")) {
        let rest_url = format!("{}{}", server.base, route.rest);
        let rest = measure(|| async {
            let reply = http.get(&rest_url).header("cookie", &server.cookie).send().await.expect("rest");
            assert_eq!(reply.status(), 200, "{}", route.rest);
            reply.bytes().await.expect("rest body");
        })
        .await;
        let graphql_url = format!("{}/graphql", server.base);
        let body = json!({ "query": route.document, "variables": route.variables }).to_string();
        let graphql = measure(|| async {
            let reply = http
                .post(&graphql_url)
                .header("cookie", &server.cookie)
                .header("content-type", "application/json")
                .header("origin", &server.base)
                .body(body.clone())
                .send()
                .await
                .expect("graphql");
            let text = reply.text().await.expect("graphql body");
            assert!(!text.contains("\"errors\""), "{text}");
        })
        .await;
        let direct = match index {
            0 => {
                measure(|| async {
                    let query = visitors::ListQuery {
                        site_id: site,
                        range: TimeRange::Days30,
                        bots: false,
                        limit: 500,
                        offset: 0,
                    };
                    visitors::list(&db, &viewer, query, now_ms()).await.expect("list");
                })
                .await
            }
            1 => {
                measure(|| async {
                    let (_, visitor) = analytics::find_visitor(&db, &viewer, site, &vid).await.expect("visitor");
                    let ids = [visitor.id];
                    profile::sessions_of_visitors(&db, &ids).await.expect("sessions");
                    profile::identities_of_visitors(&db, &ids).await.expect("identities");
                    profile::clicks_of_visitors(&db, &ids).await.expect("clicks");
                    profile::recent_events(&db, visitor.id).await.expect("recent");
                    profile::form_events(&db, visitor.id).await.expect("forms");
                    profile::top_pages(&db, visitor.id).await.expect("top pages");
                    profile::daily_activity(&db, visitor.id).await.expect("daily");
                })
                .await
            }
            2 => {
                measure(|| async {
                    stats::stats(&db, &viewer, site, TimeRange::Days30, now_ms()).await.expect("stats");
                })
                .await
            }
            3 => {
                measure(|| async {
                    stats::stats(&db, &viewer, site, TimeRange::Days7, now_ms()).await.expect("stats");
                })
                .await
            }
            4 => {
                measure(|| async {
                    let filter = link_stats::AnalyticsFilter {
                        site_id: Some(site),
                        range: Some("30d".to_owned()),
                        ..Default::default()
                    };
                    link_stats::analytics(&db, &viewer, filter, now_ms()).await.expect("link analytics");
                })
                .await
            }
            _ => {
                measure(|| async {
                    live::stream(&db, &viewer, site, now_ms()).await.expect("live");
                })
                .await
            }
        };
        let verdict = if route.target_p95_ms.is_finite() {
            let met = rest.p95 < route.target_p95_ms;
            format!("< {} ms: {}", route.target_p95_ms, if met { "met" } else { "MISSED" })
        } else {
            "none".to_owned()
        };
        println!(
            "{:<30} {:>8.2}/{:>8.2} {:>8.2}/{:>8.2} {:>8.2}/{:>8.2} {:>12.2} {:>14.2}  {verdict}",
            route.name,
            rest.p50,
            rest.p95,
            graphql.p50,
            graphql.p95,
            direct.p50,
            direct.p95,
            rest.p50 / graphql.p50,
            graphql.p50 / direct.p50,
        );
    }
    println!("\nREST/GQL is REST's p50 over GraphQL's for the same document; the target is at most 1.2.");

    // The lead desk through REST (a page of 50, as /leads shows): search,
    // each filter and each sort, beside the plain list in the same run.
    let target = common::desk_target_ms(visitors);
    println!(
        "\n{:<28} {:>17} {:>12}  target p95 < {target} ms",
        "GET /api/visitor 30d, 50 +", "p50/p95 ms", "p50 / plain"
    );
    let mut plain = 0.0;
    for (name, query) in common::DESK_CASES.iter().filter(|_| wanted("desk")) {
        let url = format!("{}/api/visitor?siteId={site}&timeRange=30d&limit=50&{query}", server.base);
        let sample = measure(|| async {
            let reply = http.get(&url).header("cookie", &server.cookie).send().await.expect("desk");
            assert_eq!(reply.status(), 200, "{url}");
            reply.bytes().await.expect("desk body");
        })
        .await;
        if query.is_empty() {
            plain = sample.p50;
        }
        let met = if sample.p95 < target { "met" } else { "MISSED" };
        println!("{name:<28} {:>8.2}/{:>8.2} {:>12.2}  {met}", sample.p50, sample.p95, sample.p50 / plain);
    }

    // Accounts (design §18) through REST: the list over 30 days as
    // `/accounts` asks for it, each sort, the hot filter and a search, then
    // the top account's page. Target (issue 36): p95 < 50 ms at 10M events.
    if wanted("accounts") {
        println!(
            "\n{:<36} {:>17} {:>12}  target p95 < 50 ms",
            "GET /api/accounts 30d, 50 +", "p50/p95 ms", "p50 / plain"
        );
        let list = |query: &str| format!("{}/api/accounts?siteId={site}&timeRange=30d&limit=50{query}", server.base);
        let top: Value = http
            .get(list(""))
            .header("cookie", &server.cookie)
            .send()
            .await
            .expect("accounts")
            .json()
            .await
            .expect("accounts body");
        let key = top["accounts"][0]["key"].as_str().expect("the seed makes accounts").to_owned();
        println!("({} accounts in 30 days; the top one is {key})", top["total"]);
        let mut plain = 0.0;
        let cases = [
            ("plain (baseline)".to_owned(), list("")),
            ("sort=last_seen".to_owned(), list("&sort=last_seen")),
            ("sort=people".to_owned(), list("&sort=people")),
            ("sort=visitors".to_owned(), list("&sort=visitors")),
            ("sort=pageviews".to_owned(), list("&sort=pageviews")),
            ("hot=true".to_owned(), list("&hot=true")),
            ("q=acme".to_owned(), list("&q=acme")),
            ("page=5".to_owned(), list("&page=5")),
            (
                "account page (top)".to_owned(),
                format!("{}/api/accounts/{}?siteId={site}", server.base, urlencoding(&key)),
            ),
        ];
        for (name, url) in cases {
            let sample = measure(|| async {
                let reply = http.get(&url).header("cookie", &server.cookie).send().await.expect("accounts");
                assert_eq!(reply.status(), 200, "{url}");
                reply.bytes().await.expect("accounts body");
            })
            .await;
            if plain == 0.0 {
                plain = sample.p50;
            }
            let met = if sample.p95 < 50.0 { "met" } else { "MISSED" };
            println!("{name:<36} {:>8.2}/{:>8.2} {:>12.2}  {met}", sample.p50, sample.p95, sample.p50 / plain);
        }
    }

    // Explore (POST /api/v2/query, design §17): every dimension over 30 days,
    // then with one and with three filters, and a year of days.
    println!("\n{:<44} {:>17} {:>8}", "POST /api/v2/query, visitors + pageviews", "p50/p95 ms", "target");
    common::reset_peak_rss();
    let rss_before = common::peak_rss_kib();
    let one = json!([["is", "visit:channel", ["Organic Search"]]]);
    let three = json!([
        ["is", "visit:channel", ["Organic Search", "Direct", "Email"]],
        ["is_not", "visit:device", ["tablet"]],
        ["contains", "event:page", ["/"]]
    ]);
    let range = range_inside_data(&server.state.db, site).await;
    println!("(\"30d\" below is {range}: the last 30 days, starting a day into the data when they would not)");
    let mut cases: Vec<(String, serde_json::Value, f64)> = Vec::new();
    for dimension in EXPLORE_DIMENSIONS {
        let metrics = if dimension.starts_with("event:") {
            json!(["visitors", "pageviews"])
        } else {
            json!(["visitors", "visits", "bounce_rate"])
        };
        let dimensions = if dimension.is_empty() { json!([]) } else { json!([dimension]) };
        let body = json!({ "site_id": site, "metrics": metrics, "date_range": range, "dimensions": dimensions });
        cases.push((format!("{} 30d", if dimension.is_empty() { "(aggregate)" } else { dimension }), body, 100.0));
    }
    for (label, filters) in [("1 filter", &one), ("3 filters", &three)] {
        for dimension in ["visit:source", "event:page", "visit:country", "time:day"] {
            let body = json!({ "site_id": site, "metrics": ["visitors", "pageviews"], "date_range": range,
                               "dimensions": [dimension], "filters": filters });
            cases.push((format!("{dimension} 30d, {label}"), body, 500.0));
        }
    }
    cases.push((
        "time:day 12mo".to_owned(),
        json!({ "site_id": site, "metrics": ["visitors", "pageviews"], "date_range": "12mo", "dimensions": ["time:day"] }),
        100.0,
    ));
    let mut explore_missed = 0;
    // BENCH_EXPLORE_RUNS (10) calls each: the queries the rows answer take
    // seconds at 10M events.
    let runs: usize = std::env::var("BENCH_EXPLORE_RUNS").ok().and_then(|runs| runs.parse().ok()).unwrap_or(10);
    if !wanted("explore") {
        cases.clear();
    }
    for (name, body, target) in &cases {
        let url = format!("{}/api/v2/query", server.base);
        // Ten calls each: these reads are slow enough that sixty would take an hour.
        let sample = measure_runs(1, runs, || async {
            let reply = http.post(&url).header("cookie", &server.cookie).json(body).send().await.expect("explore");
            assert_eq!(reply.status(), 200, "{name}");
            reply.bytes().await.expect("explore body");
        })
        .await;
        let met = sample.p95 < *target;
        explore_missed += usize::from(!met);
        println!(
            "{name:<44} {:>8.2}/{:>8.2} {:>8}  {}",
            sample.p50,
            sample.p95,
            target,
            if met { "met" } else { "MISSED" }
        );
    }
    let grown = common::peak_rss_kib().saturating_sub(rss_before) as f64 / 1024.0;
    println!(
        "{} of {} Explore queries met their target; peak RSS grew {grown:.1} MB.",
        cases.len() - explore_missed,
        cases.len()
    );
    if wanted("explore") {
        visit_copy_against_rows(&server.state, &viewer, site, &range, runs).await;
    }

    // Goals, funnels and attribution (design §20): goal conversions by
    // source, a 4-step funnel over 30 days, and the attribution report, each
    // beside the same range's plain Explore aggregate in the same run.
    if wanted("goals") {
        let goals = [
            json!({ "name": "Pricing", "pagePath": "/pricing" }),
            json!({ "name": "Docs", "pagePath": "/docs*" }),
            json!({ "name": "Demo", "pagePath": "/demo" }),
            json!({ "name": "Form", "eventName": "form_submit" }),
        ];
        let graphql_url = format!("{}/graphql", server.base);
        // A reused database has them already; its refusal is fine.
        for goal in goals {
            let body = json!({ "query": "mutation($s: Int!, $i: GoalInput!) { createGoal(siteId: $s, input: $i) { id name } }",
                               "variables": { "s": site, "i": goal } });
            http.post(&graphql_url)
                .header("cookie", &server.cookie)
                .header("origin", &server.base)
                .json(&body)
                .send()
                .await
                .expect("goal");
        }
        let plain = json!({ "site_id": site, "metrics": ["visitors"], "date_range": range });
        let by_source = json!({ "site_id": site, "metrics": ["visitors", "events", "conversion_rate"], "date_range": range,
                                "dimensions": ["visit:source"], "filters": [["is", "event:goal", ["Form"]]] });
        let funnel = json!({ "site_id": site, "steps": ["Docs", "Pricing", "Demo", "Form"], "window_days": 7, "date_range": range });
        let attribution = json!({ "site_id": site, "model": "linear", "by": "source", "date_range": range });
        let cases: [(&str, &str, &serde_json::Value, f64); 4] = [
            ("Explore aggregate 30d (baseline)", "/api/v2/query", &plain, f64::INFINITY),
            ("goal conversions by source 30d", "/api/v2/query", &by_source, 100.0),
            ("4-step funnel 30d, 7-day window", "/api/v2/funnel", &funnel, 500.0),
            ("attribution, linear by source 30d", "/api/v2/attribution", &attribution, 200.0),
        ];
        println!(
            "\n{:<40} {:>17} {:>12} {:>8}       {:>12}",
            "Goals, funnels, attribution", "p50/p95 ms", "p50 / base", "target", "peak RSS +MB"
        );
        // BENCH_GOALS_RUNS (10) calls each: more steady the ratios of short calls.
        let goal_runs: usize = std::env::var("BENCH_GOALS_RUNS").ok().and_then(|runs| runs.parse().ok()).unwrap_or(10);
        let mut base = 0.0;
        for (name, path, body, target) in cases {
            let url = format!("{}{path}", server.base);
            common::reset_peak_rss();
            let rss_before = common::peak_rss_kib();
            let sample = measure_runs(1, goal_runs, || async {
                let reply = http.post(&url).header("cookie", &server.cookie).json(body).send().await.expect("goals");
                assert_eq!(reply.status(), 200, "{name}");
                reply.bytes().await.expect("goals body");
            })
            .await;
            if base == 0.0 {
                base = sample.p50;
            }
            let verdict = if target.is_finite() { if sample.p95 < target { "met" } else { "MISSED" } } else { "" };
            let grown = common::peak_rss_kib().saturating_sub(rss_before) as f64 / 1024.0;
            println!(
                "{name:<40} {:>8.2}/{:>8.2} {:>12.2} {:>8}  {verdict:<6} {grown:>10.1}",
                sample.p50,
                sample.p95,
                sample.p50 / base,
                target
            );
        }
        funnel_copy_against_rows(&server.state, &viewer, site, &range).await;
        // The report keeps its closed days; the first one after they were
        // forgotten (late data, an erasure, retention) computes them all.
        let url = format!("{}/api/v2/attribution", server.base);
        let mut cold = Vec::new();
        for _ in 0..3 {
            for table in ["credit_day_fills", "credit_days"] {
                server.state.db.execute_unprepared(&format!("DELETE FROM {table}")).await.expect("forget the days");
            }
            let started = Instant::now();
            let reply = http.post(&url).header("cookie", &server.cookie).json(&attribution).send().await.expect("cold");
            assert_eq!(reply.status(), 200, "cold attribution");
            reply.bytes().await.expect("cold body");
            cold.push(started.elapsed());
        }
        cold.sort();
        println!(
            "{:<40} {:>8.2}/{:>8.2} {:>12.2}    (no target: once after a forgetting)",
            "attribution, days forgotten first",
            common::percentile(&cold, 0.5),
            common::percentile(&cold, 1.0),
            common::percentile(&cold, 0.5) / base
        );
    }

    // The CSV export streams: its peak memory stays flat whatever it holds.
    // Each export is read to its end by a client that counts the bytes; the
    // peak resident memory of the whole process is taken before and after.
    println!("\n{:<34} {:>10} {:>10} {:>12} {:>16}", "CSV export (30d)", "rows", "MB", "seconds", "peak RSS +MB");
    for (name, query) in [
        ("identified (small)", "status=identified"),
        ("everyone (all rows)", ""),
        ("anonymous (most rows)", "status=anonymous"),
    ]
    .into_iter()
    .filter(|_| wanted("csv"))
    {
        let url = format!("{}/api/visitor?siteId={site}&timeRange=30d&format=csv&{query}", server.base);
        common::reset_peak_rss();
        let before = common::peak_rss_kib();
        let started = Instant::now();
        let mut reply = http.get(&url).header("cookie", &server.cookie).send().await.expect("export");
        assert_eq!(reply.status(), 200, "{url}");
        let (mut bytes, mut rows) = (0usize, 0usize);
        while let Some(chunk) = reply.chunk().await.expect("export chunk") {
            bytes += chunk.len();
            rows += chunk.iter().filter(|&&b| b == b'\n').count();
        }
        let seconds = started.elapsed().as_secs_f64();
        let grown = common::peak_rss_kib().saturating_sub(before) as f64 / 1024.0;
        println!(
            "{name:<34} {:>10} {:>10.1} {seconds:>12.2} {grown:>16.1}",
            rows.saturating_sub(1),
            bytes as f64 / 1e6
        );
    }
}

/// `text` as one path segment.
fn urlencoding(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>().replace('+', "%20")
}
