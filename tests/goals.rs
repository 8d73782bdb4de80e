//! Goals (design §20): admins manage them through GraphQL and
//! `/settings/goals`, with each refusal naming its field; members and
//! viewers read them; another org's goal is not found. Explore's
//! `event:goal` dimension and filter and its `conversion_rate` equal a
//! naive recount over the raw events of seeded traffic sent through collect,
//! on SQLite and PostgreSQL.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, HashSet};

use common::{
    Client, TestApp, apps,
    explore_recount::answered,
    gql_error_code,
    traffic::DESKTOP_UA,
    web::{expect_page, join, location, org_of, post_form},
};
use entity::{event, tracked_session};
use leadtrail::time::{DAY_MS, MINUTE_MS, now_ms};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

const CREATE: &str = "mutation($s: Int!, $i: GoalInput!) { createGoal(siteId: $s, input: $i) { id name pagePath eventName propName propValue } }";
const UPDATE: &str = "mutation($id: ID!, $i: GoalInput!) { updateGoal(id: $id, input: $i) { id name pagePath } }";
const DELETE: &str = "mutation($id: ID!) { deleteGoal(id: $id) }";
const LIST: &str = "query($s: Int!) { goals(siteId: $s) { id name } }";

async fn create(client: &Client, site: i64, input: Value) -> Value {
    client.graphql(CREATE, json!({ "s": site, "i": input })).await
}

fn field(answer: &Value) -> &str {
    answer["errors"][0]["extensions"]["field"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn admins_manage_goals_others_read_them_and_refusals_name_the_field() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Gina", "goals.example").await;
        let org = org_of(&owner, site).await;
        let member = join(&app, &owner, &org, "Mo", "member").await;
        let (stranger, stranger_site) = app.user_with_site("Sly", "other.example").await;

        let made = create(&owner, site, json!({ "pagePath": "/pricing" })).await;
        let goal = &made["data"]["createGoal"];
        assert_eq!(goal["name"], "Visit /pricing", "{made}");
        let id = goal["id"].as_str().unwrap().to_owned();
        let signup = create(
            &owner,
            site,
            json!({ "name": "Pro signup", "eventName": "signup", "propName": "plan", "propValue": "pro" }),
        )
        .await;
        assert_eq!(signup["data"]["createGoal"]["propValue"], "pro", "{signup}");

        // Refusals name the input they concern.
        for (input, named) in [
            (json!({ "pagePath": "pricing" }), "input.pagePath"),
            (json!({}), "input.pagePath"),
            (json!({ "pagePath": "/a", "eventName": "x" }), "input.eventName"),
            (json!({ "eventName": "x", "propName": "plan" }), "input.propValue"),
            (json!({ "name": "visit /PRICING", "pagePath": "/p" }), "input.name"),
            (json!({ "name": "x".repeat(121), "pagePath": "/p" }), "input.name"),
        ] {
            let refused = create(&owner, site, input.clone()).await;
            assert_eq!(gql_error_code(&refused), "VALIDATION_ERROR", "{input}: {refused}");
            assert_eq!(field(&refused), named, "{input}: {refused}");
        }

        // Members read; only admins change.
        let listed = member.graphql(LIST, json!({ "s": site })).await;
        assert_eq!(listed["data"]["goals"].as_array().unwrap().len(), 2, "{listed}");
        assert_eq!(gql_error_code(&create(&member, site, json!({ "pagePath": "/m" })).await), "FORBIDDEN");
        let renamed = member.graphql(UPDATE, json!({ "id": id, "i": { "name": "Mine", "pagePath": "/m" } })).await;
        assert_eq!(gql_error_code(&renamed), "FORBIDDEN");

        // Another org's goal is not found, whatever is tried.
        assert_eq!(gql_error_code(&stranger.graphql(LIST, json!({ "s": site })).await), "NOT_FOUND");
        assert_eq!(gql_error_code(&create(&stranger, site, json!({ "pagePath": "/x" })).await), "NOT_FOUND");
        let theirs = stranger.graphql(UPDATE, json!({ "id": id, "i": { "pagePath": "/x" } })).await;
        assert_eq!(gql_error_code(&theirs), "NOT_FOUND");
        assert_eq!(gql_error_code(&stranger.graphql(DELETE, json!({ "id": id })).await), "NOT_FOUND");
        assert_eq!(gql_error_code(&owner.graphql(DELETE, json!({ "id": "nope" })).await), "NOT_FOUND");
        let own = stranger.graphql(LIST, json!({ "s": stranger_site })).await;
        assert_eq!(own["data"]["goals"], json!([]));

        // The owner edits and deletes.
        let edited =
            owner.graphql(UPDATE, json!({ "id": id, "i": { "name": "Pricing", "pagePath": "/pricing*" } })).await;
        assert_eq!(edited["data"]["updateGoal"]["pagePath"], "/pricing*", "{edited}");
        assert_eq!(owner.graphql(DELETE, json!({ "id": id })).await["data"]["deleteGoal"], true);
        let left = owner.graphql(LIST, json!({ "s": site })).await;
        assert_eq!(left["data"]["goals"], json!([{ "id": signup["data"]["createGoal"]["id"], "name": "Pro signup" }]));

        // Without a session: nothing.
        let anonymous = app.client().graphql(LIST, json!({ "s": site })).await;
        assert_eq!(gql_error_code(&anonymous), "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn the_goals_page_adds_edits_and_deletes_through_forms() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Pia", "page.example").await;
        let org = org_of(&owner, site).await;
        let viewer = join(&app, &owner, &org, "Vi", "viewer").await;
        let (stranger, _) = app.user_with_site("Sy", "elsewhere.example").await;

        let empty = expect_page(&owner.get("/settings/goals").await, 200);
        assert!(empty.contains("No goals yet."), "{empty}");
        let add = [("action", "create"), ("name", "<b>Demo</b>"), ("page_path", "/demo*")];
        assert_eq!(
            location(&post_form(&owner, "/settings/goals", &add, &[]).await),
            "/settings/goals?done=goal-created"
        );
        let page = expect_page(&owner.get("/settings/goals").await, 200);
        assert!(page.contains("&#60;b&#62;Demo&#60;/b&#62;"), "escaped: {page}");
        assert!(!page.contains("<b>Demo</b>"));
        assert!(page.contains("A pageview of /demo*"), "{page}");
        assert!(page.contains("event%3Agoal"), "links to Explore filtered by the goal: {page}");

        // A refusal comes back beside its input, with what was typed.
        let bad = [("action", "create"), ("name", ""), ("page_path", "demo")];
        let html = expect_page(&post_form(&owner, "/settings/goals", &bad, &[]).await, 400);
        assert!(html.contains(r#"id="new-goal-page_path-error">Page path: must be a path starting with /"#), "{html}");
        assert!(html.contains(r#"value="demo""#), "{html}");

        let id = owner.graphql(LIST, json!({ "s": site })).await["data"]["goals"][0]["id"].as_str().unwrap().to_owned();
        let save = [("action", "save"), ("goal", id.as_str()), ("name", "Signup"), ("event_name", "signup")];
        assert_eq!(
            location(&post_form(&owner, "/settings/goals", &save, &[]).await),
            "/settings/goals?done=goal-saved"
        );
        assert!(expect_page(&owner.get("/settings/goals").await, 200).contains("The event signup"));

        // A viewer sees the goals without forms, and cannot send one.
        let seen = expect_page(&viewer.get("/settings/goals").await, 200);
        assert!(seen.contains("Signup") && !seen.contains(r#"value="create""#), "{seen}");
        let refused = post_form(&viewer, "/settings/goals", &[("action", "delete"), ("goal", id.as_str())], &[]).await;
        assert_eq!(refused.status.as_u16(), 403, "{}", refused.text);
        // Another tenant cannot reach it through its own page.
        let theirs = post_form(&stranger, "/settings/goals", &[("action", "delete"), ("goal", id.as_str())], &[]).await;
        assert_eq!(theirs.status.as_u16(), 404, "{}", theirs.text);

        let delete = [("action", "delete"), ("goal", id.as_str())];
        assert_eq!(
            location(&post_form(&owner, "/settings/goals", &delete, &[]).await),
            "/settings/goals?done=goal-deleted"
        );
        assert!(expect_page(&owner.get("/settings/goals").await, 200).contains("No goals yet."));

        // Signed out: to the sign-in page.
        let out = app.client().get("/settings/goals").await;
        assert_eq!(out.status.as_u16(), 303, "{}", out.text);
    }
}

const PAGES: [&str; 5] = ["/", "/pricing", "/pricing/enterprise", "/blog/a", "/blog/b"];

async fn feed(app: &TestApp, site: i64, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let now = now_ms();
    for n in 0..50 {
        let vid = format!("g{seed}-{n}");
        for _ in 0..rng.random_range(1..=3) {
            let mut ts = now - rng.random_range(1..20) * DAY_MS - rng.random_range(0..DAY_MS);
            let query = ["", "?utm_source=newsletter", "?utm_source=google"][rng.random_range(0..3)];
            let mut events = Vec::new();
            for step in 0..rng.random_range(1..=5) {
                let page = PAGES[rng.random_range(0..PAGES.len())];
                let url = format!("https://goals.example{page}{}", if step == 0 { query } else { "" });
                let event = if step > 0 && rng.random_bool(0.3) {
                    let plan = ["free", "pro"][rng.random_range(0..2)];
                    json!({ "site": site, "type": "custom_event", "event_name": "signup", "props": { "plan": plan },
                            "tracker_vid": vid, "url": url, "ts": ts })
                } else {
                    json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url, "ts": ts })
                };
                events.push(event);
                ts += rng.random_range(1..=9) * MINUTE_MS;
            }
            let reply = app.collect_with(json!({ "events": events }), DESKTOP_UA, &[]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
        }
    }
    app.state.writer.flush().await;
}

/// The goals of the recount, as this file reads them.
fn reaches(goal: &str, e: &event::Model) -> bool {
    let plan = || serde_json::from_str::<Value>(&e.props).unwrap()["plan"].as_str().map(str::to_owned);
    match goal {
        "Pricing" => e.event_type == "pageview" && e.page.starts_with("/pricing"),
        "Blog post" => e.event_type == "pageview" && e.page.starts_with("/blog/"),
        "Signup" => e.event_type == "custom_event" && e.event_name == "signup",
        "Pro signup" => e.event_type == "custom_event" && e.event_name == "signup" && plan().as_deref() == Some("pro"),
        other => panic!("no goal {other}"),
    }
}
const GOALS: [&str; 4] = ["Blog post", "Pricing", "Pro signup", "Signup"];

fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

/// Per source (or one group): visitors, events and conversion rate of the
/// events reaching any of `goals`, over the visitors of the group.
fn recount(
    events: &[event::Model],
    sources: &BTreeMap<i64, String>,
    goals: &[&str],
    by_source: bool,
) -> BTreeMap<Vec<String>, Vec<Value>> {
    let key = |e: &event::Model| if by_source { vec![sources[&e.session_id].clone()] } else { Vec::new() };
    let mut all: BTreeMap<Vec<String>, HashSet<i64>> = BTreeMap::new();
    let mut converted: BTreeMap<Vec<String>, (HashSet<i64>, i64)> = BTreeMap::new();
    for e in events {
        all.entry(key(e)).or_default().insert(e.visitor_id);
        if goals.iter().any(|goal| reaches(goal, e)) {
            let entry = converted.entry(key(e)).or_default();
            entry.0.insert(e.visitor_id);
            entry.1 += 1;
        }
    }
    converted
        .into_iter()
        .map(|(key, (visitors, count))| {
            let rate = round(visitors.len() as f64 / all[&key].len() as f64 * 100.0, 2);
            (key, vec![json!(visitors.len()), json!(count), json!(rate)])
        })
        .collect()
}

#[tokio::test]
async fn goal_figures_equal_a_recount_over_the_raw_events() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Gus", "goals.example").await;
        feed(&app, site, 37).await;
        for input in [
            json!({ "name": "Pricing", "pagePath": "/pricing*" }),
            json!({ "name": "Blog post", "pagePath": "/blog/*" }),
            json!({ "name": "Signup", "eventName": "signup" }),
            json!({ "name": "Pro signup", "eventName": "signup", "propName": "plan", "propValue": "pro" }),
        ] {
            let made = create(&client, site, input).await;
            assert!(made["errors"].is_null(), "{made}");
        }
        let db = &app.state.db;
        let events: Vec<event::Model> = event::Entity::find()
            .filter(event::Column::SiteId.eq(site))
            .filter(event::Column::IsBot.eq(false))
            .all(db)
            .await
            .unwrap();
        assert!(events.iter().any(|e| reaches("Pro signup", e)), "the seed reaches every goal");
        let sessions =
            tracked_session::Entity::find().filter(tracked_session::Column::SiteId.eq(site)).all(db).await.unwrap();
        let sources: BTreeMap<i64, String> = sessions
            .into_iter()
            .map(|s| (s.id, s.utm_source.filter(|u| !u.is_empty()).unwrap_or_else(|| "Direct / None".to_owned())))
            .collect();
        let metrics = json!(["visitors", "events", "conversion_rate"]);
        let ask = |dimensions: Value, filters: Value| json!({ "site_id": site, "metrics": metrics, "date_range": "30d", "dimensions": dimensions, "filters": filters });

        // By goal: each goal on its own (an event reaching two goals counts in both).
        let reply = client.post("/api/v2/query", ask(json!(["event:goal"]), json!([]))).await;
        let got = answered(reply.expect(200));
        for goal in GOALS {
            let expected = recount(&events, &sources, &[goal], false);
            assert_eq!(got[&vec![goal.to_owned()]], expected[&Vec::new()], "{goal}");
        }
        assert_eq!(got.len(), GOALS.len());

        // Filtered by goals, by source and overall: the rate is over the group's visitors.
        for (filters, goals) in [
            (json!([["is", "event:goal", ["Signup"]]]), vec!["Signup"]),
            (json!([["is", "event:goal", ["Pricing", "Pro signup"]]]), vec!["Pricing", "Pro signup"]),
            (json!([["contains", "event:goal", ["SIGN"], { "case_sensitive": false }]]), vec!["Pro signup", "Signup"]),
        ] {
            for by_source in [true, false] {
                let dimensions = if by_source { json!(["visit:utm_source"]) } else { json!([]) };
                let reply = client.post("/api/v2/query", ask(dimensions, filters.clone())).await;
                let got = answered(reply.expect(200));
                let mut expected = recount(&events, &sources, &goals, by_source);
                if by_source {
                    expected = expected
                        .into_iter()
                        .map(|(key, values)| (vec![key[0].replace("Direct / None", "(not set)")], values))
                        .collect();
                }
                assert_eq!(got, expected, "{filters} by source: {by_source}");
            }
        }

        // The same through GraphQL.
        let graphql = client
            .graphql(
                "query($s: Int!, $q: ExploreInput!) { explore(siteId: $s, query: $q) { results { dimensions metrics } } }",
                json!({ "s": site, "q": { "metrics": ["visitors", "conversion_rate"], "dateRange": "30d", "dimensions": ["event:goal"] } }),
            )
            .await;
        assert_eq!(graphql["data"]["explore"]["results"].as_array().map(Vec::len), Some(GOALS.len()), "{graphql}");

        // A goal the site does not have is refused beside `filters`.
        let unknown = client.post("/api/v2/query", ask(json!([]), json!([["is", "event:goal", ["Nope"]]]))).await;
        assert_eq!(unknown.status.as_u16(), 400, "{}", unknown.text);
        assert!(unknown.text.contains("The goal `Nope` is not configured"), "{}", unknown.text);

        // The explorer page shows the goals panel with its conversion rates.
        let page = expect_page(&client.get("/").await, 200);
        assert!(page.contains(">Goals<") && page.contains("Pro signup"), "the goals panel");
    }
}
