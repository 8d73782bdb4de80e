//! The explorer page (`/`) over HTTP: its tiles and panels say what
//! `POST /api/v2/query` says; a row is a link that filters the whole page
//! and the filter shows as a chip that removes it; a custom range and the
//! comparison live in the address; each panel opens in full and downloads
//! as CSV, with formula-like cells neutralised and markup escaped.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    Client, TestApp, apps_with,
    traffic::{DESKTOP_UA, PHONE_UA, at},
    web::expect_page,
};
use leadtrail::{
    config::TrustProxy,
    time::{DAY_MS, HOUR_MS, now_ms},
};
use serde_json::{Value, json};

async fn feed(app: &TestApp, site: i64) {
    let now = now_ms();
    let visits = [
        ("w1", "DE", "/pricing?utm_source=newsletter&utm_campaign=winter"),
        ("w2", "DE", "/docs?utm_source=newsletter&utm_campaign=winter"),
        ("s1", "FR", "/?utm_source=ads&utm_campaign=spring"),
        ("d1", "US", "/"),
        ("x1", "US", "/blog?utm_campaign=%3DHYPERLINK(%22http://evil%22)"),
        ("m1", "US", "/?utm_campaign=%3Cscript%3Ealert(1)%3C/script%3E"),
    ];
    for (n, (vid, country, path)) in visits.iter().enumerate() {
        let event =
            json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": format!("https://ex.example{path}") });
        let reply = app
            .collect_with(
                json!({ "events": [at(event, now - (n as i64 + 1) * DAY_MS - 2 * HOUR_MS)] }),
                DESKTOP_UA,
                &[("cf-ipcountry", country)],
            )
            .await;
        assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
    }
    app.state.writer.flush().await;
}

async fn query(client: &Client, body: Value) -> Value {
    client.post("/api/v2/query", body).await.expect(200).clone()
}

fn encoded(filters: &Value) -> String {
    url::form_urlencoded::byte_serialize(filters.to_string().as_bytes()).collect()
}

#[tokio::test]
async fn rows_filter_the_page_and_panels_open_in_full_with_their_csv() {
    for app in apps_with(|config| config.trust_proxy = TrustProxy::Cloudflare).await {
        let (client, site) = app.user_with_site("Marketer", "ex.example").await;
        feed(&app, site).await;

        let html = expect_page(&client.get("/").await, 200);
        for shows in ["Channels", "UTM campaigns", "Top pages", "Countries", "Germany", "Browsers", "Tracking links"] {
            assert!(html.contains(shows), "the overview shows {shows}");
        }
        assert!(!html.contains("<script>alert(1)"), "a campaign's markup is escaped");
        assert!(
            html.contains("&#60;script&#62;alert(1)"),
            "{}",
            html.lines().filter(|l| l.contains("alert")).collect::<Vec<_>>().join("\n")
        );
        // The tiles say what the API says for the same range.
        let all =
            query(&client, json!({ "site_id": site, "metrics": ["visitors", "pageviews"], "date_range": "30d" })).await;
        assert_eq!(all["results"][0]["metrics"], json!([6, 6]));

        // The winter row is a link to the page filtered by it.
        let filters = json!([["is", "visit:utm_campaign", ["winter"]]]);
        let href = format!("filters={}", encoded(&filters));
        assert!(html.contains(&href), "the winter row links to {href}");
        let filtered = expect_page(&client.get(&format!("/?range=30d&filters={}", encoded(&filters))).await, 200);
        assert!(filtered.contains("UTM campaign is winter"), "the filter shows as a chip");
        assert!(filtered.contains(r#"aria-label="Remove filter: UTM campaign is winter""#));
        let narrowed = query(
            &client,
            json!({ "site_id": site, "metrics": ["visitors"], "date_range": "30d", "dimensions": ["visit:country"], "filters": filters }),
        )
        .await;
        assert_eq!(narrowed["results"], json!([{ "dimensions": ["DE"], "metrics": [2] }]));
        assert!(filtered.contains("Germany"));
        assert!(filtered.contains("%22visit%3Acountry%22%2C%5B%22DE%22%5D"), "Germany's row filters by DE");
        assert!(
            !filtered.contains("%22visit%3Acountry%22%2C%5B%22FR%22%5D"),
            "every panel narrows: no winter visitor from France"
        );

        // A custom range and no comparison stay in the address.
        let today = chrono::Utc::now().date_naive();
        let from = (today - chrono::Duration::days(3)).to_string();
        let custom = format!("/?range=custom&from={from}&to={today}&compare=off");
        let page = expect_page(&client.get(&custom).await, 200);
        assert!(page.contains(&format!("{from} to {today}")));
        assert!(!page.contains("Visitors, previous period"), "no dashed previous period");
        let compared = expect_page(&client.get("/?range=7d").await, 200);
        assert!(compared.contains("Visitors, previous period"), "the previous period is drawn");
        assert!(compared.contains(r#"class="delta"#), "tiles carry their change");

        // A panel in full, and its CSV.
        let full = expect_page(&client.get("/?range=30d&panel=visit:utm_campaign").await, 200);
        assert!(full.contains("Download CSV") && full.contains("Back to the overview"));
        let csv =
            client.get(&format!("/api/explorer?siteId={site}&panel=visit:utm_campaign&format=csv&range=30d")).await;
        assert_eq!(csv.status.as_u16(), 200, "{}", csv.text);
        assert!(csv.headers["content-type"].to_str().unwrap().starts_with("text/csv"));
        let mut lines = csv.text.lines();
        assert_eq!(lines.next(), Some("visit:utm_campaign,visitors,percentage"));
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), 5, "{rows:?}");
        assert!(rows.contains(&"winter,2,33.3"), "{rows:?}");
        assert!(rows.iter().any(|row| row.starts_with("\"'=HYPERLINK")), "formulas are neutralised: {rows:?}");
        // The CSV needs a panel, and filters it like the page.
        let refused = client.get(&format!("/api/explorer?siteId={site}&format=csv")).await;
        assert_eq!(refused.status.as_u16(), 400);
        assert_eq!(refused.body["field"], json!("panel"));
        let narrowed = client
            .get(&format!("/api/explorer?siteId={site}&panel=visit:country&format=csv&filters={}", encoded(&filters)))
            .await;
        assert_eq!(narrowed.text.trim(), "visit:country,visitors,percentage\nDE,2,100.0");
    }
}

/// Several visits per visitor, several pages and a custom event per visit,
/// phones and desktops, a referrer, a goal: enough for every panel to have
/// rows that differ.
async fn feed_visits(app: &TestApp, client: &Client, site: i64) {
    let made = client
        .graphql(
            r#"mutation($site: Int!) { createGoal(siteId: $site, input: { name: "Pricing", pagePath: "/pricing" }) { id } }"#,
            json!({ "site": site }),
        )
        .await;
    assert!(made["errors"].is_null(), "{made}");
    let now = now_ms();
    let visits = [
        ("a", "DE", DESKTOP_UA, "/pricing?utm_source=newsletter&utm_medium=email", 1),
        ("a", "DE", DESKTOP_UA, "/docs", 3),
        ("b", "DE", PHONE_UA, "/?utm_source=newsletter&utm_medium=email", 2),
        ("c", "FR", PHONE_UA, "/blog", 4),
        ("c", "FR", PHONE_UA, "/pricing", 9),
        ("d", "US", DESKTOP_UA, "/docs?utm_source=ads&utm_campaign=spring", 5),
        ("e", "US", DESKTOP_UA, "/", 6),
    ];
    for (n, (vid, country, agent, path, days)) in visits.iter().enumerate() {
        let start = now - days * DAY_MS - (n as i64 + 1) * HOUR_MS;
        let url = |page: &str| format!("https://ex.example{page}");
        let mut events = vec![at(
            json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url(path), "referrer": "https://www.google.com/" }),
            start,
        )];
        // Every other visit reads a second page and signs up; the rest bounce.
        if n % 2 == 0 {
            events.push(at(
                json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url("/about") }),
                start + 60_000,
            ));
            events.push(at(
                json!({ "site": site, "type": "custom_event", "event_name": "signup", "tracker_vid": vid, "url": url("/about") }),
                start + 90_000,
            ));
        }
        let reply = app.collect_with(json!({ "events": events }), agent, &[("cf-ipcountry", country)]).await;
        assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
    }
    app.state.writer.flush().await;
    // Two of them are known people.
    for vid in ["a", "c"] {
        client
            .identify(json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@ex.example") }))
            .await
            .expect(200);
    }
}

#[tokio::test]
async fn every_panel_says_what_its_own_query_says() {
    // Every read waits for the site's Explore copies: the page counts its
    // panels in one pass over them, each query on its own.
    let configured = |config: &mut leadtrail::config::Config| {
        config.trust_proxy = TrustProxy::Cloudflare;
        config.explore_copy_wait_ms = 60_000;
    };
    for app in apps_with(configured).await {
        let (client, site) = app.user_with_site("Marketer", "ex.example").await;
        feed_visits(&app, &client, site).await;
        let views = [
            json!([]),
            json!([["is", "visit:country", ["DE", "FR"]]]),
            json!([["is_not", "visit:device", ["Mobile"]], ["contains", "visit:source", ["oogl"]]]),
            json!([["matches", "visit:utm_source", ["^news"]]]),
            json!([["is", "event:page", ["/pricing"]]]),
            json!([["has_done", ["is", "event:name", ["signup"]]]]),
            // Filters that keep some of a visit's events, not all or none.
            json!([["is_not", "event:page", ["/about"]]]),
            json!([["is", "event:goal", ["Pricing"]]]),
            json!([["contains", "event:page", ["pric"]], ["is", "visit:country", ["FR"]]]),
        ];
        for filters in views {
            let explorer = client
                .graphql(
                    "query($site: Int!, $input: ExplorerInput) { explorer(siteId: $site, input: $input) { \
                     totals { results { metrics comparison { metrics } } } \
                     panels { dimension metric result { results { dimensions metrics } } } } }",
                    json!({ "site": site, "input": { "range": "30d", "filters": filters.to_string() } }),
                )
                .await;
            assert!(explorer["errors"].is_null(), "{explorer}");
            // The tiles, this period and the one before, as the API counts them
            // (the page reads them with its panels in one pass).
            let tiles = [
                "visitors",
                "visits",
                "pageviews",
                "views_per_visit",
                "bounce_rate",
                "visit_duration",
                "identified_visitors",
                "hot_leads",
            ];
            let totals = query(
                &client,
                json!({ "site_id": site, "metrics": tiles, "date_range": "30d", "filters": filters,
                        "include": { "comparisons": { "mode": "previous_period" } } }),
            )
            .await;
            let shown = &explorer["data"]["explorer"]["totals"]["results"][0];
            assert_eq!(shown["metrics"], totals["results"][0]["metrics"], "the tiles under {filters}");
            assert_eq!(
                shown["comparison"]["metrics"], totals["results"][0]["comparison"]["metrics"],
                "the earlier period under {filters}"
            );
            let panels = explorer["data"]["explorer"]["panels"].as_array().unwrap();
            assert!(panels.len() >= 16, "{filters}: {} panels", panels.len());
            let mut rows_seen = 0;
            for panel in panels {
                let (dimension, metric) = (panel["dimension"].as_str().unwrap(), panel["metric"].as_str().unwrap());
                let mut metrics = vec![metric];
                match (dimension, metric) {
                    ("event:goal", _) => metrics.push("conversion_rate"),
                    (_, "visitors") => metrics.push("percentage"),
                    _ => {}
                }
                let own = query(
                    &client,
                    json!({ "site_id": site, "metrics": metrics, "date_range": "30d", "dimensions": [dimension],
                            "filters": filters, "pagination": { "limit": 9 } }),
                )
                .await;
                let shown: Vec<Value> = panel["result"]["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|row| json!({ "dimensions": row["dimensions"], "metrics": row["metrics"] }))
                    .collect();
                assert_eq!(json!(shown), own["results"], "{dimension} under {filters}");
                rows_seen += shown.len();
            }
            assert!(rows_seen > 0, "{filters}: the panels have rows");
        }
    }
}
