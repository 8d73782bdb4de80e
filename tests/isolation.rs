//! Tenant isolation: a user of another org calls every route and every
//! GraphQL field that takes an id with the victim's ids. Each call must
//! answer exactly like a missing id (404 / NOT_FOUND) and change nothing. The
//! tables are checked against the router and the schema, so a new route or
//! field without a row fails here.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeSet;

use common::{Client, TestApp, apps, gql_error_code, traffic::pageview};
use reqwest::Method;
use serde_json::{Value, json};

struct Victim {
    client: Client,
    site: i64,
    org: String,
    link: String,
    session: String,
    key: String,
    member: String,
    destination: String,
    delivery: String,
    /// An open invitation the victim sent.
    invitation: String,
    /// A saved view of the victim's site.
    view: String,
    /// A goal of the victim's site.
    goal: String,
    /// A funnel of the victim's site.
    funnel: String,
}

async fn victim(app: &TestApp) -> Victim {
    let (client, site) = app.user_with_site("Vera", "victim.example").await;
    let link = client
        .create_link(json!({ "siteId": site, "destinationUrl": "https://victim.example/", "slug": "secret" }))
        .await;
    let link = link["link"]["id"].as_str().unwrap().to_owned();
    // An alert for the identify below: a destination that never resolves, so
    // its delivery stays in the outbox and nothing leaves the machine.
    let destination = client
        .graphql(
            "mutation($site: Int!) { createDestination(siteId: $site, input: { name: \"sales\", url: \"https://hooks.invalid/alert\", trigger: IDENTIFIED }) { id } }",
            json!({ "site": site }),
        )
        .await;
    let destination = destination["data"]["createDestination"]["id"].as_str().unwrap().to_owned();
    app.collect(pageview(site, "victim-visitor", "https://victim.example/")).await.expect(202);
    client
        .post("/api/identify", json!({ "siteId": site, "tracker_vid": "victim-visitor", "email": "v@victim.example" }))
        .await
        .expect(200);
    let profile = client.get(&format!("/api/visitor/victim-visitor?siteId={site}")).await;
    let session = profile.expect(200)["sessions"][0]["session_id"].as_str().unwrap().to_owned();
    let orgs = client.graphql("{ orgs { id } }", json!({})).await;
    let org = orgs["data"]["orgs"][0]["id"].as_str().unwrap().to_owned();
    let key = client.graphql("mutation { createApiKey(name: \"backend\") { apiKey { id } } }", json!({})).await;
    let key = key["data"]["createApiKey"]["apiKey"]["id"].as_str().unwrap().to_owned();
    let (mia, email) = app.user("mia").await;
    let added = common::invite_and_accept(&client, &mia, &org, &email, "member").await;
    let member = added["data"]["acceptInvitation"]["userId"].as_str().unwrap().to_owned();
    let deliveries = client
        .graphql("query($site: Int!) { destinations(siteId: $site) { deliveries { id } } }", json!({ "site": site }))
        .await;
    let delivery = deliveries["data"]["destinations"][0]["deliveries"][0]["id"].as_str().unwrap().to_owned();
    let invited = client
        .graphql(
            "mutation($org: ID!) { inviteMember(orgId: $org, email: \"pending@victim.example\") { id } }",
            json!({ "org": org }),
        )
        .await;
    let invitation = invited["data"]["inviteMember"]["id"].as_str().unwrap().to_owned();
    let view = client
        .graphql(
            "mutation($site: Int!) { createSavedView(siteId: $site, input: { name: \"Hot\", query: \"hot=true\" }) { id } }",
            json!({ "site": site }),
        )
        .await;
    let view = view["data"]["createSavedView"]["id"].as_str().unwrap().to_owned();
    let goal = client
        .graphql(
            "mutation($site: Int!) { createGoal(siteId: $site, input: { name: \"Demo\", pagePath: \"/demo\" }) { id } }",
            json!({ "site": site }),
        )
        .await;
    let goal = goal["data"]["createGoal"]["id"].as_str().unwrap().to_owned();
    let funnel = client
        .graphql(
            "mutation($site: Int!, $goal: ID!) { createFunnel(siteId: $site, input: { name: \"Demo\", steps: [$goal, $goal] }) { id } }",
            json!({ "site": site, "goal": goal }),
        )
        .await;
    let funnel = funnel["data"]["createFunnel"]["id"].as_str().unwrap().to_owned();
    Victim { client, site, org, link, session, key, member, destination, delivery, invitation, view, goal, funnel }
}

/// Everything the victim can see; it must not change.
async fn snapshot(v: &Victim) -> Value {
    let site = v.site;
    json!({
        "links": v.client.get(&format!("/api/links?siteId={site}")).await.body,
        "sites": v.client.get("/api/sites").await.body,
        "identity": v.client.get(&format!("/api/identify?siteId={site}&tracker_vid=victim-visitor")).await.body,
        "visitor": v.client.get(&format!("/api/visitor/victim-visitor?siteId={site}")).await.body,
        "destinations": v.client.graphql("query($site: Int!) { destinations(siteId: $site) { id name url webhookType trigger enabled deliveries { id trackerVid } } }", json!({ "site": site })).await,
        "accounts": v.client.get(&format!("/api/accounts?siteId={site}&timeRange=all")).await.body,
        "views": v.client.graphql("query($site: Int!) { savedViews(siteId: $site) { id name query } }", json!({ "site": site })).await,
        "goals": v.client.graphql("query($site: Int!) { goals(siteId: $site) { id name pagePath } }", json!({ "site": site })).await,
        "funnels": v.client.graphql("query($site: Int!) { funnels(siteId: $site) { id name windowDays steps { id } } }", json!({ "site": site })).await,
        "org": v.client.graphql("query($org: ID!) { members(orgId: $org) { userId role } apiKeys(orgId: $org) { id revokedAt } webhookSigningSecret(orgId: $org) }", json!({ "org": v.org })).await,
    })
}

/// REST routes: the request with the victim's ids, or why the route takes none.
/// A request: method, path with query, JSON body.
type Call = (Method, String, Option<Value>);

/// A route (method, pattern) and the call that probes it, or none when it takes no id.
type Row = (&'static str, &'static str, Option<Call>);

fn rest_rows(v: &Victim, own_site: i64) -> Vec<Row> {
    let (site, link, session) = (v.site, v.link.clone(), v.session.clone());
    let get = |path: String| Some((Method::GET, path, None));
    vec![
        ("POST", "/api/auth/sign-up/email", None),
        ("POST", "/api/auth/sign-in/email", None),
        ("POST", "/api/auth/sign-out", None),
        ("GET", "/api/auth/get-session", None),
        ("POST", "/api/auth/update-user", None),
        ("POST", "/api/auth/change-email", None),
        ("POST", "/api/auth/change-password", None),
        ("POST", "/api/auth/delete-user", None),
        ("POST", "/api/auth/request-password-reset", None),
        ("POST", "/api/auth/reset-password", None),
        ("POST", "/api/auth/send-verification-email", None),
        ("GET", "/api/auth/verify-email", None),
        ("GET", "/api/profile", None),
        ("GET", "/api/sites", None),
        ("POST", "/api/sites", None),
        ("GET", "/api/webhook", None),
        ("GET", "/api/identify", get(format!("/api/identify?siteId={site}&tracker_vid=victim-visitor"))),
        ("POST", "/api/identify", Some((Method::POST, "/api/identify".into(), Some(json!({ "siteId": site, "tracker_vid": "victim-visitor", "user_id": "hijack" }))))),
        ("POST", "/api/v2/attribution", Some((Method::POST, "/api/v2/attribution".into(), Some(json!({ "site_id": site }))))),
        ("POST", "/api/v2/funnel", Some((Method::POST, "/api/v2/funnel".into(), Some(json!({ "funnel_id": v.funnel }))))),
        ("POST", "/api/conversions", Some((Method::POST, "/api/conversions".into(), Some(json!({ "siteId": site, "name": "x", "amount": "1", "currency": "USD", "tracker_vid": "victim-visitor" }))))),
        ("GET", "/api/links", get(format!("/api/links?siteId={site}"))),
        ("POST", "/api/links", Some((Method::POST, "/api/links".into(), Some(json!({ "siteId": site, "destinationUrl": "https://evil.example/", "slug": "planted" }))))),
        ("GET", "/api/links/check-slug", get(format!("/api/links/check-slug?siteId={site}&slug=secret"))),
        ("PUT", "/api/links/{id}", Some((Method::PUT, format!("/api/links/{link}"), Some(json!({ "destinationUrl": "https://evil.example/" }))))),
        ("DELETE", "/api/links/{id}", Some((Method::DELETE, format!("/api/links/{link}"), None))),
        ("GET", "/api/link-analytics", get(format!("/api/link-analytics?siteId={site}"))),
        ("GET", "/api/visitors", get(format!("/api/visitors?siteId={site}"))),
        ("GET", "/api/visitor", get(format!("/api/visitor?siteId={site}"))),
        ("GET", "/api/accounts", get(format!("/api/accounts?siteId={site}"))),
        ("GET", "/api/accounts/{key}", get(format!("/api/accounts/victim.example?siteId={site}"))),
        ("GET", "/api/visitor/{id}", get(format!("/api/visitor/victim-visitor?siteId={site}"))),
        ("GET", "/api/stats", get(format!("/api/stats?siteId={site}"))),
        ("GET", "/api/explorer", get(format!("/api/explorer?siteId={site}"))),
        ("POST", "/api/v2/query", Some((Method::POST, "/api/v2/query".into(), Some(json!({ "site_id": site, "metrics": ["visitors"], "date_range": "7d" }))))),
        ("GET", "/api/session/{id}", get(format!("/api/session/{session}?siteId={site}"))),
        ("POST", "/api/webhook", Some((Method::POST, "/api/webhook".into(), Some(json!({ "siteId": site, "tracker_vid": "victim-visitor", "webhook_url": "https://example.com/", "dry_run": true }))))),
        ("DELETE", "/api/visitor/{id}", Some((Method::DELETE, format!("/api/visitor/victim-visitor?siteId={site}"), None))),
        ("GET", "/api/visitor/{id}/export", get(format!("/api/visitor/victim-visitor/export?siteId={site}"))),
        ("PUT", "/api/sites/{id}", Some((Method::PUT, format!("/api/sites/{site}"), Some(json!({ "name": "Owned", "retentionDays": 1 }))))),
        ("DELETE", "/api/sites/{id}", Some((Method::DELETE, format!("/api/sites/{site}"), None))),
    ]
    .into_iter()
    .chain([
        // The victim's visitor and session through the attacker's own site.
        ("GET", "/api/visitor/{id}", get(format!("/api/visitor/victim-visitor?siteId={own_site}"))),
        ("DELETE", "/api/visitor/{id}", Some((Method::DELETE, format!("/api/visitor/victim-visitor?siteId={own_site}"), None))),
        ("GET", "/api/session/{id}", get(format!("/api/session/{session}?siteId={own_site}"))),
        ("GET", "/api/accounts/{key}", get(format!("/api/accounts/victim.example?siteId={own_site}"))),
        // By domain, and as a panel download.
        ("POST", "/api/v2/query", Some((Method::POST, "/api/v2/query".into(), Some(json!({ "site_id": "victim.example", "metrics": ["visitors"], "date_range": "7d" }))))),
        ("GET", "/api/explorer", get(format!("/api/explorer?siteId={site}&panel=visit:source&format=csv"))),
    ])
    .collect()
}

/// GraphQL fields that take an id: a document with the victim's ids.
fn graphql_rows(v: &Victim) -> Vec<(&'static str, String)> {
    let (site, org, link, session, key, member) = (v.site, &v.org, &v.link, &v.session, &v.key, &v.member);
    let (destination, delivery, invitation, view, goal) =
        (&v.destination, &v.delivery, &v.invitation, &v.view, &v.goal);
    let funnel = &v.funnel;
    let alert_input = "{ name: \"planted\", url: \"https://evil.example/\", trigger: IDENTIFIED }";
    vec![
        ("org", format!("{{ org(id: \"{org}\") {{ id }} }}")),
        ("members", format!("{{ members(orgId: \"{org}\") {{ userId }} }}")),
        ("apiKeys", format!("{{ apiKeys(orgId: \"{org}\") {{ id }} }}")),
        ("site", format!("{{ site(id: {site}) {{ id }} }}")),
        ("identity", format!("{{ identity(siteId: {site}, trackerVid: \"victim-visitor\") {{ identified }} }}")),
        ("links", format!("{{ links(siteId: {site}) {{ siteSlug }} }}")),
        ("link", format!("{{ link(id: \"{link}\") {{ slug }} }}")),
        ("checkSlug", format!("{{ checkSlug(siteId: {site}, slug: \"secret\") {{ available }} }}")),
        ("linkAnalytics", format!("{{ linkAnalytics(siteId: {site}) {{ total }} }}")),
        ("visitors", format!("{{ visitors(siteId: {site}) {{ total }} }}")),
        ("visitor", format!("{{ visitor(siteId: {site}, id: \"victim-visitor\") {{ score }} }}")),
        ("stats", format!("{{ stats(siteId: {site}) {{ timeRange }} }}")),
        (
            "explore",
            format!(
                "{{ explore(siteId: {site}, query: {{ metrics: [\"visitors\"], dateRange: \"7d\" }}) {{ meta }} }}"
            ),
        ),
        ("explorer", format!("{{ explorer(siteId: {site}) {{ range }} }}")),
        ("traffic", format!("{{ traffic(siteId: {site}) {{ pageviews }} }}")),
        ("visitorSite", "{ visitorSite(trackerVid: \"victim-visitor\") { id } }".to_owned()),
        ("workspace", format!("{{ workspace(siteId: {site}) {{ site {{ id }} members {{ email }} }} }}")),
        ("workspace", "{ workspace(trackerVid: \"victim-visitor\") { site { id } } }".to_owned()),
        ("workspace", format!("{{ workspace(linkId: \"{link}\") {{ site {{ id }} org {{ id }} }} }}")),
        ("selectSite", format!("mutation {{ selectSite(siteId: {site}) {{ id }} }}")),
        ("liveStream", format!("{{ liveStream(siteId: {site}) {{ timestamp }} }}")),
        ("trackedSession", format!("{{ trackedSession(siteId: {site}, id: \"{session}\") {{ sessionId }} }}")),
        ("webhookDeliveries", format!("{{ webhookDeliveries(orgId: \"{org}\") {{ id }} }}")),
        ("webhookSigningSecret", format!("{{ webhookSigningSecret(orgId: \"{org}\") }}")),
        ("createApiKey", format!("mutation {{ createApiKey(orgId: \"{org}\", name: \"x\") {{ key }} }}")),
        (
            "inviteMember",
            format!("mutation {{ inviteMember(orgId: \"{org}\", email: \"mallory@example.com\") {{ role }} }}"),
        ),
        ("invitations", format!("{{ invitations(orgId: \"{org}\") {{ email }} }}")),
        ("emailLog", format!("{{ emailLog(orgId: \"{org}\") {{ recipient }} }}")),
        ("setDigest", format!("mutation {{ setDigest(siteId: {site}, frequency: \"daily\") {{ frequency }} }}")),
        ("cancelInvitation", format!("mutation {{ cancelInvitation(id: \"{invitation}\") }}")),
        ("acceptInvitation", format!("mutation {{ acceptInvitation(id: \"{invitation}\") {{ role }} }}")),
        ("declineInvitation", format!("mutation {{ declineInvitation(id: \"{invitation}\") }}")),
        (
            "changeMemberRole",
            format!(
                "mutation {{ changeMemberRole(orgId: \"{org}\", userId: \"{member}\", role: \"viewer\") {{ role }} }}"
            ),
        ),
        ("removeMember", format!("mutation {{ removeMember(orgId: \"{org}\", userId: \"{member}\") }}")),
        ("deleteOrg", format!("mutation {{ deleteOrg(orgId: \"{org}\") }}")),
        ("revokeApiKey", format!("mutation {{ revokeApiKey(id: \"{key}\") {{ id }} }}")),
        (
            "createSite",
            format!("mutation {{ createSite(input: {{ orgId: \"{org}\", domain: \"planted.example\" }}) {{ id }} }}"),
        ),
        ("updateSite", format!("mutation {{ updateSite(id: {site}, input: {{ name: \"Owned\" }}) {{ id }} }}")),
        ("deleteSite", format!("mutation {{ deleteSite(id: {site}) {{ success }} }}")),
        (
            "identify",
            format!(
                "mutation {{ identify(input: {{ siteId: {site}, trackerVid: \"victim-visitor\", userId: \"hijack\" }}) {{ success }} }}"
            ),
        ),
        (
            "createLink",
            format!(
                "mutation {{ createLink(input: {{ siteId: {site}, destinationUrl: \"https://evil.example/\" }}) {{ fullUrl }} }}"
            ),
        ),
        ("updateLink", format!("mutation {{ updateLink(id: \"{link}\", input: {{ campaign: \"x\" }}) {{ id }} }}")),
        ("deleteLink", format!("mutation {{ deleteLink(id: \"{link}\") {{ success }} }}")),
        (
            "sendWebhook",
            format!(
                "mutation {{ sendWebhook(input: {{ siteId: {site}, trackerVid: \"victim-visitor\", webhookUrl: \"https://example.com/\", dryRun: true }}) {{ success }} }}"
            ),
        ),
        ("rotateWebhookSecret", format!("mutation {{ rotateWebhookSecret(orgId: \"{org}\") }}")),
        ("destinations", format!("{{ destinations(siteId: {site}) {{ id url }} }}")),
        (
            "createDestination",
            format!("mutation {{ createDestination(siteId: {site}, input: {alert_input}) {{ id }} }}"),
        ),
        (
            "updateDestination",
            format!("mutation {{ updateDestination(id: \"{destination}\", input: {alert_input}) {{ id }} }}"),
        ),
        ("deleteDestination", format!("mutation {{ deleteDestination(id: \"{destination}\") }}")),
        ("testDestination", format!("mutation {{ testDestination(id: \"{destination}\") {{ success }} }}")),
        ("retryDelivery", format!("mutation {{ retryDelivery(id: \"{delivery}\") {{ status }} }}")),
        ("accounts", format!("{{ accounts(siteId: {site}) {{ total }} }}")),
        ("account", format!("{{ account(siteId: {site}, key: \"victim.example\") {{ key }} }}")),
        (
            "updateAccount",
            format!(
                "mutation {{ updateAccount(siteId: {site}, key: \"victim.example\", input: {{ excluded: true }}) {{ key }} }}"
            ),
        ),
        ("savedViews", format!("{{ savedViews(siteId: {site}) {{ id }} }}")),
        (
            "createSavedView",
            format!("mutation {{ createSavedView(siteId: {site}, input: {{ name: \"x\", query: \"\" }}) {{ id }} }}"),
        ),
        (
            "updateSavedView",
            format!("mutation {{ updateSavedView(id: \"{view}\", input: {{ name: \"x\", query: \"\" }}) {{ id }} }}"),
        ),
        ("deleteSavedView", format!("mutation {{ deleteSavedView(id: \"{view}\") }}")),
        ("goals", format!("{{ goals(siteId: {site}) {{ id }} }}")),
        ("createGoal", format!("mutation {{ createGoal(siteId: {site}, input: {{ pagePath: \"/x\" }}) {{ id }} }}")),
        ("updateGoal", format!("mutation {{ updateGoal(id: \"{goal}\", input: {{ pagePath: \"/x\" }}) {{ id }} }}")),
        ("deleteGoal", format!("mutation {{ deleteGoal(id: \"{goal}\") }}")),
        ("funnels", format!("{{ funnels(siteId: {site}) {{ id }} }}")),
        ("attributionReport", format!("{{ attributionReport(siteId: {site}) {{ siteId }} }}")),
        (
            "createFunnel",
            format!(
                "mutation {{ createFunnel(siteId: {site}, input: {{ name: \"x\", steps: [\"{goal}\", \"{goal}\"] }}) {{ id }} }}"
            ),
        ),
        (
            "updateFunnel",
            format!(
                "mutation {{ updateFunnel(id: \"{funnel}\", input: {{ name: \"x\", steps: [\"{goal}\", \"{goal}\"] }}) {{ id }} }}"
            ),
        ),
        ("deleteFunnel", format!("mutation {{ deleteFunnel(id: \"{funnel}\") }}")),
        ("funnelReport", format!("{{ funnelReport(input: {{ funnelId: \"{funnel}\" }}) {{ siteId }} }}")),
        (
            "recordConversion",
            format!(
                "mutation {{ recordConversion(input: {{ siteId: {site}, name: \"x\", amount: \"1\", currency: \"USD\", trackerVid: \"victim-visitor\" }}) {{ id }} }}"
            ),
        ),
        ("eraseVisitor", format!("mutation {{ eraseVisitor(siteId: {site}, id: \"victim-visitor\") {{ success }} }}")),
    ]
}

/// Tested with a websocket in tests/graphql.rs (`live_visitors_subscription_streams_the_sites_activity`).
const COVERED_ELSEWHERE: [&str; 1] = ["liveVisitors"];

/// Every Query, Mutation and Subscription field with an argument, or an input
/// field, named `id`, `...Id` or `trackerVid` (other than an identify's external `userId`).
async fn fields_taking_ids(client: &Client) -> BTreeSet<String> {
    let schema = client
        .graphql(
            "{ __schema { queryType { name } mutationType { name } subscriptionType { name } types { name kind inputFields { name }
                fields { name args { name type { kind name ofType { kind name ofType { kind name } } } } } } } }",
            json!({}),
        )
        .await;
    let types = schema["data"]["__schema"]["types"].as_array().unwrap().clone();
    // A tracker id names a visitor as an id does, within whatever site it resolves to.
    let is_id = |name: &str| name == "id" || name.ends_with("Id") || name == "trackerVid";
    let input_has_id = |type_name: &str| {
        types.iter().any(|t| {
            t["name"] == type_name
                && t["inputFields"].as_array().is_some_and(|fields| {
                    fields.iter().any(|f| {
                        f["name"]
                            .as_str()
                            .is_some_and(|n| is_id(n) && !(type_name == "IdentifyVisitorInput" && n == "userId"))
                    })
                })
        })
    };
    let named = |ty: &Value| -> String {
        let mut ty = ty;
        while ty["name"].is_null() && !ty["ofType"].is_null() {
            ty = &ty["ofType"];
        }
        ty["name"].as_str().unwrap_or_default().to_owned()
    };
    let mut found = BTreeSet::new();
    let roots = &schema["data"]["__schema"];
    for root in ["queryType", "mutationType", "subscriptionType"] {
        let root = types.iter().find(|t| t["name"] == roots[root]["name"]).unwrap();
        for field in root["fields"].as_array().unwrap() {
            let takes_id = field["args"]
                .as_array()
                .unwrap()
                .iter()
                .any(|arg| is_id(arg["name"].as_str().unwrap()) || input_has_id(&named(&arg["type"])));
            if takes_id {
                found.insert(field["name"].as_str().unwrap().to_owned());
            }
        }
    }
    found
}

#[tokio::test]
async fn another_tenant_sees_only_not_found_and_changes_nothing() {
    for app in apps().await {
        let v = victim(&app).await;
        let (attacker, own_site) = app.user_with_site("Mallory", "attacker.example").await;
        let before = snapshot(&v).await;

        let rows = rest_rows(&v, own_site);
        let covered: BTreeSet<(&str, &str)> = rows.iter().map(|(method, path, _)| (*method, *path)).collect();
        let routed: BTreeSet<(&str, &str)> = leadtrail::rest::route_list().into_iter().collect();
        assert_eq!(routed, covered, "every /api route has a row in the isolation table");
        for (_, pattern, call) in rows {
            let Some((method, path, body)) = call else { continue };
            let reply = attacker.request(method.clone(), &path, body.map(common::RequestBody::Json)).await;
            assert_eq!(reply.status.as_u16(), 404, "{method} {path} ({pattern}): {}", reply.text);
            reply.expect_error(404, "NOT_FOUND");
        }

        let rows = graphql_rows(&v);
        let mut covered: BTreeSet<String> = rows.iter().map(|(field, _)| (*field).to_owned()).collect();
        covered.extend(COVERED_ELSEWHERE.map(str::to_owned));
        assert_eq!(fields_taking_ids(&attacker).await, covered, "every GraphQL field taking an id has a row");
        for (field, document) in rows {
            let response = attacker.graphql(&document, json!({})).await;
            assert_eq!(gql_error_code(&response), "NOT_FOUND", "{field}: {response}");
            assert!(response["data"].is_null() || response["data"][field].is_null(), "{field} leaked: {response}");
        }

        assert_eq!(snapshot(&v).await, before, "the victim's data is unchanged");
        // The victim's link still redirects where it did.
        let location = app.click("/l/victim-example/secret", &[]).await;
        assert!(location.starts_with("https://victim.example/"), "{location}");
    }
}
