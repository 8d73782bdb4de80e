//! The lead desk's list (design §19): search, filters, sort and page numbers
//! on `GET /api/visitor` and GraphQL `visitors`, each answer compared with a
//! recount over the raw visitor and identity rows; bad values are 400 with
//! their field; another org's site is 404.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::cmp::Reverse;

use common::{
    Client, apps_with,
    traffic::{DESKTOP_UA, at, pageview},
};
use entity::{identity, visitor};
use leadtrail::{
    service::scoring,
    time::{DAY_MS, HOUR_MS, now_ms},
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

fn generous(config: &mut leadtrail::config::Config) {
    config.collect_rate_limit_per_second = 1_000_000;
    config.collect_site_rate_limit_per_second = 1_000_000;
    config.trust_proxy = leadtrail::config::TrustProxy::Cloudflare;
}

const COUNTRIES: [&str; 3] = ["DE", "FR", "JP"];

/// Forty visitors: varied pages, visits, forms and countries; some
/// identified with names, emails and companies (one company with a `%`).
async fn feed(app: &common::TestApp, client: &Client, site: i64) {
    let now = now_ms();
    for n in 0..40_i64 {
        let vid = format!("desk-{n:02}");
        let seen = now - (n % 9) * DAY_MS - (n % 5) * HOUR_MS - 10 * 60_000;
        let mut events: Vec<Value> = (0..(1 + n % 6))
            .map(|i| {
                let page = if i % 3 == 1 { "/pricing" } else { "/blog" };
                at(pageview(site, &vid, &format!("https://desk.example{page}")), seen + i * 40_000)
            })
            .collect();
        if n % 4 == 0 {
            let mut form = at(pageview(site, &vid, "https://desk.example/contact"), seen + 400_000);
            form["type"] = json!("custom_event");
            form["event_name"] = json!("form_submit");
            events.push(form);
        }
        let country = COUNTRIES[(n % 3) as usize];
        app.collect_with(json!({ "events": events }), DESKTOP_UA, &[("cf-ipcountry", country)]).await.expect(202);
        if n % 3 == 0 {
            let company = if n % 2 == 0 { "Acme Corp" } else { "50% Off Ltd" };
            let who = json!({ "siteId": site, "tracker_vid": vid, "email": format!("person{n}@desk.example"),
                "name": format!("Person {n}"), "company": company });
            client.identify(who).await.expect(200);
        }
    }
    app.state.writer.flush().await;
}

/// A visitor as the recount sees it.
struct Row {
    vid: String,
    score: i32,
    model: visitor::Model,
    words: Vec<String>,
}

async fn recount(app: &common::TestApp, site: i64) -> Vec<Row> {
    let now = now_ms();
    let visitors = visitor::Entity::find().filter(visitor::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
    let identities =
        identity::Entity::find().filter(identity::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
    visitors
        .into_iter()
        .filter(|v| !v.is_bot)
        .map(|v| {
            let mut words: Vec<String> = [Some(v.tracker_vid.clone()), v.email.clone(), v.identified_user_id.clone()]
                .into_iter()
                .flatten()
                .collect();
            for i in identities.iter().filter(|i| i.visitor_id == v.id) {
                words.extend([i.name.clone(), i.company.clone(), i.email.clone()].into_iter().flatten());
            }
            let words = words.into_iter().map(|w| w.to_lowercase()).collect();
            Row { vid: v.tracker_vid.clone(), score: scoring::total(v.score, v.last_seen, now), model: v, words }
        })
        .collect()
}

/// Which rows a filter keeps, and what a sort orders by.
type Keep = Box<dyn Fn(&Row) -> bool>;
type Key<'a> = &'a dyn Fn(&Row) -> i64;

fn vids(list: &Value) -> Vec<String> {
    list["visitors"].as_array().unwrap().iter().map(|v| v["tracker_vid"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn search_filters_sorts_and_pages_match_a_recount() {
    for app in apps_with(generous).await {
        let (client, site) = app.user_with_site("Desk", "desk.example").await;
        feed(&app, &client, site).await;
        let rows = recount(&app, site).await;
        assert_eq!(rows.len(), 40);
        let list = |query: &str| {
            let client = client.clone();
            let path = format!("/api/visitor?siteId={site}&timeRange=all&limit=500&{query}");
            async move { client.get(&path).await.expect(200).clone() }
        };
        // The recount's order for a key: that key, then most recently seen, then newest row.
        let ordered = |mut picked: Vec<&Row>, key: &dyn Fn(&Row) -> i64, descending: bool| {
            picked.sort_by_key(|row| {
                let k = key(row);
                (if descending { -k } else { k }, Reverse(row.model.last_seen), Reverse(row.model.id))
            });
            picked.into_iter().map(|row| row.vid.clone()).collect::<Vec<_>>()
        };
        let score = |row: &Row| i64::from(row.score);

        // Search: a company, a name, part of an email, part of a visitor id, a literal %.
        for (q, needle) in
            [("acme", "acme"), ("PERSON 1", "person 1"), ("@desk", "@desk"), ("desk-0", "desk-0"), ("50%", "50%")]
        {
            let picked: Vec<&Row> = rows.iter().filter(|row| row.words.iter().any(|w| w.contains(needle))).collect();
            let expected = ordered(picked, &score, true);
            assert!(!expected.is_empty(), "{q} matches someone");
            let answer = list(&format!("q={}", urlencode(q))).await;
            assert_eq!(vids(&answer), expected, "q={q}");
            assert_eq!(answer["total"], expected.len(), "q={q}");
        }
        assert_eq!(list("q=nobody-at-all").await["total"], 0);

        // Filters, alone and together.
        let cases: Vec<(&str, Keep)> = vec![
            ("status=identified", Box::new(|r: &Row| r.model.status == "identified")),
            ("status=anonymous", Box::new(|r: &Row| r.model.status == "anonymous")),
            ("country=de", Box::new(|r: &Row| r.model.country.as_deref() == Some("DE"))),
            ("form=true", Box::new(|r: &Row| r.model.form_submits > 0)),
            ("minScore=30", Box::new(|r: &Row| r.score >= 30)),
            (
                "country=FR&form=1&status=identified",
                Box::new(|r: &Row| {
                    r.model.country.as_deref() == Some("FR")
                        && r.model.form_submits > 0
                        && r.model.status == "identified"
                }),
            ),
        ];
        for (query, keep) in cases {
            let expected = ordered(rows.iter().filter(|row| keep(row)).collect(), &score, true);
            let answer = list(query).await;
            assert_eq!(vids(&answer), expected, "{query}");
            assert_eq!(answer["total"], expected.len(), "{query}");
        }

        // Every sort, both ways.
        let keys: [(&str, Key); 5] = [
            ("score", &score),
            ("last_seen", &|r: &Row| r.model.last_seen),
            ("pageviews", &|r: &Row| i64::from(r.model.total_pageviews)),
            ("time", &|r: &Row| r.model.total_time_seconds),
            ("sessions", &|r: &Row| i64::from(r.model.total_sessions)),
        ];
        for (name, key) in keys {
            for (order, descending) in [("desc", true), ("asc", false)] {
                let expected = ordered(rows.iter().collect(), key, descending);
                assert_eq!(
                    vids(&list(&format!("sort={name}&order={order}")).await),
                    expected,
                    "sort={name}&order={order}"
                );
            }
        }

        // Page numbers: pages of `limit`, the total on each; GraphQL the same.
        let all = ordered(rows.iter().collect(), &|r: &Row| i64::from(r.model.total_pageviews), true);
        for page in 1..=5 {
            let path = format!("/api/visitor?siteId={site}&timeRange=all&limit=9&sort=pageviews&page={page}");
            let answer = client.get(&path).await.expect(200).clone();
            let start = ((page - 1) * 9).min(all.len());
            assert_eq!(vids(&answer), all[start..(start + 9).min(all.len())], "page {page}");
            assert_eq!(answer["total"], 40);
        }
        let graphql = client
            .graphql(
                "query($s: Int!) { visitors(siteId: $s, timeRange: \"all\", first: 9, page: 2, sort: \"pageviews\") { total nodes { trackerVid } } }",
                json!({ "s": site }),
            )
            .await;
        let nodes: Vec<&str> = graphql["data"]["visitors"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["trackerVid"].as_str().unwrap())
            .collect();
        assert_eq!(nodes, all[9..18], "{graphql}");

        // Bad values: 400 with the field, never 500; a limit over 500 stays capped.
        for (query, field) in [
            ("sort=name", "sort"),
            ("order=up", "order"),
            ("page=0", "page"),
            ("page=-3", "page"),
            ("page=many", "page"),
            ("status=hot", "status"),
            ("country=Germany", "country"),
            ("minScore=101", "minScore"),
            ("hot=maybe", "hot"),
            ("form=yes", "form"),
        ] {
            let reply = client.get(&format!("/api/visitor?siteId={site}&{query}")).await;
            reply.expect_error(400, "VALIDATION_ERROR");
            assert_eq!(reply.body["field"], field, "{query}: {}", reply.text);
        }
        let long = "x".repeat(201);
        let reply = client.get(&format!("/api/visitor?siteId={site}&q={long}")).await;
        reply.expect_error(400, "VALIDATION_ERROR");
        assert_eq!(reply.body["field"], "q", "{}", reply.text);
        let capped = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&limit=9999&q=desk")).await;
        assert_eq!(capped.expect(200)["visitors"].as_array().unwrap().len(), 40);

        // Another org's site is 404 whatever the filters.
        let (stranger, _) = app.user_with_site("Stranger", "stranger.example").await;
        stranger.get(&format!("/api/visitor?siteId={site}&q=acme")).await.expect_error(404, "NOT_FOUND");
    }
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
