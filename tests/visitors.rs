//! GET /api/visitor (scored list) and /api/visitors (live stream), fed through
//! the public endpoints; see `common::scenario` for the traffic.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps_with, scenario, traffic::pageview};
use leadtrail::{config::TrustProxy, time::iso};
use serde_json::{Value, json};

fn cloudflare(config: &mut leadtrail::config::Config) {
    config.trust_proxy = TrustProxy::Cloudflare;
}

fn column<'a>(rows: &'a Value, key: &str) -> Vec<&'a Value> {
    rows.as_array().expect("an array").iter().map(|row| &row[key]).collect()
}

#[tokio::test]
async fn the_list_is_scored_sorted_and_windowed() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let list = s.get(&format!("/api/visitor?siteId={}", s.site)).await;
        assert_eq!(list["total"], 2, "{list}");
        let rows = &list["visitors"];
        assert_eq!(column(rows, "tracker_vid"), ["alice", "bob"]);
        // alice: 4 views (1) + 1 return (2) + 2 minutes (1) + 1 high-value view (6)
        // + 1 form (10) + identified (10) = 30, and 15 for a visit two hours ago.
        assert_eq!(
            rows[0],
            json!({
                "tracker_vid": "alice", "status": "identified", "score": 45, "hot": true,
                "identified_user_id": "u-1", "country": "DE", "city": "Berlin",
                "device_type": "desktop", "browser": "Chrome", "lat": 52.52, "lon": 13.4,
                "first_seen": iso(s.alice_first), "last_seen": iso(s.alice_second + 30_000),
                "total_sessions": 2, "total_pageviews": 4, "clicks": 0, "total_time_seconds": 120,
                "high_value_views": 1, "is_bot": 0,
            })
        );
        // bob: 2 views (1) + 1 link click (3) + 15 recency.
        assert_eq!(rows[1]["score"], 19);
        assert_eq!(rows[1]["hot"], false);
        assert_eq!(rows[1]["status"], "anonymous");
        assert_eq!(rows[1]["identified_user_id"], Value::Null);
        assert_eq!(rows[1]["clicks"], 1);
        assert_eq!(rows[1]["device_type"], "mobile");
        assert_eq!(rows[1]["total_time_seconds"], 45);

        let in_24h = s.get(&format!("/api/visitor?siteId={}&timeRange=24h", s.site)).await;
        assert_eq!(column(&in_24h["visitors"], "tracker_vid"), ["alice", "bob"]);
        // dave was last seen 7 days and 1 hour ago: 0 for the view, 3 for recency (15 halved every 3 days).
        let in_30d = s.get(&format!("/api/visitor?siteId={}&timeRange=30d", s.site)).await;
        assert_eq!(column(&in_30d["visitors"], "tracker_vid"), ["alice", "bob", "dave"]);
        assert_eq!(column(&in_30d["visitors"], "score"), [45, 19, 3]);
        let all = s.get(&format!("/api/visitor?siteId={}&timeRange=all", s.site)).await;
        assert_eq!(column(&all["visitors"], "tracker_vid"), ["alice", "bob", "dave", "carol"]);
        assert_eq!(all["total"], 4);

        let page = s.get(&format!("/api/visitor?siteId={}&timeRange=all&limit=2", s.site)).await;
        assert_eq!(column(&page["visitors"], "tracker_vid"), ["alice", "bob"]);
        assert_eq!(page["total"], 4, "total counts every match, not the page");

        let bots = s.get(&format!("/api/visitor?siteId={}&filter=bot", s.site)).await;
        assert_eq!(column(&bots["visitors"], "tracker_vid"), ["crawler"]);
        assert_eq!(bots["visitors"][0]["is_bot"], 1);
        assert_eq!(bots["total"], 1);
    }
}

#[tokio::test]
async fn the_list_limit_defaults_to_50_and_is_capped_at_500() {
    for app in apps_with(cloudflare).await {
        let (client, site) = app.user_with_site("Cap", "cap.example").await;
        for batch in 0..6 {
            let events: Vec<Value> =
                (0..100).map(|i| pageview(site, &format!("v{batch}-{i}"), "https://cap.example/")).collect();
            app.collect(json!({ "events": events })).await.expect(202);
        }
        let default = client.get(&format!("/api/visitor?siteId={site}")).await;
        assert_eq!(default.expect(200)["visitors"].as_array().unwrap().len(), 50);
        assert_eq!(default.body["total"], 600);
        let capped = client.get(&format!("/api/visitor?siteId={site}&limit=1000")).await;
        assert_eq!(capped.expect(200)["visitors"].as_array().unwrap().len(), 500);
        assert_eq!(capped.body["total"], 600);
    }
}

#[tokio::test]
async fn the_list_refuses_bad_input_strangers_and_anonymous_callers() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        for query in [
            String::new(),
            "siteId=abc".to_owned(),
            format!("siteId={}&limit=0", s.site),
            format!("siteId={}&limit=many", s.site),
            format!("siteId={}&timeRange=1y", s.site),
            format!("siteId={}&filter=humans", s.site),
        ] {
            s.client.get(&format!("/api/visitor?{query}")).await.expect_error(400, "VALIDATION_ERROR");
        }
        s.client.get("/api/visitors").await.expect_error(400, "VALIDATION_ERROR");
        let (stranger, own_site) = app.user_with_site("Tess", "tess.example").await;
        stranger.get(&format!("/api/visitor?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        stranger.get(&format!("/api/visitors?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        let own = stranger.get(&format!("/api/visitor?siteId={own_site}&timeRange=all")).await;
        assert_eq!(own.expect(200)["total"], 0, "another site's visitors never leak");
        let anonymous = app.client();
        anonymous.get(&format!("/api/visitor?siteId={}", s.site)).await.expect_error(401, "UNAUTHORIZED");
        anonymous.get(&format!("/api/visitors?siteId={}", s.site)).await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn the_live_stream_shows_the_last_24_hours() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let live = s.get(&format!("/api/visitors?siteId={}", s.site)).await;
        assert_eq!(column(&live["visitors"], "tracker_vid"), ["bob", "alice"], "{live}");
        assert_eq!(
            live["visitors"][1],
            json!({
                "tracker_vid": "alice", "identified_user_id": "u-1", "country": "DE", "city": "Berlin",
                "region": "BE", "page": "/docs", "pages_viewed": 2, "duration_seconds": 30,
                "lat": 52.52, "lon": 13.4, "device_type": "desktop", "browser": "Chrome", "referrer": null,
                "last_seen": iso(s.alice_second + 30_000), "session_count": 2, "hot": true, "clicks": 0,
            })
        );
        let bob = &live["visitors"][0];
        assert_eq!(
            (&bob["page"], &bob["pages_viewed"], &bob["duration_seconds"]),
            (&json!("/blog"), &json!(2), &json!(45))
        );
        assert_eq!((&bob["hot"], &bob["clicks"], &bob["session_count"]), (&json!(false), &json!(1), &json!(1)));

        let activity = &live["activity"];
        assert_eq!(column(activity, "tracker_vid"), ["bob", "bob", "alice", "alice"]);
        assert_eq!(column(activity, "page"), ["/blog", "/", "/docs", "/"]);
        assert_eq!(
            activity[2],
            json!({
                "tracker_vid": "alice", "identified_user_id": "u-1", "type": "pageview", "page": "/docs",
                "timestamp": iso(s.alice_second + 30_000),
            })
        );
        // Two sessions in the window, of 30 and 45 seconds.
        assert_eq!(live["stats"], json!({ "unique_visitors": 2, "sessions": 2, "pageviews": 4, "avg_duration": 38 }));
        assert_eq!(live["countries"], json!([{ "country": "DE", "visitors": 1 }, { "country": "FR", "visitors": 1 }]));
        assert_eq!(
            live["pages"],
            json!([{ "page": "/", "views": 2 }, { "page": "/blog", "views": 1 }, { "page": "/docs", "views": 1 }])
        );
        let generated = leadtrail::time::parse_iso(live["timestamp"].as_str().unwrap()).unwrap();
        assert!(generated >= s.now, "timestamp is the generation time");
    }
}
