//! Funnels (design §20): saved per site (members; another org's is not
//! found), reported through GraphQL, `POST /api/v2/funnel` and `/funnels`.
//! Seeded traffic through collect (steps out of order, repeated, across
//! visits and days) is recounted here by brute force, trying every way
//! through, for both modes and a breakdown, on SQLite and PostgreSQL.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{
    Client, TestApp, apps, gql_error_code,
    traffic::DESKTOP_UA,
    web::{expect_page, join, location, org_of, post_form},
};
use entity::{event, tracked_session};
use leadtrail::time::{DAY_MS, MINUTE_MS, now_ms};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};

const PAGES: [&str; 5] = ["/", "/pricing", "/docs/start", "/docs/api", "/blog"];
const CREATE_GOAL: &str = "mutation($s: Int!, $i: GoalInput!) { createGoal(siteId: $s, input: $i) { id } }";
const CREATE: &str = "mutation($s: Int!, $i: FunnelInput!) { createFunnel(siteId: $s, input: $i) { id name windowDays steps { name } } }";
const REPORT: &str = "query($i: FunnelReportInput!) { funnelReport(input: $i) { steps { goal visitors conversionFromPrevious conversionFromFirst dropoff } groups { value steps { visitors } } } }";

/// Whether an event reaches a goal, as this file reads it.
type Reaches = fn(&event::Model) -> bool;

/// The goals: (name, input, whether an event reaches it).
fn goals() -> Vec<(&'static str, Value, Reaches)> {
    vec![
        ("Pricing", json!({ "name": "Pricing", "pagePath": "/pricing" }), |e| {
            e.event_type == "pageview" && e.page == "/pricing"
        }),
        ("Docs", json!({ "name": "Docs", "pagePath": "/docs/*" }), |e| {
            e.event_type == "pageview" && e.page.starts_with("/docs/")
        }),
        ("Signup", json!({ "name": "Signup", "eventName": "signup" }), |e| {
            e.event_type == "custom_event" && e.event_name == "signup"
        }),
    ]
}

async fn make_goals(client: &Client, site: i64) -> HashMap<&'static str, String> {
    let mut ids = HashMap::new();
    for (name, input, _) in goals() {
        let made = client.graphql(CREATE_GOAL, json!({ "s": site, "i": input })).await;
        ids.insert(name, made["data"]["createGoal"]["id"].as_str().unwrap().to_owned());
    }
    ids
}

async fn feed(app: &TestApp, site: i64, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let now = now_ms();
    for n in 0..45 {
        let vid = format!("f{seed}-{n}");
        let mut day = rng.random_range(3..25);
        for _ in 0..rng.random_range(1..=4) {
            day -= rng.random_range(0..=2).min(day - 1);
            let mut ts = now - day * DAY_MS - rng.random_range(0..DAY_MS / 2);
            let query = ["", "?utm_campaign=spring", "?utm_source=google"][rng.random_range(0..3)];
            let mut events = Vec::new();
            for step in 0..rng.random_range(1..=6) {
                let page = PAGES[rng.random_range(0..PAGES.len())];
                let url = format!("https://funnel.example{page}{}", if step == 0 { query } else { "" });
                events.push(if step > 0 && rng.random_bool(0.25) {
                    json!({ "site": site, "type": "custom_event", "event_name": "signup", "tracker_vid": vid, "url": url, "ts": ts })
                } else {
                    json!({ "site": site, "type": "pageview", "tracker_vid": vid, "url": url, "ts": ts })
                });
                ts += rng.random_range(1..=5) * MINUTE_MS;
            }
            let reply = app.collect_with(json!({ "events": events }), DESKTOP_UA, &[]).await;
            assert_eq!(reply.status.as_u16(), 202, "{}", reply.text);
        }
    }
    app.state.writer.flush().await;
}

/// The furthest way through, by trying every way: (steps reached, the
/// start session of the way that got there first, the latest such start).
fn brute(events: &[&event::Model], steps: &[Reaches], window: Option<i64>) -> (usize, Option<i64>) {
    // (depth, completion index, start index) of the best way found.
    fn walk(
        events: &[&event::Model],
        steps: &[Reaches],
        window: Option<i64>,
        start: usize,
        last: usize,
        depth: usize,
        best: &mut (usize, usize, usize),
    ) {
        let better = depth > best.0 || (depth == best.0 && (last < best.1 || (last == best.1 && start > best.2)));
        if better {
            *best = (depth, last, start);
        }
        if depth == steps.len() {
            return;
        }
        for next in last + 1..events.len() {
            let within = match window {
                None => events[next].session_id == events[start].session_id,
                Some(span) => events[next].timestamp - events[start].timestamp <= span,
            };
            if within && steps[depth](events[next]) {
                walk(events, steps, window, start, next, depth + 1, best);
            }
        }
    }
    let mut best = (0, usize::MAX, 0);
    for (start, event) in events.iter().enumerate() {
        if steps[0](event) {
            walk(events, steps, window, start, start, 1, &mut best);
        }
    }
    if best.0 == 0 { (0, None) } else { (best.0, Some(events[best.2].session_id)) }
}

fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 { 0.0 } else { (part as f64 / whole as f64 * 10_000.0).round() / 100.0 }
}

#[tokio::test]
async fn funnel_figures_equal_a_brute_force_recount() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Fay", "funnel.example").await;
        feed(&app, site, 41).await;
        let ids = make_goals(&client, site).await;
        let db = &app.state.db;
        let events: Vec<event::Model> = event::Entity::find()
            .filter(event::Column::SiteId.eq(site))
            .order_by_asc(event::Column::VisitorId)
            .order_by_asc(event::Column::Timestamp)
            .order_by_asc(event::Column::Id)
            .all(db)
            .await
            .unwrap();
        let campaign_of: HashMap<i64, String> = tracked_session::Entity::find()
            .filter(tracked_session::Column::SiteId.eq(site))
            .all(db)
            .await
            .unwrap()
            .into_iter()
            .map(|s| (s.id, s.utm_campaign.filter(|c| !c.is_empty()).unwrap_or_else(|| "(not set)".to_owned())))
            .collect();
        let by_visitor: BTreeMap<i64, Vec<&event::Model>> = events.iter().fold(BTreeMap::new(), |mut map, e| {
            map.entry(e.visitor_id).or_default().push(e);
            map
        });
        let reach: HashMap<&str, Reaches> = goals().into_iter().map(|(name, _, f)| (name, f)).collect();

        for (names, window_days) in [
            (vec!["Pricing", "Signup"], None),
            (vec!["Docs", "Pricing", "Signup"], Some(7)),
            (vec!["Signup", "Pricing"], None),
            (vec!["Pricing", "Pricing"], None),
            (vec!["Docs", "Docs", "Signup"], Some(30)),
            (vec!["Pricing", "Docs", "Pricing", "Signup"], Some(1)),
        ] {
            let steps: Vec<Reaches> = names.iter().map(|name| reach[name]).collect();
            let window = window_days.map(|days: i64| days * DAY_MS);
            let mut reached: Vec<(usize, Option<i64>)> = Vec::new();
            for visitor_events in by_visitor.values() {
                reached.push(brute(visitor_events, &steps, window));
            }
            let count =
                |at: usize, of: &[(usize, Option<i64>)]| of.iter().filter(|(steps, _)| *steps > at).count() as i64;
            let expected: Vec<Value> = (0..names.len())
                .map(|at| {
                    let visitors = count(at, &reached);
                    let previous = if at == 0 { visitors } else { count(at - 1, &reached) };
                    json!({ "goal": names[at], "visitors": visitors, "conversionFromPrevious": percent(visitors, previous),
                            "conversionFromFirst": percent(visitors, count(0, &reached)), "dropoff": previous - visitors })
                })
                .collect();
            // Saved, then reported with a breakdown by campaign.
            let saved = client
                .graphql(CREATE, json!({ "s": site, "i": { "name": names.join(" to "), "steps": names.iter().map(|n| ids[n].clone()).collect::<Vec<_>>(), "windowDays": window_days } }))
                .await;
            let funnel = saved["data"]["createFunnel"]["id"].as_str().unwrap_or_else(|| panic!("{saved}")).to_owned();
            let report = client
                .graphql(REPORT, json!({ "i": { "funnelId": funnel, "dateRange": "30d", "breakdown": "campaign" } }))
                .await;
            assert_eq!(report["data"]["funnelReport"]["steps"], json!(expected), "{names:?} {window_days:?}: {report}");
            let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for (steps, start) in &reached {
                if let Some(start) = start {
                    groups.entry(campaign_of[start].clone()).or_default().push(*steps);
                }
            }
            let mut expected_groups: Vec<(String, Vec<i64>)> = groups
                .into_iter()
                .map(|(value, reached)| {
                    let per_step =
                        (0..names.len()).map(|at| reached.iter().filter(|s| **s > at).count() as i64).collect();
                    (value, per_step)
                })
                .collect();
            expected_groups.sort_by(|a, b| b.1[0].cmp(&a.1[0]).then_with(|| a.0.cmp(&b.0)));
            let got_groups: Vec<(String, Vec<i64>)> = report["data"]["funnelReport"]["groups"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| {
                    let steps =
                        g["steps"].as_array().unwrap().iter().map(|s| s["visitors"].as_i64().unwrap()).collect();
                    (g["value"].as_str().unwrap().to_owned(), steps)
                })
                .collect();
            assert_eq!(got_groups, expected_groups, "{names:?} by campaign");

            // The same steps by goal name over REST.
            let rest = client
                .post(
                    "/api/v2/funnel",
                    json!({ "site_id": site, "steps": names, "window_days": window_days, "date_range": "30d" }),
                )
                .await;
            let rest = rest.expect(200);
            let visitors: Vec<i64> =
                rest["steps"].as_array().unwrap().iter().map(|s| s["visitors"].as_i64().unwrap()).collect();
            let expected_visitors: Vec<i64> = expected.iter().map(|s| s["visitors"].as_i64().unwrap()).collect();
            assert_eq!(visitors, expected_visitors, "REST {names:?}");
        }
    }
}

#[tokio::test]
async fn funnels_are_checked_kept_per_org_and_shown_on_their_page() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Flo", "funnel.example").await;
        let org = org_of(&owner, site).await;
        let viewer = join(&app, &owner, &org, "Vik", "viewer").await;
        let (stranger, stranger_site) = app.user_with_site("Sam", "other.example").await;
        let ids = make_goals(&owner, site).await;
        let theirs = make_goals(&stranger, stranger_site).await;

        let create = |client: &Client, input: Value| {
            let client = client.clone();
            async move { client.graphql(CREATE, json!({ "s": site, "i": input })).await }
        };
        for (input, field) in [
            (json!({ "name": "One", "steps": [ids["Pricing"]] }), "input.steps"),
            (json!({ "name": "Nine", "steps": vec![ids["Pricing"].clone(); 9] }), "input.steps"),
            (json!({ "name": "Foreign", "steps": [ids["Pricing"], theirs["Signup"]] }), "input.steps[1]"),
            (json!({ "name": "Long", "steps": [ids["Pricing"], ids["Signup"]], "windowDays": 91 }), "input.windowDays"),
            (json!({ "name": " ", "steps": [ids["Pricing"], ids["Signup"]] }), "input.name"),
        ] {
            let refused = create(&owner, input.clone()).await;
            assert_eq!(gql_error_code(&refused), "VALIDATION_ERROR", "{input}: {refused}");
            assert_eq!(refused["errors"][0]["extensions"]["field"], field, "{input}: {refused}");
        }
        let made = create(&owner, json!({ "name": "<i>Trial</i>", "steps": [ids["Pricing"], ids["Signup"]] })).await;
        let id = made["data"]["createFunnel"]["id"].as_str().unwrap().to_owned();
        assert_eq!(
            gql_error_code(&create(&viewer, json!({ "name": "V", "steps": [ids["Pricing"], ids["Signup"]] })).await),
            "FORBIDDEN"
        );

        // Another org's funnel is not found; so is its site.
        let report = stranger.graphql(REPORT, json!({ "i": { "funnelId": id } })).await;
        assert_eq!(gql_error_code(&report), "NOT_FOUND", "{report}");
        assert_eq!(
            gql_error_code(
                &stranger.graphql("mutation($id: ID!) { deleteFunnel(id: $id) }", json!({ "id": id })).await
            ),
            "NOT_FOUND"
        );
        let rest = stranger.post("/api/v2/funnel", json!({ "funnel_id": id })).await;
        assert_eq!(rest.status.as_u16(), 404, "{}", rest.text);
        let rest = stranger.post("/api/v2/funnel", json!({ "site_id": site, "steps": ["Pricing", "Signup"] })).await;
        assert_eq!(rest.status.as_u16(), 404, "{}", rest.text);
        assert_eq!(app.client().post("/api/v2/funnel", json!({ "funnel_id": id })).await.status.as_u16(), 401);
        for (body, field) in [
            (json!({ "site_id": site, "steps": ["Pricing"] }), "steps"),
            (json!({ "site_id": site, "steps": ["Pricing", "Nope"] }), "steps[1]"),
            (json!({ "site_id": site, "steps": ["Pricing", "Signup"], "date_range": "fortnight" }), "date_range"),
            (json!({ "site_id": site, "steps": ["Pricing", "Signup"], "breakdown": "mood" }), "breakdown"),
            (json!({ "steps": ["Pricing", "Signup"] }), "site_id"),
        ] {
            let reply = owner.post("/api/v2/funnel", body.clone()).await;
            assert_eq!(reply.status.as_u16(), 400, "{body}: {}", reply.text);
            assert_eq!(reply.body["field"], field, "{body}: {}", reply.text);
        }

        // The page: the list, the report with its bars, escaped names; members save and delete.
        feed(&app, site, 5).await;
        let page = expect_page(&owner.get(&format!("/funnels?funnel={id}&range=30d&breakdown=channel")).await, 200);
        assert!(page.contains("&#60;i&#62;Trial&#60;/i&#62;") && !page.contains("<i>Trial</i>"), "{page}");
        assert!(page.contains("1. Pricing") && page.contains("2. Signup"), "{page}");
        assert!(page.contains("<h3>Channel</h3>"), "{page}");
        let seen = expect_page(&viewer.get(&format!("/funnels?funnel={id}")).await, 200);
        assert!(!seen.contains(r#"value="create""#) && !seen.contains(r#"value="delete""#), "viewers read only");
        let form = [
            ("action", "create"),
            ("name", "Docs to signup"),
            ("step1", ids["Docs"].as_str()),
            ("step2", ids["Signup"].as_str()),
            ("step3", ""),
            ("window", "7"),
        ];
        let created = location(&post_form(&owner, "/funnels", &form, &[]).await).to_owned();
        assert!(created.starts_with("/funnels?funnel=") && created.ends_with("&done=funnel-created"), "{created}");
        let refused = [("action", "create"), ("name", "Short"), ("step1", ids["Docs"].as_str())];
        let html = expect_page(&post_form(&owner, "/funnels", &refused, &[]).await, 400);
        assert!(html.contains("a funnel has 2 to 8 steps"), "{html}");
        let delete = [("action", "delete"), ("funnel", id.as_str())];
        assert_eq!(location(&post_form(&owner, "/funnels", &delete, &[]).await), "/funnels?done=funnel-deleted");
        let gone = stranger.get(&format!("/funnels?funnel={id}")).await;
        assert_ne!(gone.status.as_u16(), 200, "{}", gone.text);
    }
}

#[tokio::test]
async fn a_funnel_whose_goals_are_deleted_reports_the_steps_it_has_left() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Gil", "funnel.example").await;
        feed(&app, site, 7).await;
        let ids = make_goals(&client, site).await;
        let steps: Vec<String> = ["Docs", "Pricing", "Signup"].iter().map(|name| ids[name].clone()).collect();
        let saved = client.graphql(CREATE, json!({ "s": site, "i": { "name": "Trial", "steps": steps } })).await;
        let funnel = saved["data"]["createFunnel"]["id"].as_str().unwrap_or_else(|| panic!("{saved}")).to_owned();
        let delete_goal = |name: &str| {
            let (client, id) = (client.clone(), ids[name].clone());
            async move {
                let deleted = client.graphql("mutation($id: ID!) { deleteGoal(id: $id) }", json!({ "id": id })).await;
                assert_eq!(deleted["data"]["deleteGoal"], true, "{deleted}");
            }
        };
        let saved_report = |client: &Client| {
            let client = client.clone();
            let funnel = funnel.clone();
            async move {
                let query = "query($i: FunnelReportInput!) { funnelReport(input: $i) { removedSteps steps { goal visitors } } }";
                let answer = client.graphql(query, json!({ "i": { "funnelId": funnel, "dateRange": "30d" } })).await;
                assert!(answer.get("errors").is_none(), "{answer}");
                answer["data"]["funnelReport"].clone()
            }
        };

        // One goal gone: the report is the two steps that remain, as named on the spot.
        delete_goal("Docs").await;
        let report = saved_report(&client).await;
        assert_eq!(report["removedSteps"], 1, "{report}");
        let named = client
            .post("/api/v2/funnel", json!({ "site_id": site, "steps": ["Pricing", "Signup"], "date_range": "30d" }))
            .await
            .expect(200)
            .clone();
        let visitors = |steps: &Value| -> Vec<(String, i64)> {
            steps
                .as_array()
                .unwrap()
                .iter()
                .map(|s| (s["goal"].as_str().unwrap().to_owned(), s["visitors"].as_i64().unwrap()))
                .collect()
        };
        assert_eq!(visitors(&report["steps"]), visitors(&named["steps"]));
        assert_eq!(visitors(&report["steps"]).len(), 2);
        assert!(visitors(&report["steps"])[0].1 > 0, "the seeded traffic reaches Pricing: {report}");
        let rest = client.post("/api/v2/funnel", json!({ "funnel_id": funnel })).await.expect(200).clone();
        assert_eq!(rest["removed_steps"], 1, "{rest}");
        let page = expect_page(&client.get(&format!("/funnels?funnel={funnel}")).await, 200);
        assert!(page.contains("1 step was left out: its goal was deleted."), "{page}");
        assert!(
            page.contains("(1 step&#39;s goal was deleted)") || page.contains("(1 step's goal was deleted)"),
            "{page}"
        );

        // Fewer than two, then none: the page still opens and says so.
        for (name, left) in [("Pricing", 1), ("Signup", 0)] {
            delete_goal(name).await;
            let report = saved_report(&client).await;
            assert_eq!(report["steps"].as_array().unwrap().len(), left, "{report}");
            let page = expect_page(&client.get(&format!("/funnels?funnel={funnel}&breakdown=channel")).await, 200);
            assert!(page.contains("Fewer than two steps remain"), "{page}");
        }
    }
}
