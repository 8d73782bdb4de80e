//! `POST /api/v2/query` speaks Plausible's Stats API v2: the request
//! examples of its reference (re-typed in `tests/fixtures/plausible_v2`,
//! the site's domain swapped in) get answers of its shapes; bad queries get
//! 400 naming the field; another org's site is 404; the site's time zone is
//! validated and moves day boundaries; GraphQL's `explore` answers the same.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, traffic::at};
use leadtrail::time::{DAY_MS, HOUR_MS, now_ms};
use serde_json::{Value, json};

/// Which examples this service refuses, and why: goals (design §20) and
/// segments are not configured on a fresh site, as Plausible refuses a goal
/// or segment that does not exist.
const REFUSED: [(&str, &str); 3] = [
    ("filtering-by-segment.json", "segment"),
    ("revenue-warning.json", "not configured"),
    ("behavioral-filters.json", "not configured"),
];

fn fixtures() -> Vec<(String, Value)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plausible_v2");
    let mut found: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap())
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(found.len() >= 16, "the reference's examples are all here");
    found
}

fn assert_shape(name: &str, body: &Value, answer: &Value) {
    let metrics = body["metrics"].as_array().unwrap().len();
    let dimensions = body.get("dimensions").and_then(Value::as_array).map_or(0, Vec::len);
    let results = answer["results"].as_array().unwrap_or_else(|| panic!("{name}: results {answer}"));
    if dimensions == 0 {
        assert_eq!(results.len(), 1, "{name}: an aggregate is one row");
    }
    for row in results {
        assert_eq!(row["metrics"].as_array().unwrap().len(), metrics, "{name}: {row}");
        assert_eq!(row["dimensions"].as_array().unwrap().len(), dimensions, "{name}: {row}");
        assert!(row.get("comparison").is_none_or(Value::is_null), "{name}: no comparison was asked");
    }
    assert!(answer["meta"].is_object(), "{name}: meta");
    let query = &answer["query"];
    for key in ["site_id", "metrics", "date_range", "filters", "dimensions", "order_by", "include", "pagination"] {
        assert!(query.get(key).is_some(), "{name}: the echoed query has {key}: {query}");
    }
    assert_eq!(query["metrics"], body["metrics"], "{name}");
    let range = query["date_range"].as_array().unwrap();
    for end in range {
        chrono::DateTime::parse_from_rfc3339(end.as_str().unwrap()).unwrap_or_else(|_| panic!("{name}: {end}"));
    }
    let include = body.get("include").cloned().unwrap_or(json!({}));
    if include["time_labels"] == json!(true) {
        assert!(answer["meta"]["time_labels"].as_array().is_some_and(|labels| !labels.is_empty()), "{name}");
    }
    if include["total_rows"] == json!(true) {
        assert!(answer["meta"]["total_rows"].is_u64(), "{name}");
    }
    if include["imports"] == json!(true) {
        assert_eq!(answer["meta"]["imports_included"], json!(false), "{name}");
    }
    if let Some(limit) = body.pointer("/pagination/limit").and_then(Value::as_u64) {
        assert!(results.len() as u64 <= limit, "{name}");
    }
}

#[tokio::test]
async fn the_reference_examples_get_plausibles_shapes() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Conformance", "conformance.example").await;
        let now = now_ms();
        let mut events = Vec::new();
        for (n, (page, query)) in
            [("/docs", "?utm_source=newsletter&utm_medium=email"), ("/pricing", ""), ("/blog/x", "")].iter().enumerate()
        {
            let url = format!("https://conformance.example{page}{query}");
            let event = json!({ "site": site, "type": "pageview", "tracker_vid": format!("c{n}"), "url": url,
                                "props": { "is_customer": "true" } });
            events.push(at(event, now - (n as i64 + 1) * DAY_MS - HOUR_MS));
        }
        app.collect(json!({ "events": events })).await.expect(202);
        for (name, mut body) in fixtures() {
            body["site_id"] = json!("conformance.example");
            let reply = client.post("/api/v2/query", body.clone()).await;
            if let Some((_, reason)) = REFUSED.iter().find(|(refused, _)| *refused == name) {
                assert_eq!(reply.status.as_u16(), 400, "{name}: {}", reply.text);
                assert!(reply.body["message"].as_str().unwrap().contains(reason), "{name}: {}", reply.text);
                assert!(reply.body["field"].as_str().unwrap().starts_with("filters"), "{name}: {}", reply.text);
                continue;
            }
            assert_eq!(reply.status.as_u16(), 200, "{name}: {}", reply.text);
            assert_shape(&name, &body, &reply.body);
            // The echo runs again to the same answer.
            let echo = client.post("/api/v2/query", reply.body["query"].clone()).await;
            assert_eq!(echo.expect(200)["results"], reply.body["results"], "{name}: the echoed query");
        }
        // The aggregate example counts what was collected (the last 7 whole days).
        let aggregate = client
            .post("/api/v2/query", json!({ "site_id": site, "metrics": ["visitors", "events"], "date_range": "7d" }))
            .await;
        assert_eq!(aggregate.expect(200)["results"][0]["metrics"], json!([3, 3]));
        // The time-labels example: every hour of today, labelled as Plausible does.
        let labels = client
            .post(
                "/api/v2/query",
                json!({ "site_id": site, "metrics": ["visitors"], "date_range": "day", "dimensions": ["time:hour"],
                        "include": { "time_labels": true } }),
            )
            .await;
        let labels = labels.expect(200)["meta"]["time_labels"].as_array().unwrap().clone();
        assert_eq!(labels.len(), 24);
        assert!(labels[0].as_str().unwrap().ends_with(" 00:00:00"), "{labels:?}");
        // Pagination with the total before it.
        let page = client
            .post(
                "/api/v2/query",
                json!({ "site_id": site, "metrics": ["visitors"], "date_range": "7d", "dimensions": ["event:page"],
                        "include": { "total_rows": true }, "pagination": { "limit": 2, "offset": 1 },
                        "order_by": [["event:page", "asc"]] }),
            )
            .await;
        let page = page.expect(200);
        assert_eq!(page["meta"]["total_rows"], json!(3));
        assert_eq!(page["results"].as_array().unwrap().len(), 2);
        assert_eq!(page["results"][0]["dimensions"], json!(["/docs"]));
    }
}

#[tokio::test]
async fn bad_queries_are_400_with_the_field_and_other_orgs_sites_are_404() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Owner", "owned.example").await;
        let (stranger, _) = app.user_with_site("Stranger", "elsewhere.example").await;
        let good = json!({ "site_id": site, "metrics": ["visitors"], "date_range": "7d" });
        let with = |key: &str, value: Value| {
            let mut body = good.clone();
            body[key] = value;
            body
        };
        let cases = [
            (with("metrics", json!(["visitorz"])), "metrics"),
            (with("dimensions", json!(["visit:planet"])), "dimensions"),
            (with("filters", json!([["equals", "visit:country", ["DE"]]])), "filters[0]"),
            (with("filters", json!([["matches", "event:page", ["(unclosed"]]])), "filters[0]"),
            (with("filters", json!([["matches", "event:page", ["a{1000}{1000}{1000}"]]])), "filters[0]"),
            (
                json!({ "site_id": site, "metrics": ["bounce_rate"], "date_range": "7d", "dimensions": ["event:name"] }),
                "metrics",
            ),
            (with("date_range", json!(["2024-02-01", "2024-01-01"])), "date_range"),
            (with("date_range", json!("fortnight")), "date_range"),
            (
                with("dimensions", json!(["visit:os", "visit:browser", "visit:device", "visit:country", "visit:city"])),
                "dimensions",
            ),
            (with("pagination", json!({ "limit": 10_001 })), "pagination"),
            (with("order_by", json!([["pageviews", "desc"]])), "order_by"),
            (with("colour", json!("red")), "colour"),
            (with("date_range", json!(["0001-01-01", "9999-12-31"])), "date_range"),
            (
                json!({ "site_id": site, "metrics": ["visitors"], "date_range": ["2000-01-01", "2026-01-01"], "dimensions": ["time:hour"] }),
                "dimensions",
            ),
            (json!({ "metrics": ["visitors"], "date_range": "7d" }), "site_id"),
        ];
        for (body, field) in cases {
            let reply = client.post("/api/v2/query", body.clone()).await;
            assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
            assert_eq!(reply.body["field"], json!(field), "{body}: {}", reply.text);
            assert!(!reply.body["message"].as_str().unwrap().is_empty());
        }
        // Another org's site, by id or by domain, does not exist for the caller.
        for site_id in [json!(site), json!("owned.example"), json!(999_999)] {
            let reply = stranger
                .post("/api/v2/query", json!({ "site_id": site_id, "metrics": ["visitors"], "date_range": "7d" }))
                .await;
            reply.expect_error(404, "NOT_FOUND");
        }
        // No session, no answer.
        let reply = app.client().post("/api/v2/query", good.clone()).await;
        assert_eq!(reply.status.as_u16(), 401, "{}", reply.text);
        // An API key of the org reads it.
        let created = client.graphql("mutation { createApiKey(name: \"stats\") { key } }", json!({})).await;
        let key = created["data"]["createApiKey"]["key"].as_str().unwrap().to_owned();
        let reply = app.client().with_bearer(&key).post("/api/v2/query", good.clone()).await;
        assert_eq!(reply.expect(200)["query"]["site_id"], json!("owned.example"));
    }
}

#[tokio::test]
async fn the_sites_time_zone_is_validated_and_moves_day_boundaries() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Zone", "zone.example").await;
        for bad in ["Mars/Olympus", "", "+02:00"] {
            let reply = client.put(&format!("/api/sites/{site}"), json!({ "timezone": bad })).await;
            assert_eq!(reply.status.as_u16(), 400, "{bad}: {}", reply.text);
            assert_eq!(reply.body["field"], json!("timezone"));
        }
        client.put(&format!("/api/sites/{site}"), json!({ "timezone": "Asia/Tokyo" })).await.expect(200);
        let read = client.graphql(&format!("{{ site(id: {site}) {{ timezone }} }}"), json!({})).await;
        assert_eq!(read["data"]["site"]["timezone"], json!("Asia/Tokyo"));
        // 23:30 UTC two days ago is 08:30 the next day in Tokyo.
        let day = (now_ms() / DAY_MS - 2) * DAY_MS;
        let late = day + 23 * HOUR_MS + 30 * 60_000;
        let event = json!({ "site": site, "type": "pageview", "tracker_vid": "tokyo", "url": "https://zone.example/" });
        app.collect(at(event, late)).await.expect(202);
        let query =
            json!({ "site_id": site, "metrics": ["pageviews"], "date_range": "7d", "dimensions": ["time:day"] });
        let reply = client.post("/api/v2/query", query.clone()).await;
        let tokyo_day = chrono::DateTime::from_timestamp_millis(late + 9 * HOUR_MS).unwrap().date_naive();
        assert_eq!(reply.expect(200)["results"], json!([{ "dimensions": [tokyo_day.to_string()], "metrics": [1] }]));
        assert!(reply.body["query"]["date_range"][0].as_str().unwrap().ends_with("T00:00:00+09:00"));
        client.put(&format!("/api/sites/{site}"), json!({ "timezone": "UTC" })).await.expect(200);
        let reply = client.post("/api/v2/query", query).await;
        let utc_day = chrono::DateTime::from_timestamp_millis(late).unwrap().date_naive();
        assert_eq!(reply.expect(200)["results"][0]["dimensions"], json!([utc_day.to_string()]));
    }
}

#[tokio::test]
async fn graphql_explore_answers_as_the_rest_route_does() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Graph", "graph.example").await;
        let event = json!({ "site": site, "type": "pageview", "tracker_vid": "g1", "url": "https://graph.example/a?utm_campaign=winter" });
        app.collect(at(event, now_ms() - DAY_MS)).await.expect(202);
        let rest = client
            .post(
                "/api/v2/query",
                json!({ "site_id": site, "metrics": ["visitors", "percentage"], "date_range": "7d",
                        "dimensions": ["visit:utm_campaign"], "include": { "comparisons": { "mode": "previous_period" } } }),
            )
            .await;
        let rest = rest.expect(200).clone();
        assert_eq!(rest["results"][0]["dimensions"], json!(["winter"]));
        assert_eq!(rest["results"][0]["metrics"], json!([1, 100.0]));
        // The earlier period had no visitors: its percentage is null, so is the change.
        assert_eq!(rest["results"][0]["comparison"]["change"], json!([100, null]));
        let graph = client
            .graphql(
                "query($site: Int) { explore(siteId: $site, query: { metrics: [\"visitors\", \"percentage\"], dateRange: \"7d\",
                   dimensions: [\"visit:utm_campaign\"], include: {comparisons: {mode: \"previous_period\"}} }) {
                   results { dimensions metrics comparison { dimensions metrics change } } meta query } }",
                json!({ "site": site }),
            )
            .await;
        assert_eq!(graph["data"]["explore"]["results"], rest["results"], "{graph}");
        let plain = client
            .graphql(
                "query($site: Int) { explore(siteId: $site, query: { metrics: [\"visitors\"], dateRange: \"7d\" }) { results { comparison { change } } } }",
                json!({ "site": site }),
            )
            .await;
        assert_eq!(plain["data"]["explore"]["results"][0]["comparison"], Value::Null, "GraphQL keeps the field, null");
        assert_eq!(graph["data"]["explore"]["query"], rest["query"]);
        let bad = client
            .graphql(
                "query($site: Int) { explore(siteId: $site, query: { metrics: [\"nope\"], dateRange: \"7d\" }) { meta } }",
                json!({ "site": site }),
            )
            .await;
        assert_eq!(bad["errors"][0]["extensions"]["code"], json!("VALIDATION_ERROR"), "{bad}");
        assert_eq!(bad["errors"][0]["extensions"]["field"], json!("query.metrics"));
    }
}

/// Random query bodies from Explore's own words (and some that are not):
/// every answer is 200 or 400, never a server error.
#[tokio::test]
async fn random_query_bodies_are_answered_or_refused_never_a_server_error() {
    use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};
    const METRICS: [&str; 16] = [
        "visitors",
        "visits",
        "pageviews",
        "views_per_visit",
        "bounce_rate",
        "visit_duration",
        "events",
        "percentage",
        "conversion_rate",
        "total_revenue",
        "average_revenue",
        "identified_visitors",
        "hot_leads",
        "clicks",
        "nope",
        "",
    ];
    const DIMENSIONS: [&str; 16] = [
        "event:page",
        "event:name",
        "event:props:plan",
        "event:goal",
        "event:hostname",
        "visit:source",
        "visit:country",
        "visit:country_name",
        "visit:link",
        "visit:entry_page",
        "visitor:account",
        "time",
        "time:week",
        "time:month",
        "event:props:\"",
        "visit:nope",
    ];
    const OPERATORS: [&str; 9] =
        ["is", "is_not", "contains", "contains_not", "matches", "matches_not", "and", "not", "has_done"];
    const RANGES: [&str; 9] = ["day", "24h", "7d", "6mo", "all", "0d", "99999d", "month", "year"];
    for app in apps().await {
        let (client, site) = app.user_with_site("Fuzz", "fuzz.example").await;
        let event = json!({ "site": site, "type": "pageview", "tracker_vid": "f1", "url": "https://fuzz.example/a?utm_source=x" });
        app.collect(at(event, now_ms() - DAY_MS)).await.expect(202);
        let mut rng = StdRng::seed_from_u64(17);
        for case in 0..300 {
            let pick = |rng: &mut StdRng, from: &[&str]| -> Vec<String> {
                (0..rng.random_range(0..4)).map(|_| from.choose(rng).unwrap().to_string()).collect()
            };
            let filter = |rng: &mut StdRng| {
                let operator = *OPERATORS.choose(rng).unwrap();
                let dimension = *DIMENSIONS.choose(rng).unwrap();
                let value = ["/a", "(", "x", "", "^/.*$", "DE"][rng.random_range(0..6)];
                match operator {
                    "and" => json!(["and", [["is", dimension, [value]]]]),
                    "not" => json!(["not", ["contains", dimension, [value]]]),
                    "has_done" => json!(["has_done", ["is", dimension, [value]]]),
                    _ => json!([operator, dimension, [value]]),
                }
            };
            let range = if rng.random_bool(0.2) {
                let to = ["2025-12-31", "2026-02-01", "x"][rng.random_range(0..3)];
                json!(["2026-01-01", to])
            } else {
                json!(RANGES.choose(&mut rng).unwrap())
            };
            let mut body = json!({ "site_id": site, "metrics": pick(&mut rng, &METRICS), "date_range": range,
                                   "dimensions": pick(&mut rng, &DIMENSIONS) });
            if rng.random_bool(0.5) {
                body["filters"] = json!((0..rng.random_range(1..3)).map(|_| filter(&mut rng)).collect::<Vec<_>>());
            }
            if rng.random_bool(0.3) {
                body["include"] = json!({ "comparisons": { "mode": "previous_period" }, "time_labels": rng.random_bool(0.5), "total_rows": true });
            }
            if rng.random_bool(0.2) {
                let direction = ["asc", "desc", "up"][rng.random_range(0..3)];
                body["order_by"] = json!([[METRICS.choose(&mut rng).unwrap(), direction]]);
            }
            let reply = client.post("/api/v2/query", body.clone()).await;
            let status = reply.status.as_u16();
            assert!(status == 200 || status == 400, "case {case}: {body} -> {status} {}", reply.text);
            if status == 400 {
                assert!(reply.body["field"].is_string(), "case {case}: a refusal names its field: {}", reply.text);
            }
        }
    }
}

/// A visit started by a tracking link's click is grouped under that link:
/// its visitors and pageviews beside the link's clicks.
#[tokio::test]
async fn visits_started_by_a_link_are_grouped_under_it_with_its_clicks() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Linker", "links.example").await;
        let link = client
            .create_link(json!({ "siteId": site, "slug": "spring", "destinationUrl": "https://links.example/pricing" }))
            .await;
        let short = url::Url::parse(link["fullUrl"].as_str().unwrap()).unwrap().path().to_owned();
        let mut landed = Vec::new();
        for vid in ["l1", "l2"] {
            let location = app.click(&short, &[]).await;
            landed.push(json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": location }));
        }
        // A third click nobody follows; a direct visit.
        app.click(&short, &[]).await;
        landed.push(json!({ "site": site, "type": "pageview", "tracker_vid": "d1", "url": "https://links.example/" }));
        app.collect(json!({ "events": landed })).await.expect(202);
        let reply = client
            .post(
                "/api/v2/query",
                json!({ "site_id": site, "metrics": ["visitors", "pageviews", "clicks"], "date_range": "day",
                        "dimensions": ["visit:link"] }),
            )
            .await;
        let results = reply.expect(200)["results"].clone();
        assert_eq!(
            results,
            json!([
                { "dimensions": ["spring"], "metrics": [2, 2, 3] },
                { "dimensions": ["(none)"], "metrics": [1, 1, 0] }
            ])
        );
        let filtered = client
            .post(
                "/api/v2/query",
                json!({ "site_id": site, "metrics": ["visitors"], "date_range": "day",
                        "filters": [["is", "visit:link", ["spring"]]] }),
            )
            .await;
        assert_eq!(filtered.expect(200)["results"][0]["metrics"], json!([2]));
    }
}
