//! Revenue (design §20): custom events carry exact amounts through collect;
//! `POST /api/conversions` records server-side conversions with an API key,
//! once per `external_id` (also when two instances receive it at once on
//! PostgreSQL), refusing bad input beside its field; a conversion for a
//! person not yet identified joins them when identify names them; Explore's
//! `total_revenue` and `average_revenue` equal a recount per currency; the
//! visitor shows its conversions and revenue per currency.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use common::{Client, apps, postgres_instances, traffic::DESKTOP_UA};
use entity::{conversion, event};
use leadtrail::time::{DAY_MS, MINUTE_MS, now_ms};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};

async fn api_key(client: &Client) -> String {
    let created = client.graphql("mutation { createApiKey(name: \"crm\") { key } }", json!({})).await;
    created["data"]["createApiKey"]["key"].as_str().unwrap().to_owned()
}

fn pageview(site: i64, vid: &str, query: &str) -> Value {
    json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": format!("https://shop.example/{query}") })
}

#[tokio::test]
async fn collect_takes_exact_revenue_on_custom_events_only() {
    for app in apps().await {
        let (_client, site) = app.user_with_site("Rita", "shop.example").await;
        let purchase = |amount: Value, currency: &str| {
            json!({ "site": site, "type": "custom_event", "event_name": "purchase", "tracker_vid": "buyer",
                    "url": "https://shop.example/checkout", "revenue": { "amount": amount, "currency": currency } })
        };
        app.collect(purchase(json!("19.99"), "usd")).await.expect(202);
        app.collect(purchase(json!(0.1), "EUR")).await.expect(202);
        app.state.writer.flush().await;
        let stored: Vec<(Option<i64>, Option<String>)> = event::Entity::find()
            .filter(event::Column::SiteId.eq(site))
            .all(&app.state.db)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.revenue_minor, e.revenue_currency))
            .collect();
        assert_eq!(stored, vec![(Some(1999), Some("USD".to_owned())), (Some(10), Some("EUR".to_owned()))]);

        for (body, field) in [
            (purchase(json!("-1"), "USD"), "revenue.amount"),
            (purchase(json!("1.999"), "USD"), "revenue.amount"),
            (purchase(json!("lots"), "USD"), "revenue.amount"),
            (purchase(json!("90071992547409.93"), "USD"), "revenue.amount"),
            (purchase(json!("5"), "DOLLARS"), "revenue.currency"),
            (
                json!({ "site": site, "type": "pageview", "tracker_vid": "v", "url": "https://shop.example/", "revenue": { "amount": "1", "currency": "USD" } }),
                "revenue",
            ),
        ] {
            let reply = app.collect(body.clone()).await;
            assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
            assert_eq!(reply.body["field"], field, "{body}: {}", reply.text);
        }
    }
}

#[tokio::test]
async fn conversions_are_recorded_once_checked_and_kept_for_people_identified_later() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Carl", "shop.example").await;
        let key = api_key(&client).await;
        let crm = app.client().with_bearer(&key);
        app.collect(pageview(site, "known", "")).await.expect(202);
        app.state.writer.flush().await;

        let deal = json!({ "siteId": site, "name": "Closed won", "amount": "1299.00", "currency": "EUR",
                           "tracker_vid": "known", "external_id": "deal-1", "occurred_at": "2026-11-01T10:00:00Z" });
        let first = crm.post("/api/conversions", deal.clone()).await;
        let first = first.expect(200).clone();
        assert_eq!(first["created"], true, "{first}");
        assert_eq!(first["amount"], "1299.00");
        assert_eq!(first["tracker_vid"], "known");
        assert_eq!(first["occurred_at"], "2026-11-01T10:00:00.000Z");
        let again = crm.post("/api/conversions", deal.clone()).await;
        assert_eq!(again.expect(200)["id"], first["id"]);
        assert_eq!(again.body["created"], false);
        let stored =
            conversion::Entity::find().filter(conversion::Column::SiteId.eq(site)).count(&app.state.db).await.unwrap();
        assert_eq!(stored, 1, "the same external id is stored once");

        // Refusals name their field.
        let with = |key: &str, value: Value| {
            let mut body = deal.clone();
            body["external_id"] = json!(format!("bad-{key}"));
            match value {
                Value::Null => {
                    body.as_object_mut().unwrap().remove(key);
                }
                value => body[key] = value,
            }
            body
        };
        for (body, field) in [
            (with("currency", json!("EURO")), "currency"),
            (with("amount", json!("-5")), "amount"),
            (with("amount", json!("twelve")), "amount"),
            (with("amount", json!(true)), "amount"),
            (with("amount", json!("90071992547409.93")), "amount"),
            (with("amount", json!("1.005")), "amount"),
            (with("tracker_vid", json!("nobody")), "tracker_vid"),
            (with("tracker_vid", Value::Null), "tracker_vid"),
            (with("name", json!("  ")), "name"),
            (with("occurred_at", json!("soon")), "occurred_at"),
        ] {
            let reply = crm.post("/api/conversions", body.clone()).await;
            assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
            assert_eq!(reply.body["field"], field, "{body}: {}", reply.text);
        }

        // Someone Leadtrail has not identified yet: kept, then tied by identify.
        let later = json!({ "siteId": site, "name": "Payment", "amount": 49, "currency": "USD", "email": "Pat@Example.com", "external_id": "pay-7" });
        let waiting = crm.post("/api/conversions", later).await;
        assert_eq!(waiting.expect(200)["tracker_vid"], Value::Null, "{}", waiting.text);
        app.collect(pageview(site, "pat-browser", "")).await.expect(202);
        client
            .identify(json!({ "siteId": site, "tracker_vid": "pat-browser", "email": "pat@example.com" }))
            .await
            .expect(200);
        app.state.writer.flush().await;
        let profile = client
            .graphql(
                "query($s: Int!) { visitor(siteId: $s, id: \"pat-browser\") { conversions { name amount currency trackerVid } revenue { amount currency } } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(
            profile["data"]["visitor"]["conversions"],
            json!([{ "name": "Payment", "amount": "49.00", "currency": "USD", "trackerVid": "pat-browser" }]),
            "{profile}"
        );
        assert_eq!(profile["data"]["visitor"]["revenue"], json!([{ "amount": "49.00", "currency": "USD" }]));

        // The visitor page lists it with the total.
        let page = common::web::expect_page(&client.get(&format!("/visitor/pat-browser?site={site}")).await, 200);
        assert!(
            page.contains("Conversions: 49.00 USD") && page.contains("<strong>Payment</strong>: 49.00 USD"),
            "{page}"
        );

        // Access shows it; erasure takes it and leaves the one waiting for someone else.
        let waiting_too =
            json!({ "siteId": site, "name": "Refund", "amount": "1", "currency": "USD", "user_id": "pat-42" });
        crm.post("/api/conversions", waiting_too).await.expect(200);
        client.identify(json!({ "siteId": site, "tracker_vid": "pat-browser", "email": "pat@example.com", "user_id": "pat-43" })).await.expect(200);
        app.state.writer.flush().await;
        let export = client.get(&format!("/api/visitor/pat-browser/export?siteId={site}")).await;
        assert_eq!(export.expect(200)["conversions"][0]["external_id"], "pay-7", "{}", export.text);
        let before =
            conversion::Entity::find().filter(conversion::Column::SiteId.eq(site)).count(&app.state.db).await.unwrap();
        client.delete(&format!("/api/visitor/pat-browser?siteId={site}")).await.expect(200);
        let after =
            conversion::Entity::find().filter(conversion::Column::SiteId.eq(site)).count(&app.state.db).await.unwrap();
        assert_eq!(before - after, 1, "the erased person's conversion went with them");

        // Without a key, or with another org's site: nothing.
        let anonymous = app.client().post("/api/conversions", deal.clone()).await;
        assert_eq!(anonymous.status.as_u16(), 401, "{}", anonymous.text);
        let (stranger, _) = app.user_with_site("Stan", "stranger.example").await;
        let theirs = app.client().with_bearer(&api_key(&stranger).await).post("/api/conversions", deal.clone()).await;
        assert_eq!(theirs.status.as_u16(), 404, "{}", theirs.text);
    }
}

#[tokio::test]
async fn two_instances_store_one_external_id_once() {
    let Some(instances) = postgres_instances(2).await else { return };
    let (client, site) = instances[0].user_with_site("Pam", "shop.example").await;
    let key = api_key(&client).await;
    instances[0].collect(pageview(site, "buyer", "")).await.expect(202);
    instances[0].state.writer.flush().await;
    let (first, second) = (instances[0].client().with_bearer(&key), instances[1].client().with_bearer(&key));
    for round in 0..10 {
        let body = json!({ "siteId": site, "name": "Closed won", "amount": "10", "currency": "USD",
                           "tracker_vid": "buyer", "external_id": format!("race-{round}") });
        let (a, b) =
            tokio::join!(first.post("/api/conversions", body.clone()), second.post("/api/conversions", body.clone()),);
        assert_eq!(a.expect(200)["id"], b.expect(200)["id"], "round {round}");
        assert_ne!(a.body["created"], b.body["created"], "exactly one stored it: round {round}");
    }
    let stored = conversion::Entity::find()
        .filter(conversion::Column::SiteId.eq(site))
        .count(&instances[0].state.db)
        .await
        .unwrap();
    assert_eq!(stored, 10);
}

/// Plausible's money object for `minor` cents of `currency` (both currencies here have 2 decimals).
fn money(minor: i64, currency: &str) -> Value {
    let value: f64 = format!("{}.{:02}", minor / 100, minor % 100).parse().unwrap();
    json!({ "value": value, "currency": currency })
}

fn without_text(metric: &Value) -> Value {
    if metric.is_null() {
        return Value::Null;
    }
    json!({ "value": metric["value"], "currency": metric["currency"] })
}

#[tokio::test]
async fn explore_revenue_equals_a_recount_per_currency() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Eve", "shop.example").await;
        let mut rng = StdRng::seed_from_u64(20);
        let now = now_ms();
        for n in 0..40 {
            let vid = format!("r{n}");
            let mut ts = now - rng.random_range(1..20) * DAY_MS;
            let source = ["newsletter", "google", ""][rng.random_range(0..3)];
            let query = if source.is_empty() { String::new() } else { format!("?utm_source={source}") };
            let mut events = vec![json!({ "site": site, "type": "pageview", "tracker_vid": vid,
                                          "url": format!("https://shop.example/{query}"), "ts": ts })];
            for _ in 0..rng.random_range(0..3) {
                ts += MINUTE_MS;
                let cents = rng.random_range(1..100_000);
                let amount = format!("{}.{:02}", cents / 100, cents % 100);
                // Purchases are in dollars, renewals in euros.
                let (name, currency) = if rng.random_bool(0.7) { ("purchase", "USD") } else { ("renewal", "EUR") };
                events.push(json!({ "site": site, "type": "custom_event", "event_name": name, "tracker_vid": vid,
                                    "url": "https://shop.example/checkout", "ts": ts,
                                    "revenue": { "amount": amount, "currency": currency } }));
            }
            app.collect_with(json!({ "events": events }), DESKTOP_UA, &[]).await.expect(202);
        }
        app.state.writer.flush().await;
        for (name, event_name) in [("Purchase", "purchase"), ("Renewal", "renewal")] {
            let made = client
                .graphql(
                    "mutation($s: Int!, $i: GoalInput!) { createGoal(siteId: $s, input: $i) { id } }",
                    json!({ "s": site, "i": { "name": name, "eventName": event_name } }),
                )
                .await;
            assert!(made["errors"].is_null(), "{made}");
        }
        let events = event::Entity::find().filter(event::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
        let sessions = entity::tracked_session::Entity::find()
            .filter(entity::tracked_session::Column::SiteId.eq(site))
            .all(&app.state.db)
            .await
            .unwrap();
        let source_of: BTreeMap<i64, String> = sessions
            .into_iter()
            .map(|s| (s.id, s.utm_source.filter(|u| !u.is_empty()).unwrap_or_else(|| "(not set)".to_owned())))
            .collect();
        // The recount: per key, the sum and count of revenue events.
        let recount = |key: &dyn Fn(&event::Model) -> Option<String>| {
            let mut sums: BTreeMap<String, (i64, i64, String)> = BTreeMap::new();
            for e in events.iter().filter(|e| e.revenue_minor.is_some()) {
                if let Some(key) = key(e) {
                    let entry = sums.entry(key).or_insert((0, 0, e.revenue_currency.clone().unwrap()));
                    entry.0 += e.revenue_minor.unwrap();
                    entry.1 += 1;
                }
            }
            sums.into_iter()
                .map(|(key, (minor, count, currency))| {
                    let average = (minor as f64 / count as f64).round() as i64;
                    (vec![key], vec![money(minor, &currency), money(average, &currency)])
                })
                .collect::<BTreeMap<Vec<String>, Vec<Value>>>()
        };
        let ask = |filters: Value, dimensions: Value| {
            json!({ "site_id": site, "metrics": ["total_revenue", "average_revenue"], "date_range": "30d",
                    "filters": filters, "dimensions": dimensions })
        };
        let answered = |reply: &Value| -> BTreeMap<Vec<String>, Vec<Value>> {
            reply["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| {
                    let key =
                        row["dimensions"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_owned()).collect();
                    (key, row["metrics"].as_array().unwrap().iter().map(without_text).collect())
                })
                .collect()
        };

        let by_goal = client.post("/api/v2/query", ask(json!([]), json!(["event:goal"]))).await;
        let expected = recount(&|e| Some(if e.event_name == "purchase" { "Purchase" } else { "Renewal" }.to_owned()));
        assert_eq!(answered(by_goal.expect(200)), expected);

        let purchases = json!([["is", "event:goal", ["Purchase"]]]);
        let by_source = client.post("/api/v2/query", ask(purchases, json!(["visit:utm_source"]))).await;
        let expected = recount(&|e| (e.event_name == "purchase").then(|| source_of[&e.session_id].clone()));
        assert_eq!(answered(by_source.expect(200)), expected);

        // Both currencies together have no one total: null, with the reason.
        let mixed = client.post("/api/v2/query", ask(json!([]), json!([]))).await;
        let mixed = mixed.expect(200);
        assert_eq!(mixed["results"][0]["metrics"], json!([null, null]), "{mixed}");
        assert_eq!(mixed["meta"]["metric_warnings"]["total_revenue"]["code"], "mixed_currencies");
        let long = &client.post("/api/v2/query", ask(json!([]), json!(["event:goal"]))).await.body["results"][0]["metrics"]
            [0]["long"];
        assert!(long.as_str().unwrap().ends_with(" EUR") || long.as_str().unwrap().ends_with(" USD"), "{long}");
    }
}
