//! The lead desk's list (design §19): search, filters, sort and page numbers
//! on `GET /api/visitor` and GraphQL `visitors`, each answer compared with a
//! recount over the raw visitor, identity, session, event and click rows;
//! the CSV export holds every matching row, formulas neutralised; bad values
//! are 400 with their field; another org's site is 404.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::cmp::Reverse;

use common::{
    Client, apps_with,
    traffic::{BOT_UA, DESKTOP_UA, at, pageview},
};
use entity::{event, identity, link_click, tracked_session, visitor};
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

/// Where a visit comes from: a referrer, UTM tags, or nothing (direct).
fn arrival(n: i64) -> (&'static str, &'static str) {
    match n % 5 {
        0 => ("https://www.google.com/", ""),
        1 => ("", "?utm_source=newsletter&utm_medium=email&utm_campaign=spring"),
        2 => ("", ""),
        3 => ("https://twitter.com/someone", ""),
        _ => ("", "?utm_source=google&utm_medium=cpc&utm_campaign=winter"),
    }
}

/// Forty visitors: varied pages, visits, sources, forms and countries; some
/// came back from another source two days later, some through a tracking
/// link; some identified with names, emails and companies (one company
/// with a `%`).
async fn feed(app: &common::TestApp, client: &Client, site: i64) {
    let now = now_ms();
    let ad = client
        .create_link(json!({ "siteId": site, "destinationUrl": "https://desk.example/pricing", "slug": "desk-ad",
            "campaign": "autumn", "source": "facebook", "medium": "cpc", "link_type": "ad" }))
        .await;
    let ad_path = url::Url::parse(ad["fullUrl"].as_str().unwrap()).unwrap().path().to_owned();
    for n in 0..40_i64 {
        let vid = format!("desk-{n:02}");
        let seen = now - (n % 9) * DAY_MS - (n % 5) * HOUR_MS - 10 * 60_000;
        // A link click starts the latest visit of every fourth visitor.
        let landing = if n % 4 == 3 {
            let location = app.click(&ad_path, &[]).await;
            let key = url::Url::parse(&location)
                .unwrap()
                .query_pairs()
                .find(|(k, _)| k == "lt_click")
                .unwrap()
                .1
                .into_owned();
            format!("?utm_source=facebook&utm_medium=cpc&utm_campaign=autumn&lt_click={key}")
        } else {
            arrival(n).1.to_owned()
        };
        let mut events: Vec<Value> = (0..(1 + n % 6))
            .map(|i| {
                let page = if i % 3 == 1 {
                    "/pricing"
                } else if i % 3 == 2 {
                    "/docs/api"
                } else {
                    "/blog"
                };
                let query = if i == 0 { landing.as_str() } else { "" };
                at(pageview(site, &vid, &format!("https://desk.example{page}{query}")), seen + i * 40_000)
            })
            .collect();
        if n % 4 != 3 && !arrival(n).0.is_empty() {
            events[0]["referrer"] = json!(arrival(n).0);
        }
        if n % 6 == 5 {
            // An earlier visit from elsewhere: the latest one is the last touch.
            let (referrer, query) = arrival(n + 2);
            let mut earlier =
                at(pageview(site, &vid, &format!("https://desk.example/features{query}")), seen - 2 * DAY_MS);
            if !referrer.is_empty() {
                earlier["referrer"] = json!(referrer);
            }
            events.push(earlier);
        }
        if n % 4 == 0 {
            let mut form = at(pageview(site, &vid, "https://desk.example/contact"), seen + 400_000);
            form["type"] = json!("custom_event");
            form["event_name"] = json!("form_submit");
            events.push(form);
        }
        let country = COUNTRIES[(n % 3) as usize];
        app.collect_with(json!({ "events": events }), DESKTOP_UA, &[("cf-ipcountry", country)]).await.expect(202);
        // Three kinds of account (design §18): a work email's domain, a
        // free-mail address with the company's website, a work email alone.
        let who = match n % 9 {
            0 => json!({ "email": format!("person{n}@acme.example"), "company": "Acme Corp" }),
            3 => json!({ "email": format!("person{n}@gmail.com"), "company": "50% Off Ltd",
                "traits": { "website": "https://www.Fifty.example/about" } }),
            6 => json!({ "email": format!("person{n}@desk.example") }),
            _ => Value::Null,
        };
        if let Value::Object(mut who) = who {
            who.extend([
                ("siteId".to_owned(), json!(site)),
                ("tracker_vid".to_owned(), json!(vid)),
                ("name".to_owned(), json!(format!("Person {n}"))),
            ]);
            client.identify(Value::Object(who)).await.expect(200);
        }
    }
    app.state.writer.flush().await;
}

/// The account `feed` gives visitor `n`: key, name and what it came from.
fn expected_account(n: i64) -> Option<(&'static str, &'static str, &'static str)> {
    match n % 9 {
        0 => Some(("acme.example", "Acme Corp", "email")),
        3 => Some(("fifty.example", "50% Off Ltd", "company")),
        6 => Some(("desk.example", "desk.example", "email")),
        _ => None,
    }
}

/// A visitor as the recount sees it.
struct Row {
    /// Its number in `feed`.
    n: i64,
    vid: String,
    score: i32,
    model: visitor::Model,
    words: Vec<String>,
    /// The channel and campaign of the session with the latest event.
    last_touch: (String, Option<String>),
    /// Every page viewed, and the latest.
    pages: Vec<String>,
    /// Every pageview: its page and time.
    viewed: Vec<(String, i64)>,
    last_page: Option<String>,
    /// Slugs of the links clicked.
    clicked: Vec<String>,
}

async fn recount(app: &common::TestApp, site: i64) -> Vec<Row> {
    let now = now_ms();
    let visitors = visitor::Entity::find().filter(visitor::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
    let identities =
        identity::Entity::find().filter(identity::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
    let sessions = tracked_session::Entity::find()
        .filter(tracked_session::Column::SiteId.eq(site))
        .all(&app.state.db)
        .await
        .unwrap();
    let events = event::Entity::find().filter(event::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
    let clicks =
        link_click::Entity::find().filter(link_click::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
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
            // Fillers added by a test have no number and no account.
            let n: i64 = v.tracker_vid.strip_prefix("desk-").map_or(-1, |n| n.parse().unwrap());
            words.extend(expected_account(n).map(|(_, name, _)| name.to_owned()));
            let words = words.into_iter().map(|w| w.to_lowercase()).collect();
            let latest = sessions.iter().filter(|s| s.visitor_id == v.id).max_by_key(|s| (s.ended_at, s.id)).unwrap();
            let mut views: Vec<&event::Model> =
                events.iter().filter(|e| e.visitor_id == v.id && e.event_type == "pageview").collect();
            views.sort_by_key(|e| (e.timestamp, e.id));
            Row {
                n,
                vid: v.tracker_vid.clone(),
                score: scoring::total(v.score, v.last_seen, now),
                words,
                last_touch: (latest.channel.clone(), latest.utm_campaign.clone()),
                pages: views.iter().map(|e| e.page.clone()).collect(),
                viewed: views.iter().map(|e| (e.page.clone(), e.timestamp)).collect(),
                last_page: views.last().map(|e| e.page.clone()),
                clicked: clicks.iter().filter(|c| c.visitor_id == Some(v.id)).map(|c| c.slug.clone()).collect(),
                model: v,
            }
        })
        .collect()
}

/// Which rows a filter keeps, and what a sort orders by.
type Keep = Box<dyn Fn(&Row) -> bool>;
type Key<'a> = &'a dyn Fn(&Row) -> i64;

fn vids(list: &Value) -> Vec<String> {
    list["visitors"].as_array().unwrap().iter().map(|v| v["tracker_vid"].as_str().unwrap().to_owned()).collect()
}

/// A country, a last touch (channel, campaign, form) and a status are
/// counted from the hourly rollups, not the rows: the totals of a range
/// whose first hour is partial match a recount.
async fn ranged_totals_match_a_recount(app: &common::TestApp, client: &Client, site: i64) {
    // No visitor's last visit lies within minutes of the 7-day edge.
    let rows = recount(app, site).await;
    let since = now_ms() - 7 * DAY_MS;
    let ranged: Vec<(&str, Keep)> = vec![
        ("", Box::new(|_: &Row| true)),
        ("country=de", Box::new(|r: &Row| r.model.country.as_deref() == Some("DE"))),
        ("status=identified", Box::new(|r: &Row| r.model.status == "identified")),
        ("status=anonymous", Box::new(|r: &Row| r.model.status == "anonymous")),
        (
            "country=FR&status=identified",
            Box::new(|r: &Row| r.model.country.as_deref() == Some("FR") && r.model.status == "identified"),
        ),
        (
            "country=jp&status=anonymous&sort=pageviews",
            Box::new(|r: &Row| r.model.country.as_deref() == Some("JP") && r.model.status == "anonymous"),
        ),
        ("country=GB", Box::new(|_: &Row| false)),
        ("channel=Organic+Search", Box::new(|r: &Row| r.last_touch.0 == "Organic Search")),
        ("campaign=autumn", Box::new(|r: &Row| r.last_touch.1.as_deref() == Some("autumn"))),
        ("form=1", Box::new(|r: &Row| r.model.form_submits > 0)),
        (
            "channel=Paid+Search&campaign=winter&status=anonymous",
            Box::new(|r: &Row| {
                r.last_touch.0 == "Paid Search"
                    && r.last_touch.1.as_deref() == Some("winter")
                    && r.model.status == "anonymous"
            }),
        ),
        (
            "form=1&status=identified&sort=last_seen",
            Box::new(|r: &Row| r.model.form_submits > 0 && r.model.status == "identified"),
        ),
        ("channel=Email&campaign=no-such-campaign", Box::new(|_: &Row| false)),
        // `visited` alone is counted from the page index: pages viewed in the range.
        ("visited=/pricing", Box::new(move |r: &Row| r.viewed.iter().any(|(p, t)| p == "/pricing" && *t >= since))),
        ("visited=/features", Box::new(move |r: &Row| r.viewed.iter().any(|(p, t)| p == "/features" && *t >= since))),
        ("visited=*s*", Box::new(move |r: &Row| r.viewed.iter().any(|(p, t)| p.contains('s') && *t >= since))),
        // `link` alone is counted from the link index: visitors seen in the range who clicked it.
        ("link=desk-ad", Box::new(|r: &Row| r.clicked.iter().any(|slug| slug == "desk-ad"))),
        ("link=no-such-link", Box::new(|_: &Row| false)),
    ];
    for (query, keep) in ranged {
        let expected = rows.iter().filter(|r| r.model.last_seen >= since && keep(r)).count();
        let path = format!("/api/visitor?siteId={site}&timeRange=7d&limit=500&{query}");
        let answer = client.get(&path).await.expect(200).clone();
        assert_eq!(answer["total"], expected, "7d {query}");
        assert_eq!(answer["visitors"].as_array().unwrap().len(), expected, "7d {query}");
        assert!(expected < rows.len(), "the range leaves someone out");
    }
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
        // The recount's order for a key: that key, then last seen, then row,
        // all one way: ascending is the exact reverse of descending.
        let ordered = |mut picked: Vec<&Row>, key: &dyn Fn(&Row) -> i64, descending: bool| {
            picked.sort_by_key(|row| (key(row), row.model.last_seen, row.model.id));
            if descending {
                picked.reverse();
            }
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
            ("channel=Organic+Search", Box::new(|r: &Row| r.last_touch.0 == "Organic Search")),
            ("channel=Email", Box::new(|r: &Row| r.last_touch.0 == "Email")),
            ("channel=Paid+Social", Box::new(|r: &Row| r.last_touch.0 == "Paid Social")),
            ("campaign=winter", Box::new(|r: &Row| r.last_touch.1.as_deref() == Some("winter"))),
            ("campaign=autumn", Box::new(|r: &Row| r.last_touch.1.as_deref() == Some("autumn"))),
            ("link=desk-ad", Box::new(|r: &Row| r.clicked.iter().any(|slug| slug == "desk-ad"))),
            ("link=no-such-link", Box::new(|_: &Row| false)),
            ("visited=/pricing", Box::new(|r: &Row| r.pages.iter().any(|p| p == "/pricing"))),
            ("visited=/docs/*", Box::new(|r: &Row| r.pages.iter().any(|p| p.starts_with("/docs/")))),
            ("visited=*ea*", Box::new(|r: &Row| r.pages.iter().any(|p| p.contains("ea")))),
            ("visited=/PRICING", Box::new(|_: &Row| false)),
            ("account=acme.example", Box::new(|r: &Row| expected_account(r.n).is_some_and(|a| a.0 == "acme.example"))),
            (
                "account=FIFTY.example",
                Box::new(|r: &Row| expected_account(r.n).is_some_and(|a| a.0 == "fifty.example")),
            ),
            ("account=gmail.com", Box::new(|_: &Row| false)),
            (
                "account=desk.example&form=1",
                Box::new(|r: &Row| {
                    expected_account(r.n).is_some_and(|a| a.0 == "desk.example") && r.model.form_submits > 0
                }),
            ),
            (
                "channel=Direct&visited=/features&status=anonymous",
                Box::new(|r: &Row| {
                    r.last_touch.0 == "Direct"
                        && r.pages.iter().any(|p| p == "/features")
                        && r.model.status == "anonymous"
                }),
            ),
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
            // Pages of three and of one: a filter that keeps many is met walking the
            // order's index, one that keeps few read whole and sorted (the
            // total decides); both give the recount's pages, in both orders.
            for (sort, key, descending) in
                [("score", &score as Key, true), ("pageviews", &|r: &Row| i64::from(r.model.total_pageviews), false)]
            {
                let expected = ordered(rows.iter().filter(|row| keep(row)).collect(), key, descending);
                let order = if descending { "desc" } else { "asc" };
                for (limit, page) in [(3, 1), (3, 2), (1, 1), (1, 2)] {
                    let path = format!(
                        "/api/visitor?siteId={site}&timeRange=all&limit={limit}&page={page}&sort={sort}&order={order}&{query}"
                    );
                    let answer = client.get(&path).await.expect(200).clone();
                    let want: Vec<String> = expected.iter().skip((page - 1) * limit).take(limit).cloned().collect();
                    assert_eq!(vids(&answer), want, "{path}");
                    assert_eq!(answer["total"], expected.len(), "{path}");
                }
            }
        }
        ranged_totals_match_a_recount(&app, &client, site).await;
        // Every filter above picks someone or no one as the recount says; the
        // data has something for each to find.
        for (what, count) in [
            ("Email", rows.iter().filter(|r| r.last_touch.0 == "Email").count()),
            ("Paid Social", rows.iter().filter(|r| r.last_touch.0 == "Paid Social").count()),
            ("a link click", rows.iter().filter(|r| !r.clicked.is_empty()).count()),
            ("a second visit", rows.iter().filter(|r| r.model.total_sessions > 1).count()),
        ] {
            assert!(count > 0, "the feed has {what}");
        }

        // The list's last-touch columns are the recount's.
        let graphql = client
            .graphql(
                "query($s: Int!) { visitors(siteId: $s, timeRange: \"all\", first: 100) { nodes { trackerVid lastChannel lastCampaign lastPage account { key name source } person { company } } } }",
                json!({ "s": site }),
            )
            .await;
        for node in graphql["data"]["visitors"]["nodes"].as_array().unwrap() {
            let row = rows.iter().find(|r| r.vid == node["trackerVid"].as_str().unwrap()).unwrap();
            assert_eq!(node["lastChannel"], json!(row.last_touch.0), "{node}");
            assert_eq!(node["lastCampaign"], json!(row.last_touch.1), "{node}");
            assert_eq!(node["lastPage"], json!(row.last_page), "{node}");
            let account = expected_account(row.n)
                .map(|(key, name, source)| json!({ "key": key, "name": name, "source": source }));
            assert_eq!(node["account"], json!(account), "{node}");
            // The company beside the person: the one typed, else the account's name.
            assert_eq!(node["person"]["company"], json!(expected_account(row.n).map(|a| a.1)), "{node}");
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
            ("channel=Carrier+pigeon", "channel"),
            ("channel=email", "channel"),
            ("visited=pricing", "visited"),
            ("format=xml", "format"),
            ("format=csv&sort=name", "sort"),
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

        // Erased visitors (identified, form submitters, campaign arrivals)
        // leave every rollup total with their rows.
        for vid in ["desk-00", "desk-03", "desk-05", "desk-12", "desk-24"] {
            client.delete(&format!("/api/visitor/{vid}?siteId={site}")).await.expect(200);
        }
        // A visitor inside the range's first, partial hour, which is counted
        // from the rows: halfway between the 7-day edge and the next whole
        // hour, unless that hour begins within minutes (then just after it).
        let edge = now_ms() - 7 * DAY_MS;
        let hour = (edge / HOUR_MS + 1) * HOUR_MS;
        let seen = if hour - edge >= 4 * 60_000 { edge + (hour - edge) / 2 } else { hour + 2 * 60_000 };
        let landing = "https://desk.example/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=autumn";
        let mut form = at(pageview(site, "edge-visitor", "https://desk.example/contact"), seen + 1_000);
        form["type"] = json!("custom_event");
        form["event_name"] = json!("form_submit");
        let events = json!({ "events": [at(pageview(site, "edge-visitor", landing), seen), form] });
        app.collect_with(events, DESKTOP_UA, &[]).await.expect(202);
        // A visitor found to be a bot takes the pages it viewed as a human
        // out of the humans' counts and into the bots'.
        let crawl = at(pageview(site, "desk-01", "https://desk.example/robots-only"), now_ms() - 60_000);
        app.collect_with(json!({ "events": [crawl] }), BOT_UA, &[]).await.expect(202);
        // The same for the links it clicked; and a link's visitor last seen
        // before the range who comes back is in the range's link count.
        let crawl = at(pageview(site, "desk-07", "https://desk.example/robots-only"), now_ms() - 60_000);
        app.collect_with(json!({ "events": [crawl] }), BOT_UA, &[]).await.expect(202);
        let back = at(pageview(site, "desk-35", "https://desk.example/blog"), now_ms() - 120_000);
        app.collect_with(json!({ "events": [back] }), DESKTOP_UA, &[]).await.expect(202);
        app.state.writer.flush().await;
        ranged_totals_match_a_recount(&app, &client, site).await;
        let bots = client.get(&format!("/api/visitor?siteId={site}&timeRange=7d&filter=bot&visited=/blog")).await;
        assert_eq!(vids(bots.expect(200)), ["desk-01"], "{}", bots.text);
        assert_eq!(bots.body["total"], 1);
        let bots = client.get(&format!("/api/visitor?siteId={site}&timeRange=7d&filter=bot&link=desk-ad")).await;
        assert_eq!(vids(bots.expect(200)), ["desk-07"], "{}", bots.text);
        assert_eq!(bots.body["total"], 1);
    }
}

/// The export: every matching row (not one page), in the list's order, with
/// the list's figures; a header row; cells that a spreadsheet would run as
/// formulas neutralised; refused and foreign as the list is.
#[tokio::test]
async fn the_csv_export_holds_every_matching_row() {
    for app in apps_with(generous).await {
        let (client, site) = app.user_with_site("Export", "desk.example").await;
        feed(&app, &client, site).await;
        let hostile = json!({ "siteId": site, "tracker_vid": "desk-01", "name": "=HYPERLINK(\"https://evil.example\")",
            "company": "+Evil, \"Inc\"\n<b>x</b>", "user_id": "-1+2" });
        client.identify(hostile).await.expect(200);
        app.state.writer.flush().await;
        let rows = recount(&app, site).await;

        let reply =
            client.get(&format!("/api/visitor?siteId={site}&timeRange=all&format=csv&sort=pageviews&limit=5")).await;
        assert_eq!(reply.status.as_u16(), 200, "{}", reply.text);
        assert_eq!(reply.headers["content-type"], "text/csv; charset=utf-8");
        let disposition = reply.headers["content-disposition"].to_str().unwrap();
        assert!(disposition.starts_with("attachment; filename=\"leads-site-"), "{disposition}");
        let mut reader = csv::Reader::from_reader(reply.text.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
        assert_eq!(header, leadtrail::service::analytics::desk::CSV_COLUMNS);
        let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        // Every visitor, not the page of 5, in the list's order.
        let mut expected: Vec<&Row> = rows.iter().collect();
        expected
            .sort_by_key(|r| (-i64::from(r.model.total_pageviews), Reverse(r.model.last_seen), Reverse(r.model.id)));
        let column = |name: &str| header.iter().position(|h| h == name).unwrap();
        let got: Vec<&str> = records.iter().map(|r| &r[column("visitor_id")]).collect();
        let want: Vec<&str> = expected.iter().map(|r| r.vid.as_str()).collect();
        assert_eq!(got, want);
        for (record, row) in records.iter().zip(&expected) {
            assert_eq!(record[column("score")], row.score.to_string(), "{record:?}");
            assert_eq!(record[column("pageviews")], row.model.total_pageviews.to_string());
            assert_eq!(record[column("sessions")], row.model.total_sessions.to_string());
            assert_eq!(record[column("status")], row.model.status);
            assert_eq!(record[column("channel")], row.last_touch.0);
            assert_eq!(record[column("campaign")], row.last_touch.1.clone().unwrap_or_default());
            assert_eq!(record[column("last_page")], row.last_page.clone().unwrap_or_default());
            let country = match row.model.country.as_deref() {
                Some("DE") => "Germany",
                Some("FR") => "France",
                Some("JP") => "Japan",
                other => panic!("unexpected country {other:?}"),
            };
            assert_eq!(record[column("country")], *country);
            // desk-01 was named a company without a domain just above.
            let account =
                if row.n == 1 { "name:+evil, \"inc\" <b>x</b>" } else { expected_account(row.n).map_or("", |a| a.0) };
            assert_eq!(&record[column("account")], account, "{record:?}");
            assert!(record[column("profile_url")].ends_with(&format!("/visitor/{}?site={site}", row.vid)));
        }
        let hostile = records.iter().find(|r| &r[column("visitor_id")] == "desk-01").unwrap();
        assert_eq!(&hostile[column("person")], "'=HYPERLINK(\"https://evil.example\")");
        assert_eq!(&hostile[column("company")], "'+Evil, \"Inc\"\n<b>x</b>");
        assert_eq!(&hostile[column("user_id")], "'-1+2");
        // No cell of the file starts a formula.
        for record in &records {
            for cell in record {
                assert!(!cell.starts_with(['=', '+', '-', '@']), "{cell:?} in {record:?}");
            }
        }

        // Filters narrow the export as they narrow the list.
        let filtered = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&format=csv&channel=Email")).await;
        let count = csv::Reader::from_reader(filtered.text.as_bytes()).records().count();
        assert_eq!(count, rows.iter().filter(|r| r.last_touch.0 == "Email").count());
        // Nothing matches: the header alone.
        let empty = client.get(&format!("/api/visitor?siteId={site}&format=csv&q=nobody-at-all")).await;
        assert_eq!(empty.status.as_u16(), 200);
        assert_eq!(empty.text.trim_end(), leadtrail::service::analytics::desk::CSV_COLUMNS.join(","));

        // Refused, signed out and foreign as the list is.
        client
            .get(&format!("/api/visitor?siteId={site}&format=csv&sort=name"))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        app.client().get(&format!("/api/visitor?siteId={site}&format=csv")).await.expect_error(401, "UNAUTHORIZED");
        let (stranger, _) = app.user_with_site("Stranger", "stranger.example").await;
        stranger.get(&format!("/api/visitor?siteId={site}&format=csv")).await.expect_error(404, "NOT_FOUND");
    }
}

/// The migration that gives existing visitors their account
/// (`m20261126_000001_add_visitor_account`) stores what the batch writer
/// stores, the latest identify that names a company winning.
#[tokio::test]
async fn the_account_backfill_stores_what_the_writer_stores() {
    use sea_orm::ConnectionTrait;
    for app in apps_with(generous).await {
        let (client, site) = app.user_with_site("Backfill", "desk.example").await;
        feed(&app, &client, site).await;
        // A later identify without a company keeps the account; one with a
        // new work email moves it.
        client.identify(json!({ "siteId": site, "tracker_vid": "desk-00", "user_id": "u-0" })).await.expect(200);
        client
            .identify(json!({ "siteId": site, "tracker_vid": "desk-09", "email": "p9@newco.example" }))
            .await
            .expect(200);
        app.state.writer.flush().await;
        let stored = || async {
            type Stored = (String, Option<String>, Option<String>, Option<String>);
            let mut rows: Vec<Stored> = visitor::Entity::find()
                .filter(visitor::Column::SiteId.eq(site))
                .all(&app.state.db)
                .await
                .unwrap()
                .into_iter()
                .map(|v| (v.tracker_vid, v.account_key, v.account_name, v.account_source))
                .collect();
            rows.sort();
            rows
        };
        let before = stored().await;
        let of = |vid: &str| before.iter().find(|row| row.0 == vid).unwrap().1.clone();
        assert_eq!(of("desk-00").as_deref(), Some("acme.example"));
        assert_eq!(of("desk-09").as_deref(), Some("newco.example"));
        assert_eq!(before.iter().filter(|row| row.1.is_some()).count(), 14, "{before:?}");

        app.state
            .db
            .execute_unprepared("UPDATE visitors SET account_key = NULL, account_name = NULL, account_source = NULL")
            .await
            .unwrap();
        migration::backfill_visitor_accounts(&app.state.db).await.unwrap();
        assert_eq!(stored().await, before);
    }
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The `/leads` page: its filters from the address applied as the API
/// applies them, page numbers with the total, the export link carrying the
/// same filters, and a refused filter shown beside its input (400) with
/// the list shown without it.
#[tokio::test]
async fn the_leads_page_filters_pages_and_exports() {
    use common::web::expect_page;
    for app in apps_with(generous).await {
        let (client, site) = app.user_with_site("Page", "desk.example").await;
        feed(&app, &client, site).await;
        for n in 0..70 {
            app.collect(pageview(site, &format!("filler-{n}"), "https://desk.example/")).await.expect(202);
        }
        app.state.writer.flush().await;
        let rows = recount(&app, site).await;

        let page = expect_page(&client.get("/leads?range=all&channel=Email").await, 200);
        let emails = rows.iter().filter(|r| r.last_touch.0 == "Email").count();
        let total = if emails == 1 { "1 visitor".to_owned() } else { format!("{emails} visitors") };
        assert!(page.contains(&total), "{total}");
        assert!(page.contains("<option value=\"Email\" selected>Email</option>"));
        assert!(page.contains(&format!(
            "href=\"/api/visitor?siteId={site}&#38;format=csv&#38;timeRange=all&#38;channel=Email\""
        )));

        // A company links to the list of its account's people.
        let acme = expect_page(&client.get("/leads?range=all").await, 200);
        assert!(
            acme.contains("<a class=\"company\" href=\"/leads?account=acme.example\">Acme Corp</a>"),
            "account link"
        );
        let acme = expect_page(&client.get("/leads?range=all&account=acme.example").await, 200);
        let people = rows.iter().filter(|r| expected_account(r.n).is_some_and(|a| a.0 == "acme.example")).count();
        assert!(acme.contains(&format!("{people} visitors")), "{people} at acme.example");
        assert!(acme.contains("id=\"f-account\" name=\"account\" type=\"text\" value=\"acme.example\""));

        // 110 visitors: three pages of 50, numbered.
        let first = expect_page(&client.get("/leads?range=all").await, 200);
        assert!(first.contains("110 visitors, showing 1–50"), "the total and the rows shown");
        assert!(first.contains("<span aria-current=\"page\">1</span>"));
        assert!(first.contains("href=\"/leads?range=all&#38;page=3\" aria-label=\"Page 3\""));
        let third = expect_page(&client.get("/leads?range=all&page=3").await, 200);
        assert!(third.contains("showing 101–110"));
        assert_eq!(third.matches("<tr>").count() - 1, 10, "ten rows and the header");

        // A refused filter: 400, beside its input, the list without it.
        let refused = client.get("/leads?range=all&visited=pricing").await;
        let refused = expect_page(&refused, 400);
        assert!(refused.contains("id=\"f-visited-error\">Visited page: must be a path starting with /"));
        assert!(refused.contains("110 visitors"), "the list without the refused filter");
        let refused = expect_page(&client.get("/leads?minScore=lots").await, 400);
        assert!(refused.contains("id=\"f-minScore-error\">Score at least: must be a whole number"));

        // Signed out: the sign-in page; another org's site: not found.
        let anonymous = app.client().get("/leads").await;
        assert_eq!(anonymous.status.as_u16(), 303);
        let (stranger, _) = app.user_with_site("Stranger", "stranger.example").await;
        assert_eq!(stranger.get(&format!("/leads?site={site}")).await.status.as_u16(), 404);
    }
}

/// The search follows the people as they change: a new identity's name and
/// company are found at once, an older identity's words stay findable, the
/// visitor id always is, short searches (under three characters, below what
/// the SQLite trigram index holds) still find, markup in a search is plain
/// text, and an erased visitor is found by nothing.
#[tokio::test]
async fn the_search_follows_identities_and_erasure() {
    for app in apps_with(generous).await {
        let (client, site) = app.user_with_site("Sol", "search.example").await;
        app.collect(pageview(site, "keep-up-visitor", "https://search.example/")).await.expect(202);
        app.collect(pageview(site, "bystander", "https://search.example/")).await.expect(202);
        let found = |q: &str| {
            let (client, q) = (client.clone(), urlencode(q));
            async move {
                let answer =
                    client.get(&format!("/api/visitor?siteId={site}&timeRange=all&q={q}")).await.expect(200).clone();
                let mut vids = vids(&answer);
                vids.sort();
                vids
            }
        };
        let ours = vec!["keep-up-visitor".to_owned()];
        assert_eq!(found("keep-up").await, ours);
        assert_eq!(found("Quinta").await, Vec::<String>::new());
        let identify = |traits: Value| {
            let client = client.clone();
            async move {
                let mut body = json!({ "siteId": site, "tracker_vid": "keep-up-visitor" });
                body.as_object_mut().unwrap().extend(traits.as_object().unwrap().clone());
                client.post("/api/identify", body).await.expect(200);
            }
        };
        identify(json!({ "email": "q.varga@zenithal.example", "name": "Quinta Varga" })).await;
        identify(json!({ "user_id": "crm-4417", "company": "Brightwave <b>Labs</b>" })).await;
        for q in [
            "quinta varga",
            "VARGA",
            "zenithal",
            "q.varga@",
            "brightwave",
            "<b>labs",
            "crm-44",
            "keep-up-visitor",
            "qu",
        ] {
            assert_eq!(found(q).await, ours, "q={q}");
        }
        assert_eq!(found("varga brightwave").await, Vec::<String>::new(), "no match spans two fields");
        client.delete(&format!("/api/visitor/keep-up-visitor?siteId={site}")).await.expect(200);
        for q in ["quinta", "zenithal", "keep-up", "qu"] {
            assert_eq!(found(q).await, Vec::<String>::new(), "q={q} after the erasure");
        }
        assert_eq!(found("bystander").await, vec!["bystander".to_owned()]);
    }
}
