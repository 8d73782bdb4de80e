//! Accounts (design §18) over HTTP: traffic through collect from company
//! networks (an ASN CSV built here) and identifies with work emails; the
//! list and each account compared with a recount over the raw visitor rows,
//! through linking a network, renaming, excluding, erasure and retention;
//! other orgs and members refused.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use common::{
    Client, TestApp, apps_with, gql_error_code,
    traffic::{DESKTOP_UA, at, pageview},
};
use entity::visitor;
use leadtrail::{
    service::privacy,
    time::{DAY_MS, HOUR_MS, now_ms},
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

/// Three company networks, an ISP and a cloud.
const NETWORKS: &str = "198.51.100.0,198.51.100.255,64500,Acme Networks\n\
                        198.51.101.0,198.51.101.255,64501,\"Beta <b>GmbH</b>\"\n\
                        198.51.102.0,198.51.102.255,64502,Gamma Corp\n\
                        203.0.113.0,203.0.113.255,7922,Comcast Cable\n\
                        192.0.2.0,192.0.2.255,16509,Amazon\n";

fn address(n: i64) -> &'static str {
    match n % 5 {
        0 => "198.51.100.10",
        1 => "198.51.101.10",
        2 => "198.51.102.10",
        3 => "203.0.113.10",
        _ => "192.0.2.10",
    }
}

/// Thirty visitors over two weeks, from the five networks; some identify
/// with work emails, one with gmail.
async fn feed(app: &TestApp, client: &Client, site: i64) {
    let now = now_ms();
    for n in 0..30_i64 {
        let vid = format!("acc-{n:02}");
        let seen = now - (n % 14) * DAY_MS - (n % 7) * HOUR_MS;
        let pages = ["/", "/pricing", "/docs", "/contact"];
        let mut events: Vec<Value> = (0..1 + n % 4)
            .map(|i| {
                at(pageview(site, &vid, &format!("https://acc.example{}", pages[i as usize % 4])), seen + i * 30_000)
            })
            .collect();
        if n % 6 == 0 {
            let mut form = at(pageview(site, &vid, "https://acc.example/contact"), seen + 200_000);
            form["type"] = json!("custom_event");
            form["event_name"] = json!("form_submit");
            events.push(form);
        }
        let headers = [("x-forwarded-for", address(n))];
        app.collect_with(json!({ "events": events }), DESKTOP_UA, &headers).await.expect(202);
        let who = match n % 10 {
            0 => Some(json!({ "email": format!("p{n}@acme.com"), "company": "Acme Inc" })),
            6 => Some(json!({ "email": format!("p{n}@beta.example") })),
            8 => Some(json!({ "email": format!("p{n}@gmail.com") })),
            _ => None,
        };
        if let Some(Value::Object(mut who)) = who {
            who.insert("siteId".to_owned(), json!(site));
            who.insert("tracker_vid".to_owned(), json!(vid));
            client.identify(Value::Object(who)).await.expect(200);
        }
    }
    app.state.writer.flush().await;
}

/// An account as the recount over raw visitor rows sees it.
#[derive(Debug, Default, PartialEq, Eq, Clone)]
struct Recount {
    visitors: i64,
    people: i64,
    sessions: i64,
    pageviews: i64,
    high_value_views: i64,
    form_submits: i64,
    last_seen: i64,
}

/// Accounts by key from the visitors table; `links` sends a network's
/// visitors to a domain, as the service folds them.
async fn recount(app: &TestApp, site: i64, links: &[(&str, &str)], since: i64) -> BTreeMap<String, Recount> {
    let rows = visitor::Entity::find().filter(visitor::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
    let mut accounts: BTreeMap<String, Recount> = BTreeMap::new();
    for v in rows.iter().filter(|v| !v.is_bot) {
        let Some(key) = v.account_key.clone() else { continue };
        let key = links.iter().find(|(network, _)| *network == key).map_or(key, |(_, domain)| (*domain).to_owned());
        let account = accounts.entry(key).or_default();
        account.visitors += 1;
        account.people += i64::from(v.status == "identified");
        account.sessions += i64::from(v.total_sessions);
        account.pageviews += i64::from(v.total_pageviews);
        account.high_value_views += i64::from(v.high_value_views);
        account.form_submits += i64::from(v.form_submits);
        account.last_seen = account.last_seen.max(v.last_seen);
    }
    accounts.retain(|_, account| account.last_seen >= since);
    accounts
}

fn answered(list: &Value) -> BTreeMap<String, Recount> {
    list["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let last_seen = chrono::DateTime::parse_from_rfc3339(a["last_seen"].as_str().unwrap()).unwrap();
            (
                a["key"].as_str().unwrap().to_owned(),
                Recount {
                    visitors: a["visitors"].as_i64().unwrap(),
                    people: a["people"].as_i64().unwrap(),
                    sessions: a["sessions"].as_i64().unwrap(),
                    pageviews: a["pageviews"].as_i64().unwrap(),
                    high_value_views: a["high_value_views"].as_i64().unwrap(),
                    form_submits: a["form_submits"].as_i64().unwrap(),
                    last_seen: last_seen.timestamp_millis(),
                },
            )
        })
        .collect()
}

fn generous(dir: &std::path::Path) -> impl Fn(&mut leadtrail::config::Config) {
    let path = dir.join("asn.csv");
    std::fs::write(&path, NETWORKS).unwrap();
    let setting = path.display().to_string();
    move |config| {
        config.asn_db_path = Some(setting.clone());
        config.trust_proxy = leadtrail::config::TrustProxy::Xff;
    }
}

#[tokio::test]
async fn accounts_match_a_recount_through_links_renames_erasure_and_retention() {
    let dir = tempfile::tempdir().unwrap();
    for app in apps_with(generous(dir.path())).await {
        let (client, site) = app.user_with_site("Acc", "acc.example").await;
        feed(&app, &client, site).await;
        let list = |query: &str| {
            let (client, path) = (client.clone(), format!("/api/accounts?siteId={site}&{query}"));
            async move { client.get(&path).await.expect(200).clone() }
        };

        // Every range, against the recount.
        for (range, days) in [("24h", 1), ("7d", 7), ("30d", 30), ("all", 10_000)] {
            let answer = list(&format!("timeRange={range}&limit=200")).await;
            let expected = recount(&app, site, &[], now_ms() - days * DAY_MS).await;
            assert_eq!(answered(&answer), expected, "{range}");
            assert_eq!(answer["total"], expected.len(), "{range}");
        }
        let all = recount(&app, site, &[], 0).await;
        let keys: Vec<&str> = all.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["acme.com", "asn:64500", "asn:64501", "asn:64502", "beta.example"],
            "ISP, cloud and gmail make none"
        );

        // Ranked by score, each with reasons that add up to it.
        let ranked = list("timeRange=all").await;
        let scores: Vec<i64> =
            ranked["accounts"].as_array().unwrap().iter().map(|a| a["score"].as_i64().unwrap()).collect();
        assert!(scores.windows(2).all(|pair| pair[0] >= pair[1]), "{scores:?}");
        let acme = client.get(&format!("/api/accounts/acme.com?siteId={site}")).await.expect(200).clone();
        let reasons: i64 =
            acme["score_breakdown"].as_array().unwrap().iter().map(|r| r["points"].as_i64().unwrap()).sum();
        assert_eq!(acme["score"].as_i64().unwrap(), reasons);
        assert_eq!(acme["name"], "Acme Inc");
        let members: Vec<&str> = acme["members"]["visitors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["tracker_vid"].as_str().unwrap())
            .collect();
        assert_eq!(members.len() as i64, all["acme.com"].visitors, "{members:?}");

        // Sort, search and bad values.
        let by_people = list("timeRange=all&sort=people").await;
        let people: Vec<i64> =
            by_people["accounts"].as_array().unwrap().iter().map(|a| a["people"].as_i64().unwrap()).collect();
        assert!(people.windows(2).all(|pair| pair[0] >= pair[1]), "{people:?}");
        // "beta" finds beta.example by its key and the network by its holder's name.
        let found = list("timeRange=all&q=BETA").await;
        let mut found: Vec<&str> =
            found["accounts"].as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap()).collect();
        found.sort_unstable();
        assert_eq!(found, ["asn:64501", "beta.example"]);
        for (query, field) in
            [("sort=name", "sort"), ("timeRange=1y", "timeRange"), ("page=0", "page"), ("hot=maybe", "hot")]
        {
            let reply = client.get(&format!("/api/accounts?siteId={site}&{query}")).await;
            reply.expect_error(400, "VALIDATION_ERROR");
            assert_eq!(reply.body["field"], field, "{query}: {}", reply.text);
        }
        client.get(&format!("/api/accounts/nobody.example?siteId={site}")).await.expect_error(404, "NOT_FOUND");

        // An admin links the Acme network to acme.com: one account, the
        // network's visitors in it, in the list, the account and the leads.
        let linked = client
            .graphql(
                "mutation($s: Int!) { updateAccount(siteId: $s, key: \"asn:64500\", input: { linkTo: \"https://www.Acme.com/\" }) { key networks visitors } }",
                json!({ "s": site }),
            )
            .await;
        let links = [("asn:64500", "acme.com")];
        let expected = recount(&app, site, &links, 0).await;
        assert_eq!(linked["data"]["updateAccount"]["key"], "acme.com", "{linked}");
        assert_eq!(linked["data"]["updateAccount"]["networks"], json!(["asn:64500"]));
        assert_eq!(linked["data"]["updateAccount"]["visitors"], expected["acme.com"].visitors);
        assert_eq!(answered(&list("timeRange=all").await), expected);
        let through_network = client.get(&format!("/api/accounts/asn:64500?siteId={site}")).await.expect(200).clone();
        assert_eq!(through_network["key"], "acme.com");
        let leads = client.get(&format!("/api/visitor?siteId={site}&timeRange=all&account=acme.com")).await;
        assert_eq!(leads.expect(200)["total"], expected["acme.com"].visitors);
        let bad = client
            .graphql(
                "mutation($s: Int!) { updateAccount(siteId: $s, key: \"beta.example\", input: { linkTo: \"acme.com\" }) { key } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(gql_error_code(&bad), "VALIDATION_ERROR", "{bad}");

        // Rename (markup kept as text) and exclude.
        let renamed = client
            .graphql(
                "mutation($s: Int!) { updateAccount(siteId: $s, key: \"beta.example\", input: { name: \"<i>Beta</i>\", excluded: true }) { name excluded renamed } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(
            renamed["data"]["updateAccount"],
            json!({ "name": "<i>Beta</i>", "excluded": true, "renamed": true })
        );
        let shown: Vec<String> = list("timeRange=all").await["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["key"].as_str().unwrap().to_owned())
            .collect();
        assert!(!shown.contains(&"beta.example".to_owned()), "excluded: {shown:?}");
        assert_eq!(list("timeRange=all&excluded=true").await["total"], 1);

        // Erasure takes a visitor out of its account's figures.
        let erased = "acc-00";
        client.delete(&format!("/api/visitor/{erased}?siteId={site}")).await.expect(200);
        let expected = recount(&app, site, &links, 0).await;
        let mut answer = answered(&list("timeRange=all").await);
        answer.extend(answered(&list("timeRange=all&excluded=true").await));
        assert_eq!(answer, expected, "after erasure");

        // So does retention.
        client.put(&format!("/api/sites/{site}"), json!({ "retentionDays": 7 })).await.expect(200);
        privacy::retention::purge(&app.state.db, now_ms()).await.unwrap();
        let expected = recount(&app, site, &links, 0).await;
        let mut answer = answered(&list("timeRange=all").await);
        answer.extend(answered(&list("timeRange=all&excluded=true").await));
        assert_eq!(answer, expected, "after retention");
        assert!(expected.values().all(|a| a.last_seen >= now_ms() - 8 * DAY_MS));

        // Members read but cannot change; another org sees nothing.
        let (mia, email) = app.user("mia").await;
        let orgs = client.graphql("{ orgs { id } }", json!({})).await;
        let org = orgs["data"]["orgs"][0]["id"].as_str().unwrap().to_owned();
        common::invite_and_accept(&client, &mia, &org, &email, "member").await;
        mia.get(&format!("/api/accounts?siteId={site}")).await.expect(200);
        let refused = mia
            .graphql(
                "mutation($s: Int!) { updateAccount(siteId: $s, key: \"acme.com\", input: { excluded: true }) { key } }",
                json!({ "s": site }),
            )
            .await;
        assert_eq!(gql_error_code(&refused), "FORBIDDEN", "{refused}");
        let (stranger, _) = app.user_with_site("Stranger", "stranger.example").await;
        stranger.get(&format!("/api/accounts?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        stranger.get(&format!("/api/accounts/acme.com?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        app.client().get(&format!("/api/accounts?siteId={site}")).await.expect_error(401, "UNAUTHORIZED");
    }
}

/// `/accounts` and `/accounts/<key>`: the list from the address, an account
/// with its reasons and people, the admin forms, markup escaped, refusals
/// beside their input, and nothing for other orgs.
#[tokio::test]
async fn the_accounts_pages_list_show_and_change() {
    use common::web::{expect_page, location, post_form};
    let dir = tempfile::tempdir().unwrap();
    for app in apps_with(generous(dir.path())).await {
        let (client, site) = app.user_with_site("Pages", "acc.example").await;
        feed(&app, &client, site).await;
        let all = recount(&app, site, &[], 0).await;

        let list = expect_page(&client.get("/accounts?range=all").await, 200);
        assert!(list.contains(&format!("{} accounts", all.len())), "the total");
        assert!(list.contains("href=\"/accounts/acme.com\">Acme Inc</a>"), "named and linked");
        assert!(list.contains("Beta &#60;b&#62;GmbH&#60;/b&#62;"), "a network's holder, escaped");
        assert!(!list.contains("<b>GmbH"), "no markup from data");
        let searched = expect_page(&client.get("/accounts?range=all&q=gamma").await, 200);
        assert!(searched.contains("1 account") && searched.contains("Gamma Corp"));
        let refused = expect_page(&client.get("/accounts?range=all&sort=name").await, 400);
        assert!(refused.contains("id=\"f-sort-error\""), "the refusal beside the sort");

        let page = expect_page(&client.get("/accounts/acme.com").await, 200);
        assert!(page.contains("<h1>Acme Inc</h1>"));
        assert!(page.contains(&format!("{} visitors, by score.", all["acme.com"].visitors)));
        assert!(page.contains("identified people") || page.contains("identified person"), "the reasons");
        assert!(page.contains("href=\"/leads?range=all&#38;account=acme.com\""), "the account's leads");

        // The admin forms: rename (markup kept as text), link a network.
        let renamed =
            post_form(&client, "/accounts/acme.com", &[("action", "rename-account"), ("name", "<em>ACME</em>")], &[])
                .await;
        assert_eq!(location(&renamed), "/accounts/acme.com?done=account-saved");
        let page = expect_page(&client.get("/accounts/acme.com?done=account-saved").await, 200);
        assert!(page.contains("&#60;em&#62;ACME&#60;/em&#62;") && !page.contains("<em>ACME"));
        assert!(page.contains("The account was saved."));
        let linked =
            post_form(&client, "/accounts/acme.com", &[("action", "link-network"), ("network", "AS64500")], &[]).await;
        assert_eq!(location(&linked), "/accounts/acme.com?done=network-linked");
        let page = expect_page(&client.get("/accounts/acme.com").await, 200);
        let merged = recount(&app, site, &[("asn:64500", "acme.com")], 0).await;
        assert!(
            page.contains(&format!("{} visitors, by score.", merged["acme.com"].visitors)),
            "the network's visitors count"
        );
        let bad =
            post_form(&client, "/accounts/acme.com", &[("action", "link-network"), ("network", "nonsense")], &[]).await;
        assert_eq!(bad.status.as_u16(), 404, "no such network: {}", bad.text);

        // Unknown key, signed out, another org.
        expect_page(&client.get("/accounts/nobody.example").await, 404);
        assert_eq!(app.client().get("/accounts").await.status.as_u16(), 303);
        let (stranger, _) = app.user_with_site("Stranger", "stranger.example").await;
        expect_page(&stranger.get(&format!("/accounts/acme.com?site={site}")).await, 404);
        expect_page(&stranger.get(&format!("/accounts?site={site}")).await, 404);
        let forged = post_form(
            &stranger,
            &format!("/accounts/acme.com?site={site}"),
            &[("action", "exclude-account"), ("excluded", "1")],
            &[],
        )
        .await;
        expect_page(&forged, 404);
    }
}

/// A visitor's account key and name and its network number, as stored.
type StoredNetwork<'a> = (Option<&'a str>, Option<&'a str>, Option<i64>);

/// A visitor created by a batch is inserted with its network when every
/// event of the batch comes from that one network, and takes it from its
/// events otherwise: either way its row, the desk's search by account name
/// and the account figures agree with the network its events came from.
#[tokio::test]
async fn a_new_visitors_network_names_it_whatever_its_first_request_held() {
    let dir = tempfile::tempdir().unwrap();
    for app in apps_with(generous(dir.path())).await {
        let (client, site) = app.user_with_site("New", "new.example").await;
        let now = now_ms();
        let view = |vid: &str, ms: i64| at(pageview(site, vid, "https://new.example/pricing"), ms);
        let send = |events: Vec<Value>, from: &'static str| {
            let app = &app;
            async move {
                let headers = [("x-forwarded-for", from)];
                app.collect_with(json!({ "events": events }), DESKTOP_UA, &headers).await.expect(202);
            }
        };
        // One network for every event: the row is inserted with it.
        send(vec![view("one-net", now - 60_000), view("one-net", now - 30_000)], "198.51.100.10").await;
        // A ping first (a ping may be dropped): the events give the network.
        let mut ping = view("with-ping", now - 50_000);
        ping["type"] = json!("ping");
        send(vec![ping, view("with-ping", now - 40_000)], "198.51.101.10").await;
        // An ISP names no account.
        send(vec![view("from-isp", now - 20_000)], "203.0.113.10").await;
        // Identified before any event: a work email's domain beats the network.
        client
            .identify(json!({ "siteId": site, "tracker_vid": "named-first", "email": "kim@gamma.example" }))
            .await
            .expect(200);
        send(vec![view("named-first", now_ms())], "198.51.102.10").await;
        app.state.writer.flush().await;

        let rows = visitor::Entity::find().filter(visitor::Column::SiteId.eq(site)).all(&app.state.db).await.unwrap();
        let stored: BTreeMap<&str, StoredNetwork> = rows
            .iter()
            .map(|v| (v.tracker_vid.as_str(), (v.account_key.as_deref(), v.account_name.as_deref(), v.asn)))
            .collect();
        assert_eq!(
            stored,
            BTreeMap::from([
                ("from-isp", (None, None, Some(7922))),
                ("named-first", (Some("gamma.example"), Some("gamma.example"), Some(64502))),
                ("one-net", (Some("asn:64500"), Some("Acme Networks"), Some(64500))),
                ("with-ping", (Some("asn:64501"), Some("Beta <b>GmbH</b>"), Some(64501))),
            ])
        );

        let found = |q: &'static str| {
            let (client, path) = (client.clone(), format!("/api/visitor?siteId={site}&timeRange=all&q={q}"));
            async move {
                let answer = client.get(&path).await.expect(200).clone();
                let mut vids: Vec<String> = answer["visitors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v["tracker_vid"].as_str().unwrap().to_owned())
                    .collect();
                vids.sort();
                vids
            }
        };
        assert_eq!(found("acme").await, ["one-net"]);
        assert_eq!(found("gmbh").await, ["with-ping"]);
        assert_eq!(found("gamma").await, ["named-first"]);
        assert!(found("comcast").await.is_empty(), "an ISP is no account");

        let answer = client.get(&format!("/api/accounts?siteId={site}&timeRange=all")).await.expect(200).clone();
        let expected = recount(&app, site, &[], 0).await;
        assert_eq!(answered(&answer), expected);
        assert_eq!(
            expected.keys().map(String::as_str).collect::<Vec<_>>(),
            ["asn:64500", "asn:64501", "gamma.example"]
        );
    }
}
