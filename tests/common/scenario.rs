//! A small site with known traffic, fed through the public endpoints, for
//! the analytics tests. Every number they assert follows from this file.
#![allow(dead_code)]

use leadtrail::time::{DAY_MS, HOUR_MS, now_ms};
use serde_json::{Value, json};

use super::{
    Client, TestApp,
    traffic::{BOT_UA, DESKTOP_UA, PHONE_UA, at, pageview},
};

pub const SECOND_MS: i64 = 1_000;
pub const GOOGLE: &str = "https://www.google.com/search?q=leadtrail";
const BERLIN: [(&str, &str); 5] = [
    ("cf-ipcountry", "DE"),
    ("cf-ipcity", "Berlin"),
    ("cf-region", "BE"),
    ("cf-iplatitude", "52.52"),
    ("cf-iplongitude", "13.4"),
];
const PARIS: [(&str, &str); 4] =
    [("cf-ipcountry", "FR"), ("cf-ipcity", "Paris"), ("cf-iplatitude", "48.86"), ("cf-iplongitude", "2.35")];

pub struct Scenario {
    pub client: Client,
    pub site: i64,
    pub now: i64,
    /// Alice's first session starts here: 3 days and 2 hours ago.
    pub alice_first: i64,
    /// Alice's second session starts here: 2 hours ago.
    pub alice_second: i64,
    /// Bob's only session starts here: 1 hour ago.
    pub bob_start: i64,
}

/// The traffic:
/// - alice (Berlin, desktop): a session from Google 3 days ago (`/`, `/pricing`,
///   then a `form_submit`), and one from a newsletter 2 hours ago (`/`, `/docs`).
///   She is then identified as `u-1` / `Alice@Example.com`.
/// - bob (Paris, phone): clicks the `promo` ad link an hour ago, lands on `/`
///   with its UTM labels and `lt_click`, then views `/blog`.
/// - dave: one pageview 7 days and 1 hour ago (outside 7d, inside 30d).
/// - carol: one pageview 40 days ago.
/// - a crawler: one pageview 30 minutes ago.
pub async fn feed(app: &TestApp) -> Scenario {
    let (client, site) = app.user_with_site("Sam", "shop.example").await;
    // A short B2B journey like alice's scores 45 (README, "Lead score"): the
    // site calls 45 hot, so she is the scenario's one hot lead.
    let threshold = client
        .graphql(
            "mutation($id: Int!) { updateSite(id: $id, input: { hotThreshold: 45 }) { hotThreshold } }",
            json!({ "id": site }),
        )
        .await;
    assert_eq!(threshold["data"]["updateSite"]["hotThreshold"], 45, "{threshold}");
    let now = now_ms();
    let url = |path: &str| format!("https://shop.example{path}");
    let alice_first = now - 3 * DAY_MS - 2 * HOUR_MS;
    let alice_second = now - 2 * HOUR_MS;
    let bob_start = now - HOUR_MS;

    let mut landing = at(pageview(site, "alice", &url("/")), alice_first);
    landing["referrer"] = json!(GOOGLE);
    let mut form = at(pageview(site, "alice", &url("/pricing")), alice_first + 90 * SECOND_MS);
    form["type"] = json!("custom_event");
    form["event_name"] = json!("form_submit");
    form["props"] = json!({ "form": "demo" });
    let alice = json!({ "events": [
        landing,
        at(pageview(site, "alice", &url("/pricing")), alice_first + 60 * SECOND_MS),
        form,
        at(pageview(site, "alice", &url("/?utm_source=newsletter&utm_medium=email&utm_campaign=launch")), alice_second),
        at(pageview(site, "alice", &url("/docs")), alice_second + 30 * SECOND_MS),
    ]});
    app.collect_with(alice, DESKTOP_UA, &BERLIN).await.expect(202);

    client
        .create_link(json!({
            "siteId": site, "slug": "promo", "destinationUrl": url("/"), "link_type": "ad",
            "campaign": "spring", "source": "facebook", "medium": "cpc",
        }))
        .await;
    let landing = app.click("/l/shop-example/promo", &PARIS).await;
    let bob = json!({ "events": [
        at(pageview(site, "bob", &landing), bob_start),
        at(pageview(site, "bob", &url("/blog")), bob_start + 45 * SECOND_MS),
    ]});
    app.collect_with(bob, PHONE_UA, &PARIS).await.expect(202);

    app.collect_with(at(pageview(site, "dave", &url("/")), now - 7 * DAY_MS - HOUR_MS), DESKTOP_UA, &[])
        .await
        .expect(202);
    app.collect_with(at(pageview(site, "carol", &url("/old")), now - 40 * DAY_MS), DESKTOP_UA, &[]).await.expect(202);
    app.collect_with(at(pageview(site, "crawler", &url("/")), now - 30 * 60 * SECOND_MS), BOT_UA, &[])
        .await
        .expect(202);
    app.state.writer.flush().await;

    let identified = json!({
        "siteId": site, "tracker_vid": "alice", "user_id": "u-1", "email": "Alice@Example.com",
        "traits": { "plan": "pro" },
    });
    client.identify(identified).await.expect(200);
    Scenario { client, site, now, alice_first, alice_second, bob_start }
}

impl Scenario {
    pub async fn get(&self, path: &str) -> Value {
        self.client.get(path).await.expect(200).clone()
    }
}
