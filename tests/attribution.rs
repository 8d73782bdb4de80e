//! The attribution report (design §20): seeded visits through collect and
//! tracking-link redirects, identifies, revenue events and server-side
//! conversions through the API; every model (first touch, last touch,
//! linear) by every grouping (channel, source, campaign, link) equals a
//! recount over the raw rows, money exact to the minor unit, on SQLite and
//! PostgreSQL. Refusals name their field; another org's site is not found.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{Client, TestApp, apps, traffic::DESKTOP_UA};
use entity::{conversion, credit_day, credit_day_fill, event, identity, link, tracked_session};
use leadtrail::{
    service::{
        credit::{cache, model::Model},
        visit_groups::VisitGroup,
    },
    time::{DAY_MS, MINUTE_MS, now_ms},
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::json;

/// Something credited: (visitor, when, amount and currency; none for a lead).
type Outcome = (i64, i64, Option<(i64, String)>);

/// (value, leads, conversions, revenue per currency) as the report shows them.
type Row = (String, f64, f64, BTreeMap<String, String>);

fn cents(minor: i64) -> String {
    format!("{}.{:02}", minor / 100, minor % 100)
}

fn round(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// What `Link.brought` shows for the link over 30 days, one entry per model.
async fn brought(client: &Client, link_id: &str) -> Vec<serde_json::Value> {
    let answer = client
        .graphql(
            "query($id: ID!) { link(id: $id) { brought(range: \"30d\") { model leads conversions revenue { amount currency } } } }",
            json!({ "id": link_id }),
        )
        .await;
    answer["data"]["link"]["brought"].as_array().cloned().unwrap_or_else(|| panic!("{answer}"))
}

/// The linear conversions `Link.brought` shows for the link over 30 days.
async fn linear_conversions_brought(client: &Client, link_id: &str) -> f64 {
    let brought = brought(client, link_id).await;
    brought.iter().find(|credit| credit["model"] == "linear").unwrap()["conversions"].as_f64().unwrap()
}

#[tokio::test]
async fn every_model_and_grouping_equals_a_recount() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ada", "credit.example").await;
        let key =
            client.graphql("mutation { createApiKey(name: \"crm\") { key } }", json!({})).await["data"]["createApiKey"]
                ["key"]
                .as_str()
                .unwrap()
                .to_owned();
        let mut shorts = Vec::new();
        for slug in ["spring", "autumn"] {
            let made = client
                .create_link(json!({ "siteId": site, "slug": slug, "destinationUrl": "https://credit.example/" }))
                .await;
            shorts.push(url::Url::parse(made["fullUrl"].as_str().unwrap()).unwrap().path().to_owned());
        }
        let mut rng = StdRng::seed_from_u64(77);
        let now = now_ms();
        let mut deals = Vec::new();
        for n in 0..30 {
            let vid = format!("c{n}");
            let mut day = 25;
            for _ in 0..rng.random_range(1..=4) {
                day -= rng.random_range(1..=5).min(day - 1);
                let ts = now - day * DAY_MS;
                let mut first = json!({ "site": site, "type": "pageview", "tracker_vid": vid, "ts": ts, "url": "https://credit.example/" });
                match rng.random_range(0..4) {
                    0 => first["url"] = json!(app.click(&shorts[rng.random_range(0..2)], &[]).await),
                    1 => first["url"] = json!("https://credit.example/?utm_source=newsletter&utm_campaign=winter"),
                    2 => first["referrer"] = json!("https://www.google.com/"),
                    _ => {}
                }
                let mut events = vec![first];
                if rng.random_bool(0.3) {
                    let minor = rng.random_range(1..50_000);
                    events.push(
                        json!({ "site": site, "type": "custom_event", "event_name": "purchase", "tracker_vid": vid,
                                        "url": "https://credit.example/buy", "ts": ts + MINUTE_MS,
                                        "revenue": { "amount": cents(minor), "currency": "USD" } }),
                    );
                }
                app.collect_with(json!({ "events": events }), DESKTOP_UA, &[]).await.expect(202);
                if rng.random_bool(0.25) {
                    deals.push((
                        vid.clone(),
                        ts + 2 * MINUTE_MS + rng.random_range(0..DAY_MS),
                        rng.random_range(1..900_000),
                    ));
                }
            }
            if rng.random_bool(0.4) {
                client
                    .identify(json!({ "siteId": site, "tracker_vid": vid, "email": format!("{vid}@credit.example") }))
                    .await
                    .expect(200);
            }
        }
        // A deal dated before the visitor's first visit: credited to "(no visit)".
        deals.push(("c0".to_owned(), now - 28 * DAY_MS, 1234));
        app.state.writer.flush().await;
        let crm = app.client().with_bearer(&key);
        for (at, (vid, when, minor)) in deals.iter().enumerate() {
            let body = json!({ "siteId": site, "name": "Closed won", "amount": cents(*minor), "currency": "EUR",
                               "tracker_vid": vid, "occurred_at": when, "external_id": format!("deal-{at}") });
            crm.post("/api/conversions", body).await.expect(200);
        }

        reports_equal_a_recount(&app, &client, site).await;

        // The link page shows what each link brought, as the report has it.
        let report = client
            .post(
                "/api/v2/attribution",
                json!({ "site_id": site, "model": "linear", "by": "link", "date_range": "30d" }),
            )
            .await;
        let spring = report.body["rows"].as_array().unwrap().iter().find(|row| row["value"] == "spring").cloned();
        let id = common::web::link_id(&client, site, "spring").await;
        let page = common::web::expect_page(&client.get(&format!("/links/{id}?range=30d")).await, 200);
        assert!(page.contains("What it brought, last 30 days"), "{page}");
        let spring = spring.expect("the seed credits the spring link");
        let revenue = spring["revenue"].as_array().unwrap();
        let shown: Vec<String> = revenue
            .iter()
            .map(|m| format!("{} {}", m["amount"].as_str().unwrap(), m["currency"].as_str().unwrap()))
            .collect();
        let expected = if shown.is_empty() { "none".to_owned() } else { shown.join(", ") };
        let linear_row = page.split("<th scope=\"row\">Linear</th>").nth(1).unwrap();
        assert!(linear_row.split("</tr>").next().unwrap().contains(&expected), "{expected} in {linear_row}");

        // A link's own figures (read from its visitors' outcomes alone) are its
        // row of each model's whole report, which the recount above proved.
        let figures = |value: &serde_json::Value| {
            let revenue: BTreeMap<String, String> = value["revenue"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["currency"].as_str().unwrap().to_owned(), m["amount"].as_str().unwrap().to_owned()))
                .collect();
            (value["leads"].as_f64().unwrap(), value["conversions"].as_f64().unwrap(), revenue)
        };
        let mut credited_links = 0;
        for slug in ["spring", "autumn"] {
            let id = common::web::link_id(&client, site, slug).await;
            let brought = brought(&client, &id).await;
            let models: Vec<&str> = brought.iter().map(|credit| credit["model"].as_str().unwrap()).collect();
            assert_eq!(models, ["first_touch", "last_touch", "linear"]);
            for credit in &brought {
                let model = credit["model"].as_str().unwrap();
                let report = client
                    .post(
                        "/api/v2/attribution",
                        json!({ "site_id": site, "model": model, "by": "link", "date_range": "30d" }),
                    )
                    .await;
                let row = report.body["rows"].as_array().unwrap().iter().find(|row| row["value"] == slug);
                let expected = row.map(figures).unwrap_or((0.0, 0.0, BTreeMap::new()));
                credited_links += usize::from(row.is_some());
                assert_eq!(figures(credit), expected, "{slug} under {model}");
            }
        }
        assert!(credited_links >= 3, "the seed credits the links under several models");

        // The reports kept their closed days; read back, they still equal the recount.
        let db = &app.state.db;
        let kept_days =
            credit_day_fill::Entity::find().filter(credit_day_fill::Column::SiteId.eq(site)).count(db).await.unwrap();
        assert!(kept_days >= 12 * 20, "every model and grouping kept its closed days: {kept_days}");
        reports_equal_a_recount(&app, &client, site).await;
        // And they are what is read: one more credit in a kept day shows.
        let total_conversions = |reply: &serde_json::Value| reply["total"]["conversions"].as_f64().unwrap();
        let first_by_channel = json!({ "site_id": site, "model": "first_touch", "by": "channel", "date_range": "30d" });
        let before = total_conversions(client.post("/api/v2/attribution", first_by_channel.clone()).await.expect(200));
        let bumped = credit_day::Entity::find()
            .filter(credit_day::Column::SiteId.eq(site))
            .filter(credit_day::Column::Model.eq(1))
            .filter(credit_day::Column::Grouping.eq(1))
            .filter(credit_day::Column::Lead.eq(false))
            .one(db)
            .await
            .unwrap()
            .expect("a kept day with a conversion");
        let mut changed: credit_day::ActiveModel = bumped.clone().into();
        changed.credits = Set(bumped.credits + bumped.parts.max(1));
        changed.update(db).await.unwrap();
        let after = total_conversions(client.post("/api/v2/attribution", first_by_channel.clone()).await.expect(200));
        assert_eq!(after, before + 1.0, "the kept day is read");
        credit_day::ActiveModel::from(bumped).reset_all().update(db).await.unwrap();
        // A link's own figures read the same kept days (the report by link's).
        let bumped = credit_day::Entity::find()
            .filter(credit_day::Column::SiteId.eq(site))
            .filter(credit_day::Column::Model.eq(3))
            .filter(credit_day::Column::Grouping.eq(4))
            .filter(credit_day::Column::Lead.eq(false))
            .filter(credit_day::Column::LinkId.is_not_null())
            .one(db)
            .await
            .unwrap()
            .expect("a kept day with a conversion a link brought");
        let slug = link::Entity::find_by_id(bumped.link_id.unwrap()).one(db).await.unwrap().unwrap().slug;
        let id = common::web::link_id(&client, site, &slug).await;
        let before = linear_conversions_brought(&client, &id).await;
        let mut changed: credit_day::ActiveModel = bumped.clone().into();
        changed.credits = Set(bumped.credits + bumped.parts.max(1));
        changed.update(db).await.unwrap();
        assert_eq!(linear_conversions_brought(&client, &id).await, round(before + 1.0), "the link reads the kept day");
        credit_day::ActiveModel::from(bumped).reset_all().update(db).await.unwrap();

        // Late data forgets the kept days it changes, each kind after a
        // report kept them again: a deal days ago for a known visitor and one
        // for an email nobody has yet; visits older than every outcome of the
        // visitors with deals and a revenue event days ago; the email
        // identified, which ties its deal; then an erasure.
        let now = now_ms();
        for (vid, days, id, email) in
            [(Some("c2"), 10, "late-1", None), (None, 5, "late-2", Some("late@credit.example"))]
        {
            let mut body = json!({ "siteId": site, "name": "Closed won", "amount": "99.00", "currency": "EUR",
                                   "occurred_at": now - days * DAY_MS, "external_id": id });
            match (vid, email) {
                (Some(vid), _) => body["tracker_vid"] = json!(vid),
                (_, email) => body["email"] = json!(email),
            }
            crm.post("/api/conversions", body).await.expect(200);
        }
        reports_equal_a_recount(&app, &client, site).await;
        let mut late = Vec::new();
        // Not c0, whose early deal stays before any visit.
        for (vid, _, _) in deals.iter().filter(|deal| deal.0 != "c0") {
            late.push(json!({ "site": site, "type": "pageview", "tracker_vid": vid, "ts": now - 29 * DAY_MS,
                              "url": "https://credit.example/", "referrer": "https://www.bing.com/" }));
        }
        late.push(json!({ "site": site, "type": "custom_event", "event_name": "purchase", "tracker_vid": "c1",
                          "url": "https://credit.example/buy", "ts": now - 3 * DAY_MS,
                          "revenue": { "amount": "12.34", "currency": "USD" } }));
        late.push(json!({ "site": site, "type": "pageview", "tracker_vid": "late", "ts": now - 6 * DAY_MS,
                          "url": "https://credit.example/?utm_source=partner&utm_campaign=late" }));
        app.collect_with(json!({ "events": late }), DESKTOP_UA, &[]).await.expect(202);
        app.state.writer.flush().await;
        reports_equal_a_recount(&app, &client, site).await;
        client
            .identify(json!({ "siteId": site, "tracker_vid": "late", "email": "late@credit.example" }))
            .await
            .expect(200);
        app.state.writer.flush().await;
        reports_equal_a_recount(&app, &client, site).await;
        let erased = client.delete(&format!("/api/visitor/{}?siteId={site}", deals[1].0)).await;
        assert_eq!(erased.status.as_u16(), 200, "{}", erased.text);
        reports_equal_a_recount(&app, &client, site).await;
        // A retention purge takes the oldest visits and outcomes with it.
        client.put(&format!("/api/sites/{site}"), json!({ "retentionDays": 20 })).await.expect(200);
        let purged = leadtrail::service::privacy::retention::purge(&app.state.db, now_ms()).await.unwrap();
        assert!(purged.events > 0, "{purged:?}");
        reports_equal_a_recount(&app, &client, site).await;

        // A write that commits while a report computes its days: the report
        // answers what it read but keeps none of them (it would keep what
        // the write made stale); with no write between, the same call keeps.
        let now = now_ms();
        let closed = (now - now % DAY_MS - 9 * DAY_MS, now - now % DAY_MS - DAY_MS);
        let kept = || {
            credit_day_fill::Entity::find()
                .filter(credit_day_fill::Column::SiteId.eq(site))
                .filter(credit_day_fill::Column::Model.eq(1))
                .filter(credit_day_fill::Column::Grouping.eq(1))
                .count(db)
        };
        cache::forget_all(db, site, now).await.unwrap();
        let late_deal = json!({ "siteId": site, "name": "Closed won", "amount": "5.00", "currency": "EUR",
                                "tracker_vid": "c3", "occurred_at": now - 4 * DAY_MS, "external_id": "race-1" });
        let crm = &crm;
        let compute_while_a_deal_lands = move |_runs| async move {
            crm.post("/api/conversions", late_deal).await.expect(200);
            Ok::<_, leadtrail::error::AppError>(Vec::new())
        };
        cache::tallies(db, db, site, Model::FirstTouch, VisitGroup::Channel, closed, compute_while_a_deal_lands)
            .await
            .unwrap();
        assert_eq!(kept().await.unwrap(), 0, "days computed before a write are not kept");
        let compute_quietly = |_runs| async { Ok::<_, leadtrail::error::AppError>(Vec::new()) };
        cache::tallies(db, db, site, Model::FirstTouch, VisitGroup::Channel, closed, compute_quietly).await.unwrap();
        assert_eq!(kept().await.unwrap(), 8, "with no write between, the eight days are kept");
        // Those were made up (no tallies at all): forget them, and the reports recount.
        cache::forget_all(db, site, now).await.unwrap();
        reports_equal_a_recount(&app, &client, site).await;

        // Refusals name their field; another org's site is not found; no session, nothing.
        for (body, field) in [
            (json!({ "site_id": site, "model": "u_shaped" }), "model"),
            (json!({ "site_id": site, "by": "weather" }), "by"),
            (json!({ "site_id": site, "date_range": "lately" }), "date_range"),
        ] {
            let reply = client.post("/api/v2/attribution", body.clone()).await;
            assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
            assert_eq!(reply.body["field"], field, "{body}: {}", reply.text);
        }
        let (stranger, _) = app.user_with_site("Sly", "else.example").await;
        assert_eq!(stranger.post("/api/v2/attribution", json!({ "site_id": site })).await.status.as_u16(), 404);
        assert_eq!(app.client().post("/api/v2/attribution", json!({ "site_id": site })).await.status.as_u16(), 401);
    }
}

/// Every model by every grouping over 30 days equals a recount over the raw
/// rows of the site: its visits, identities, conversions and revenue events.
async fn reports_equal_a_recount(app: &TestApp, client: &Client, site: i64) {
    // The raw rows.
    let db = &app.state.db;
    let sessions =
        tracked_session::Entity::find().filter(tracked_session::Column::SiteId.eq(site)).all(db).await.unwrap();
    assert!(sessions.iter().any(|s| s.link_id.is_some()), "some visits began with a click");
    let slugs: HashMap<i64, String> =
        link::Entity::find().all(db).await.unwrap().into_iter().map(|l| (l.id, l.slug)).collect();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut first_identified: HashMap<i64, i64> = HashMap::new();
    for identity in identity::Entity::find().filter(identity::Column::SiteId.eq(site)).all(db).await.unwrap() {
        let entry = first_identified.entry(identity.visitor_id).or_insert(identity.identified_at);
        *entry = (*entry).min(identity.identified_at);
    }
    outcomes.extend(first_identified.into_iter().map(|(visitor, at)| (visitor, at, None)));
    // A conversion waiting for its person is credited once it joins them.
    for c in conversion::Entity::find().filter(conversion::Column::SiteId.eq(site)).all(db).await.unwrap() {
        if let Some(visitor) = c.visitor_id {
            outcomes.push((visitor, c.occurred_at, Some((c.amount_minor, c.currency))));
        }
    }
    for e in event::Entity::find().filter(event::Column::SiteId.eq(site)).all(db).await.unwrap() {
        if let (Some(minor), Some(currency)) = (e.revenue_minor, e.revenue_currency) {
            outcomes.push((e.visitor_id, e.timestamp, Some((minor, currency))));
        }
    }

    for model in ["first_touch", "last_touch", "linear"] {
        for by in ["channel", "source", "campaign", "link"] {
            let key_of = |s: &tracked_session::Model| -> String {
                let or = |text: Option<String>, none: &str| {
                    text.filter(|t| !t.is_empty()).unwrap_or_else(|| none.to_owned())
                };
                match by {
                    "channel" => s.channel.clone(),
                    "source" => or(s.source.clone(), "Direct / None"),
                    "campaign" => or(s.utm_campaign.clone(), "(not set)"),
                    _ => or(s.link_id.map(|id| slugs[&id].clone()), "(none)"),
                }
            };
            let mut sums: BTreeMap<String, (f64, f64, BTreeMap<String, i64>)> = BTreeMap::new();
            for (visitor, at, amount) in &outcomes {
                let mut before: Vec<&tracked_session::Model> =
                    sessions.iter().filter(|s| s.visitor_id == *visitor && s.started_at <= *at).collect();
                before.sort_by_key(|s| (s.started_at, s.id));
                let chosen: Vec<&tracked_session::Model> = match model {
                    "first_touch" => before.first().copied().into_iter().collect(),
                    "last_touch" => before.last().copied().into_iter().collect(),
                    _ => before.clone(),
                };
                let parts = chosen.len().max(1) as i64;
                let keys: Vec<String> = if chosen.is_empty() {
                    vec!["(no visit)".to_owned()]
                } else {
                    chosen.iter().map(|s| key_of(s)).collect()
                };
                for (index, group) in keys.into_iter().enumerate() {
                    let entry = sums.entry(group).or_default();
                    match amount {
                        None => entry.0 += 1.0 / parts as f64,
                        Some((minor, currency)) => {
                            entry.1 += 1.0 / parts as f64;
                            let share = minor / parts + i64::from((index as i64) < minor % parts);
                            *entry.2.entry(currency.clone()).or_default() += share;
                        }
                    }
                }
            }
            let mut expected: Vec<Row> = sums
                .into_iter()
                .map(|(value, (leads, conversions, revenue))| {
                    (value, round(leads), round(conversions), revenue.into_iter().map(|(c, m)| (c, cents(m))).collect())
                })
                .collect();
            expected.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| b.1.total_cmp(&a.1)).then_with(|| a.0.cmp(&b.0)));
            let reply = client
                .post("/api/v2/attribution", json!({ "site_id": site, "model": model, "by": by, "date_range": "30d" }))
                .await;
            let reply = reply.expect(200);
            let got: Vec<Row> = reply["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| {
                    let revenue = row["revenue"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| (m["currency"].as_str().unwrap().to_owned(), m["amount"].as_str().unwrap().to_owned()))
                        .collect();
                    (
                        row["value"].as_str().unwrap().to_owned(),
                        row["leads"].as_f64().unwrap(),
                        row["conversions"].as_f64().unwrap(),
                        revenue,
                    )
                })
                .collect();
            assert_eq!(got, expected, "{model} by {by}");
            assert_eq!(
                reply["total"]["conversions"].as_f64().unwrap(),
                outcomes.iter().filter(|o| o.2.is_some()).count() as f64
            );
            assert_eq!(
                reply["total"]["leads"].as_f64().unwrap(),
                outcomes.iter().filter(|o| o.2.is_none()).count() as f64
            );
            let mut revenue: BTreeMap<String, i64> = BTreeMap::new();
            for (_, _, amount) in &outcomes {
                if let Some((minor, currency)) = amount {
                    *revenue.entry(currency.clone()).or_default() += minor;
                }
            }
            let total: BTreeMap<String, String> = reply["total"]["revenue"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["currency"].as_str().unwrap().to_owned(), m["amount"].as_str().unwrap().to_owned()))
                .collect();
            assert_eq!(total, revenue.into_iter().map(|(c, m)| (c, cents(m))).collect(), "{model} by {by}");
            if model == "first_touch" {
                assert!(got.iter().any(|row| row.0 == "(no visit)"), "the early deal: {got:?}");
            }
        }
    }
}

/// A lead is a visitor's first identification, counted once on its day:
/// a visitor identified again inside a range whose first identification
/// came before it is no lead of the range, and two identifications at the
/// same instant are one lead. Each range is read with its closed days kept
/// and from the rows.
#[tokio::test]
async fn a_lead_is_counted_once_on_the_day_of_its_first_identification() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ada", "leads.example").await;
        let now = now_ms();
        // Each visitor's identifications, in days before now.
        let people: [(&str, &[i64]); 4] = [("early", &[8, 2]), ("twice", &[2, 2]), ("once", &[2]), ("today", &[0])];
        for (vid, _) in people {
            let visit = json!({ "site": site, "type": "pageview", "tracker_vid": vid, "ts": now - 10 * DAY_MS,
                                "url": "https://leads.example/" });
            app.collect_with(json!({ "events": [visit] }), DESKTOP_UA, &[]).await.expect(202);
        }
        app.state.writer.flush().await;
        let db = &app.state.db;
        for (vid, days) in people {
            let visitor = entity::visitor::Entity::find()
                .filter(entity::visitor::Column::SiteId.eq(site))
                .filter(entity::visitor::Column::TrackerVid.eq(vid))
                .one(db)
                .await
                .unwrap()
                .unwrap();
            for day in days {
                // Late rows, so the kept days of this site are forgotten as a write would.
                identity::ActiveModel {
                    site_id: Set(site),
                    visitor_id: Set(visitor.id),
                    tracker_vid: Set(vid.to_owned()),
                    email: Set(Some(format!("{vid}@leads.example"))),
                    traits: Set("{}".to_owned()),
                    source: Set("api".to_owned()),
                    identified_at: Set(now - day * DAY_MS - MINUTE_MS),
                    ..Default::default()
                }
                .insert(db)
                .await
                .unwrap();
            }
        }
        cache::forget_all(db, site, now).await.unwrap();
        let day = |days_ago: i64| {
            chrono::DateTime::from_timestamp_millis(now - days_ago * DAY_MS).unwrap().format("%Y-%m-%d").to_string()
        };
        // (range, leads): the last five days hold three first identifications;
        // the last thirty, four; today alone, one.
        let ranges = [(json!([day(5), day(0)]), 3.0), (json!("30d"), 4.0), (json!([day(0), day(0)]), 1.0)];
        for _read in ["computed", "kept"] {
            for (range, leads) in &ranges {
                let reply = client
                    .post(
                        "/api/v2/attribution",
                        json!({ "site_id": site, "model": "first_touch", "by": "channel", "date_range": range }),
                    )
                    .await;
                let reply = reply.expect(200);
                assert_eq!(reply["total"]["leads"].as_f64().unwrap(), *leads, "{range}: {reply}");
            }
        }
    }
}
