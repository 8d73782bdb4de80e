//! GET /api/visitor/:id, /api/stats and /api/session/:id, and the GraphQL
//! profile's statement count; see `common::scenario` for the traffic.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps_with, scenario, traffic::pageview};
use leadtrail::{
    config::TrustProxy,
    time::{HOUR_MS, date, iso, now_ms},
};
use serde_json::{Value, json};

fn cloudflare(config: &mut leadtrail::config::Config) {
    config.trust_proxy = TrustProxy::Cloudflare;
}

#[tokio::test]
async fn the_profile_shows_everything_known_about_a_visitor() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let alice = s.get(&format!("/api/visitor/alice?siteId={}", s.site)).await;
        for (key, expected) in [
            ("tracker_vid", json!("alice")),
            ("status", json!("identified")),
            ("score", json!(45)),
            ("identified_user_id", json!("u-1")),
            ("user_traits", json!({ "plan": "pro" })),
            // md5("alice@example.com")
            ("gravatar_url", json!("https://www.gravatar.com/avatar/c160f8cc69a4f0bf2b0362752353d060?d=identicon")),
            ("country", json!("DE")),
            ("city", json!("Berlin")),
            ("region", json!("BE")),
            ("lat", json!(52.52)),
            ("lon", json!(13.4)),
            ("device_type", json!("desktop")),
            ("browser", json!("Chrome")),
            ("os", json!("Windows 10")),
            ("first_seen", json!(iso(s.alice_first))),
            ("last_seen", json!(iso(s.alice_second + 30_000))),
            ("total_sessions", json!(2)),
            ("total_pageviews", json!(4)),
            ("total_time_seconds", json!(120)),
            ("first_referrer", json!(scenario::GOOGLE)),
            ("last_referrer", json!(scenario::GOOGLE)),
        ] {
            assert_eq!(alice[key], expected, "{key} in {alice}");
        }

        let sessions = alice["sessions"].as_array().unwrap();
        assert_eq!(sessions.len(), 2);
        let newest = &sessions[0];
        assert_eq!(newest["started_at"], iso(s.alice_second));
        assert_eq!(newest["ended_at"], iso(s.alice_second + 30_000));
        assert_eq!(
            (&newest["duration_seconds"], &newest["pageview_count"], &newest["entry_page"], &newest["exit_page"]),
            (&json!(30), &json!(2), &json!("/"), &json!("/docs"))
        );
        assert_eq!(newest["referrer"], Value::Null);
        assert_eq!(sessions[1]["referrer"], scenario::GOOGLE);
        assert_eq!(sessions[1]["exit_page"], "/pricing");
        assert_eq!(sessions[1]["duration_seconds"], 90);
        assert!(sessions[1]["session_id"].is_string());

        let recent = &alice["recent_events"];
        let pages: Vec<&Value> = recent.as_array().unwrap().iter().map(|e| &e["page"]).collect();
        assert_eq!(pages, ["/docs", "/", "/pricing", "/pricing", "/"]);
        assert_eq!(recent[2]["type"], "custom_event");
        assert_eq!(recent[2]["event_name"], "form_submit");
        assert_eq!(recent[2]["props"], json!({ "form": "demo" }));
        assert_eq!(recent[0]["event_name"], "");
        assert_eq!(recent[0]["session_id"], newest["session_id"]);
        assert_eq!(recent[4]["referrer"], scenario::GOOGLE);

        assert_eq!(
            alice["top_pages"],
            json!([{ "page": "/", "views": 2 }, { "page": "/docs", "views": 1 }, { "page": "/pricing", "views": 1 }])
        );
        assert_eq!(
            alice["daily_activity"],
            json!([{ "date": date(s.alice_first), "events": 3 }, { "date": date(s.alice_second), "events": 2 }])
        );
        assert_eq!(
            alice["form_events"],
            json!([{ "event_name": "form_submit", "props": { "form": "demo" }, "page": "/pricing", "timestamp": iso(s.alice_first + 90_000) }])
        );
        assert_eq!(alice["link_clicks"], json!([]));

        let attribution = &alice["attribution"];
        assert_eq!(
            attribution["first_touch"],
            json!({ "referrer": scenario::GOOGLE, "channel": "Organic Search", "utm_source": null, "utm_medium": null, "utm_campaign": null, "utm_content": null, "utm_term": null })
        );
        assert_eq!(
            attribution["last_touch"],
            json!({ "referrer": null, "channel": "Email", "utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "launch", "utm_content": null, "utm_term": null })
        );
        assert_eq!(
            attribution["touchpoints"],
            json!([
                { "referrer": scenario::GOOGLE, "channel": "Organic Search", "utm_source": null, "utm_medium": null, "utm_campaign": null,
                  "first_seen": iso(s.alice_first), "last_seen": iso(s.alice_first + 90_000), "touchpoints": 1 },
                { "referrer": null, "channel": "Email", "utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "launch",
                  "first_seen": iso(s.alice_second), "last_seen": iso(s.alice_second + 30_000), "touchpoints": 1 },
            ])
        );

        // bob came through the ad link: the click is his, and it made the session Paid Social.
        let bob = s.get(&format!("/api/visitor/bob?siteId={}", s.site)).await;
        assert_eq!(bob["status"], "anonymous");
        assert_eq!(bob["gravatar_url"], Value::Null);
        assert_eq!(bob["user_traits"], json!({}));
        assert_eq!(bob["attribution"]["first_touch"]["channel"], "Paid Social");
        assert_eq!(bob["attribution"]["first_touch"]["utm_source"], "facebook");
        let clicks = bob["link_clicks"].as_array().unwrap();
        assert_eq!(clicks.len(), 1);
        assert!(clicks[0]["id"].is_number(), "profile click ids are numbers");
        for (key, expected) in [
            ("tracker_vid", "bob"),
            ("slug", "promo"),
            ("campaign", "spring"),
            ("source", "facebook"),
            ("medium", "cpc"),
            ("destination_url", "https://shop.example/"),
            ("country", "FR"),
            ("city", "Paris"),
        ] {
            assert_eq!(clicks[0][key], expected, "{key}");
        }
        assert_eq!(clicks[0]["lat"], 48.86);
    }
}

#[tokio::test]
async fn profiles_refuse_unknown_and_foreign_visitors() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        s.client.get(&format!("/api/visitor/nobody?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        s.client.get("/api/visitor/alice").await.expect_error(400, "VALIDATION_ERROR");
        s.client.get("/api/visitor/alice?siteId=x").await.expect_error(400, "VALIDATION_ERROR");
        let (stranger, own_site) = app.user_with_site("Uma", "uma.example").await;
        stranger.get(&format!("/api/visitor/alice?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        stranger.get(&format!("/api/visitor/alice?siteId={own_site}")).await.expect_error(404, "NOT_FOUND");
        app.client().get(&format!("/api/visitor/alice?siteId={}", s.site)).await.expect_error(401, "UNAUTHORIZED");
    }
}

async fn stats(s: &scenario::Scenario, range: &str) -> Value {
    s.get(&format!("/api/stats?siteId={}{range}", s.site)).await
}

#[tokio::test]
async fn stats_count_human_traffic_in_rolling_windows() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let week = stats(&s, "").await;
        assert_eq!(week["time_range"], "7d");
        assert_eq!(
            week["overview"],
            json!({ "unique_visitors": 2, "sessions": 3, "pageviews": 6, "total_events": 7, "identified_visitors": 1, "hot_leads": 1 })
        );
        assert_eq!(
            week["top_pages"],
            json!([{ "page": "/", "views": 3 }, { "page": "/blog", "views": 1 }, { "page": "/docs", "views": 1 }, { "page": "/pricing", "views": 1 }])
        );
        assert_eq!(week["countries"], json!([{ "country": "DE", "visitors": 1 }, { "country": "FR", "visitors": 1 }]));

        let day = stats(&s, "&timeRange=24h").await;
        assert_eq!(day["time_range"], "24h");
        assert_eq!(
            day["overview"],
            json!({ "unique_visitors": 2, "sessions": 2, "pageviews": 4, "total_events": 4, "identified_visitors": 1, "hot_leads": 1 })
        );
        assert_eq!(day["top_pages"][0], json!({ "page": "/", "views": 2 }));

        // dave's view 7 days and 1 hour ago is inside 30d; carol's 40 days ago is not.
        let month = stats(&s, "&timeRange=30d").await;
        assert_eq!(
            month["overview"],
            json!({ "unique_visitors": 3, "sessions": 4, "pageviews": 7, "total_events": 8, "identified_visitors": 1, "hot_leads": 1 })
        );
        assert_eq!(
            month["countries"],
            json!([{ "country": "DE", "visitors": 1 }, { "country": "FR", "visitors": 1 }, { "country": null, "visitors": 1 }])
        );

        for bad in ["&timeRange=all", "&timeRange=90d"] {
            s.client.get(&format!("/api/stats?siteId={}{bad}", s.site)).await.expect_error(400, "VALIDATION_ERROR");
        }
        s.client.get("/api/stats").await.expect_error(400, "VALIDATION_ERROR");
        let (stranger, _) = app.user_with_site("Vic", "vic.example").await;
        stranger.get(&format!("/api/stats?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        app.client().get(&format!("/api/stats?siteId={}", s.site)).await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn a_session_has_an_ordered_timeline() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let alice = s.get(&format!("/api/visitor/alice?siteId={}", s.site)).await;
        let id = alice["sessions"][1]["session_id"].as_str().unwrap().to_owned();
        let session = s.get(&format!("/api/session/{id}?siteId={}", s.site)).await;
        let timeline = session["timeline"].clone();
        let mut head = session.clone();
        head.as_object_mut().unwrap().remove("timeline");
        assert_eq!(
            head,
            json!({
                "session_id": id, "tracker_vid": "alice", "identified_user_id": "u-1",
                "country": "DE", "city": "Berlin", "device_type": "desktop", "browser": "Chrome", "os": "Windows 10",
                "started_at": iso(s.alice_first), "ended_at": iso(s.alice_first + 90_000), "duration_seconds": 90,
                "event_count": 3, "pageview_count": 2, "entry_page": "/", "exit_page": "/pricing",
                "referrer": scenario::GOOGLE, "pages": ["/", "/pricing"],
            })
        );
        assert_eq!(
            timeline,
            json!([
                { "type": "pageview", "event_name": "", "page": "/", "page_title": null, "timestamp": iso(s.alice_first), "time_on_previous_page": 0, "props": {} },
                { "type": "pageview", "event_name": "", "page": "/pricing", "page_title": null, "timestamp": iso(s.alice_first + 60_000), "time_on_previous_page": 60, "props": {} },
                { "type": "custom_event", "event_name": "form_submit", "page": "/pricing", "page_title": null, "timestamp": iso(s.alice_first + 90_000), "time_on_previous_page": 30, "props": { "form": "demo" } },
            ])
        );

        s.client.get(&format!("/api/session/999999?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        s.client.get(&format!("/api/session/not-a-number?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        s.client.get(&format!("/api/session/{id}")).await.expect_error(400, "VALIDATION_ERROR");
        let (stranger, own_site) = app.user_with_site("Wes", "wes.example").await;
        stranger.get(&format!("/api/session/{id}?siteId={}", s.site)).await.expect_error(404, "NOT_FOUND");
        stranger.get(&format!("/api/session/{id}?siteId={own_site}")).await.expect_error(404, "NOT_FOUND");
        app.client().get(&format!("/api/session/{id}?siteId={}", s.site)).await.expect_error(401, "UNAUTHORIZED");
    }
}

const PROFILE: &str = "query($site: Int!, $id: ID!) { visitor(siteId: $site, id: $id) {
    trackerVid score scoreBreakdown { name points reason }
    sessions { sessionId events { type page timestamp } timeline { timeOnPreviousPage } pages }
    identities { email } linkClicks { slug } attribution { firstTouch { channel } touchpoints { touchpoints } }
    recentEvents { page } topPages { page views } dailyActivity { date events } formEvents { eventName } userTraits
} }";

#[tokio::test]
async fn a_profile_costs_the_same_statements_with_1_or_50_sessions() {
    for app in apps_with(cloudflare).await {
        let (client, site) = app.user_with_site("Xia", "xia.example").await;
        let start = now_ms() - 60 * HOUR_MS;
        let one = vec![pageview(site, "one", "https://xia.example/")];
        // An hour apart, so every view is a session of its own.
        let fifty: Vec<Value> = (0..50)
            .map(|i| common::traffic::at(pageview(site, "fifty", "https://xia.example/"), start + i * HOUR_MS))
            .collect();
        app.collect(json!({ "events": one })).await.expect(202);
        app.collect(json!({ "events": fifty })).await.expect(202);
        client.identify(json!({ "siteId": site, "tracker_vid": "fifty", "email": "f@xia.example" })).await.expect(200);

        let mut counts = Vec::new();
        for vid in ["one", "fifty"] {
            // The counter also sees the background jobs' statements (the alert
            // worker's poll, the WAL checkpoint); they only ever add, so the
            // fewest of a few tries is the profile's own count.
            let mut fewest = u64::MAX;
            for _ in 0..3 {
                let before = app.state.metrics.db_statements.get();
                let profile = client.graphql(PROFILE, json!({ "site": site, "id": vid })).await;
                fewest = fewest.min(app.state.metrics.db_statements.get() - before);
                let sessions = profile["data"]["visitor"]["sessions"].as_array().expect("sessions").len();
                assert_eq!(sessions, if vid == "one" { 1 } else { 50 }, "{profile}");
            }
            counts.push(fewest);
        }
        assert_eq!(counts[0], counts[1], "statements for 1 session vs 50: {counts:?}");
    }
}

#[tokio::test]
async fn the_graphql_list_is_a_connection_with_a_breakdown() {
    for app in apps_with(cloudflare).await {
        let s = scenario::feed(&app).await;
        let query = "query($site: Int!, $after: String) { visitors(siteId: $site, first: 1, after: $after, timeRange: \"all\") {
            total pageInfo { hasNextPage endCursor } edges { cursor node { trackerVid score scoreBreakdown { name points } } } } }";
        let first = s.client.graphql(query, json!({ "site": s.site })).await;
        let page = &first["data"]["visitors"];
        assert_eq!(page["total"], 4);
        assert_eq!(page["pageInfo"]["hasNextPage"], true);
        let node = &page["edges"][0]["node"];
        assert_eq!(node["trackerVid"], "alice");
        let breakdown: i64 =
            node["scoreBreakdown"].as_array().unwrap().iter().map(|f| f["points"].as_i64().unwrap()).sum();
        assert_eq!(breakdown, 45, "the breakdown adds up to the score");
        let names: Vec<&str> =
            node["scoreBreakdown"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "pageviews",
                "returning_visits",
                "engaged_time",
                "high_value_pages",
                "form_submissions",
                "link_clicks",
                "identified",
                "recency"
            ]
        );
        let cursor = page["pageInfo"]["endCursor"].clone();
        let second = s.client.graphql(query, json!({ "site": s.site, "after": cursor })).await;
        assert_eq!(second["data"]["visitors"]["edges"][0]["node"]["trackerVid"], "bob");
        for bogus in ["18446744073709551615", "-1", "not-a-cursor"] {
            let refused = s.client.graphql(query, json!({ "site": s.site, "after": bogus })).await;
            assert_eq!(common::gql_error_code(&refused), "VALIDATION_ERROR", "{bogus}: {refused}");
        }
    }
}

#[tokio::test]
async fn stats_windows_are_exact_at_their_edges() {
    for app in apps_with(cloudflare).await {
        let (client, site) = app.user_with_site("Yan", "yan.example").await;
        let day_ago = now_ms() - 24 * HOUR_MS;
        let minute = 60_000;
        // Two minutes inside and two minutes outside the 24-hour window,
        // likely in the same hour: the rollup alone cannot tell them apart.
        for (vid, page, ts) in [("inside", "/in", day_ago + 2 * minute), ("outside", "/out", day_ago - 2 * minute)] {
            app.collect(common::traffic::at(pageview(site, vid, &format!("https://yan.example{page}")), ts))
                .await
                .expect(202);
        }
        let day = client.get(&format!("/api/stats?siteId={site}&timeRange=24h")).await;
        let day = day.expect(200);
        assert_eq!(day["overview"]["unique_visitors"], 1, "{day}");
        assert_eq!(day["overview"]["sessions"], 1);
        assert_eq!(day["overview"]["pageviews"], 1);
        assert_eq!(day["overview"]["total_events"], 1);
        assert_eq!(day["top_pages"], json!([{ "page": "/in", "views": 1 }]));
        let week = client.get(&format!("/api/stats?siteId={site}")).await;
        assert_eq!(week.expect(200)["overview"]["pageviews"], 2);
    }
}
