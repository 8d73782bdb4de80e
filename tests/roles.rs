//! Roles: viewers read; members also manage links, identify and send webhooks;
//! admins also manage sites, API keys and members; owners also delete the org.
//! Every role is tried against every mutating route.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Client, TestApp, apps, gql_error_code, traffic::pageview};
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Role {
    Viewer,
    Member,
    Admin,
    Owner,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Member => "member",
            Role::Admin => "admin",
            Role::Owner => "owner",
        }
    }
}

struct Team {
    owner: Client,
    org: String,
    site: i64,
}

async fn org_of(client: &Client) -> String {
    let orgs = client.graphql("{ orgs { id } }", json!({})).await;
    orgs["data"]["orgs"][0]["id"].as_str().unwrap().to_owned()
}

/// A new user's own org, for tests about its members.
async fn new_team(app: &TestApp, name: &str, domain: &str) -> Team {
    let (owner, _) = app.user_with_site(name, domain).await;
    let org = org_of(&owner).await;
    Team { owner, org, site: 0 }
}

/// The user id of the team's first owner.
async fn owner_id(team: &Team) -> String {
    let viewer = team.owner.graphql("{ viewer { email } }", json!({})).await;
    user_id_of(team, viewer["data"]["viewer"]["email"].as_str().unwrap()).await
}

async fn user_id_of(team: &Team, email: &str) -> String {
    let members = team
        .owner
        .graphql("query($org: ID!) { members(orgId: $org) { userId email } }", json!({ "org": team.org }))
        .await;
    members["data"]["members"].as_array().unwrap().iter().find(|m| m["email"] == email).unwrap()["userId"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn join(app: &TestApp, team: &Team, name: &str, role: Role) -> (Client, String) {
    let (client, email) = app.user(name).await;
    let added = common::invite_and_accept(&team.owner, &client, &team.org, &email, role.name()).await;
    assert_eq!(added["data"]["acceptInvitation"]["role"], role.name(), "{added}");
    (client, email)
}

/// Whether a REST answer allowed the call; a refusal must be 403 FORBIDDEN.
fn rest_allowed(reply: &common::Reply) -> bool {
    if reply.status.as_u16() == 403 {
        reply.expect_error(403, "FORBIDDEN");
        return false;
    }
    assert!(reply.status.is_success(), "{} {}", reply.status, reply.text);
    true
}

fn graphql_allowed(response: &Value) -> bool {
    if response.get("errors").is_some() {
        assert_eq!(gql_error_code(response), "FORBIDDEN", "{response}");
        return false;
    }
    true
}

/// Tries every mutating operation as `client`; returns (operation, allowed, needed).
async fn try_everything(app: &TestApp, team: &Team, client: &Client, tag: &str) -> Vec<(&'static str, bool, Role)> {
    let site = team.site;
    let mut results = Vec::new();
    let owner_link = |slug: String| async move {
        let body = json!({ "siteId": site, "destinationUrl": "https://team.example/", "slug": slug });
        team.owner.create_link(body).await["link"]["id"].as_str().unwrap().to_owned()
    };
    let body = json!({ "siteId": site, "destinationUrl": "https://team.example/", "slug": format!("new-{tag}") });
    results.push(("create link", rest_allowed(&client.post("/api/links", body).await), Role::Member));
    let link = owner_link(format!("edit-{tag}")).await;
    let reply = client.put(&format!("/api/links/{link}"), json!({ "campaign": "changed" })).await;
    results.push(("update link", rest_allowed(&reply), Role::Member));
    let link = owner_link(format!("gone-{tag}")).await;
    results.push(("delete link", rest_allowed(&client.delete(&format!("/api/links/{link}")).await), Role::Member));
    let identify = json!({ "siteId": site, "tracker_vid": format!("v-{tag}"), "user_id": "u-1" });
    results.push(("identify", rest_allowed(&client.post("/api/identify", identify).await), Role::Member));
    let webhook =
        json!({ "siteId": site, "tracker_vid": "visitor", "webhook_url": "https://example.com/hook", "dry_run": true });
    results.push(("webhook", rest_allowed(&client.post("/api/webhook", webhook).await), Role::Member));

    let created = client
        .graphql(
            "mutation($org: ID!, $domain: String!) { createSite(input: { orgId: $org, domain: $domain }) { id } }",
            json!({ "org": team.org, "domain": format!("{tag}.team.example") }),
        )
        .await;
    results.push(("create site", graphql_allowed(&created), Role::Admin));
    let fresh_site = |domain: String| async move {
        let reply = team.owner.post("/api/sites", json!({ "domain": domain })).await;
        reply.expect(200)["site"]["siteId"].as_i64().unwrap()
    };
    let target = fresh_site(format!("edit-{tag}.example")).await;
    let reply = client.put(&format!("/api/sites/{target}"), json!({ "name": "Renamed" })).await;
    results.push(("update site", rest_allowed(&reply), Role::Admin));
    let target = fresh_site(format!("gone-{tag}.example")).await;
    results.push(("delete site", rest_allowed(&client.delete(&format!("/api/sites/{target}")).await), Role::Admin));

    let org = json!({ "org": team.org });
    let key =
        client.graphql("mutation($org: ID!) { createApiKey(orgId: $org, name: \"k\") { key } }", org.clone()).await;
    results.push(("create API key", graphql_allowed(&key), Role::Admin));
    let owners_key = team
        .owner
        .graphql("mutation($org: ID!) { createApiKey(orgId: $org, name: \"k\") { apiKey { id } } }", org.clone())
        .await;
    let key_id = owners_key["data"]["createApiKey"]["apiKey"]["id"].clone();
    let revoked = client.graphql("mutation($id: ID!) { revokeApiKey(id: $id) { id } }", json!({ "id": key_id })).await;
    results.push(("revoke API key", graphql_allowed(&revoked), Role::Admin));

    let (spare_client, spare) = app.user(&format!("spare-{tag}")).await;
    let invite =
        "mutation($org: ID!, $email: String!) { inviteMember(orgId: $org, email: $email, role: \"viewer\") { id } }";
    let invited = client.graphql(invite, json!({ "org": team.org, "email": spare })).await;
    results.push(("invite member", graphql_allowed(&invited), Role::Admin));
    let invited = if invited.get("errors").is_some() {
        team.owner.graphql(invite, json!({ "org": team.org, "email": spare })).await
    } else {
        invited
    };
    let accepted = spare_client
        .graphql(
            "mutation($id: ID!) { acceptInvitation(id: $id) { role } }",
            json!({ "id": invited["data"]["inviteMember"]["id"] }),
        )
        .await;
    assert_eq!(accepted["data"]["acceptInvitation"]["role"], "viewer", "{accepted}");
    let spare_id = user_id_of(team, &spare).await;
    let changed = client
        .graphql(
            "mutation($org: ID!, $user: ID!) { changeMemberRole(orgId: $org, userId: $user, role: \"member\") { role } }",
            json!({ "org": team.org, "user": spare_id }),
        )
        .await;
    results.push(("change member role", graphql_allowed(&changed), Role::Admin));
    let removed = client
        .graphql(
            "mutation($org: ID!, $user: ID!) { removeMember(orgId: $org, userId: $user) }",
            json!({ "org": team.org, "user": spare_id }),
        )
        .await;
    results.push(("remove member", graphql_allowed(&removed), Role::Admin));
    let rotated = client.graphql("mutation($org: ID!) { rotateWebhookSecret(orgId: $org) }", org.clone()).await;
    results.push(("rotate webhook secret", graphql_allowed(&rotated), Role::Admin));
    results
}

#[tokio::test]
async fn every_role_gets_exactly_its_rights() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Olga", "team.example").await;
        let org = org_of(&owner).await;
        let team = Team { owner, org, site };
        app.collect(pageview(site, "visitor", "https://team.example/")).await.expect(202);
        for role in [Role::Viewer, Role::Member, Role::Admin] {
            let (client, _) = join(&app, &team, &format!("{}-person", role.name()), role).await;
            // Everyone in the org reads.
            client.get(&format!("/api/visitor?siteId={site}")).await.expect(200);
            client.get(&format!("/api/links?siteId={site}")).await.expect(200);
            for (operation, allowed, needed) in try_everything(&app, &team, &client, role.name()).await {
                assert_eq!(allowed, role >= needed, "{} may {operation}: {}", role.name(), role >= needed);
            }
            let deleted =
                client.graphql("mutation($org: ID!) { deleteOrg(orgId: $org) }", json!({ "org": team.org })).await;
            assert!(!graphql_allowed(&deleted), "only owners delete the org");
        }
        for (operation, allowed, needed) in try_everything(&app, &team, &team.owner, "owner").await {
            assert_eq!(allowed, Role::Owner >= needed, "the owner may {operation}");
        }
        app.click("/l/team-example/edit-owner", &[]).await;
        let deleted =
            team.owner.graphql("mutation($org: ID!) { deleteOrg(orgId: $org) }", json!({ "org": team.org })).await;
        assert_eq!(deleted["data"]["deleteOrg"], true, "{deleted}");
        team.owner.get(&format!("/api/visitor?siteId={site}")).await.expect_error(404, "NOT_FOUND");
        // The org's links stop redirecting at once.
        let link =
            app.visit_link(reqwest::Method::GET, "/l/team-example/edit-owner", common::traffic::DESKTOP_UA, &[]).await;
        assert_eq!(link.status.as_u16(), 404);
    }
}

#[tokio::test]
async fn an_org_always_keeps_an_owner() {
    for app in apps().await {
        let team = new_team(&app, "Otto", "otto.example").await;
        let owner_id = owner_id(&team).await;
        let vars = json!({ "org": team.org, "user": owner_id });
        let demote = "mutation($org: ID!, $user: ID!) { changeMemberRole(orgId: $org, userId: $user, role: \"admin\") { role } }";
        let leave = "mutation($org: ID!, $user: ID!) { removeMember(orgId: $org, userId: $user) }";
        assert_eq!(gql_error_code(&team.owner.graphql(demote, vars.clone()).await), "CONFLICT");
        assert_eq!(gql_error_code(&team.owner.graphql(leave, vars.clone()).await), "CONFLICT");

        // An admin can neither demote nor remove an owner, nor make anyone owner.
        let (admin, admin_email) = join(&app, &team, "Ada", Role::Admin).await;
        assert_eq!(gql_error_code(&admin.graphql(demote, vars.clone()).await), "FORBIDDEN");
        assert_eq!(gql_error_code(&admin.graphql(leave, vars.clone()).await), "FORBIDDEN");
        let admin_id = user_id_of(&team, &admin_email).await;
        let promote = "mutation($org: ID!, $user: ID!) { changeMemberRole(orgId: $org, userId: $user, role: \"owner\") { role } }";
        let self_promotion = json!({ "org": team.org, "user": admin_id });
        assert_eq!(gql_error_code(&admin.graphql(promote, self_promotion.clone()).await), "FORBIDDEN");

        // With a second owner, the first may step down.
        let promoted = team.owner.graphql(promote, self_promotion).await;
        assert_eq!(promoted["data"]["changeMemberRole"]["role"], "owner", "{promoted}");
        let stepped_down = team.owner.graphql(demote, vars.clone()).await;
        assert_eq!(stepped_down["data"]["changeMemberRole"]["role"], "admin", "{stepped_down}");

        // Bad input and other orgs.
        let bad_role = json!({ "org": team.org, "user": owner_id });
        let invalid =
            "mutation($org: ID!, $user: ID!) { changeMemberRole(orgId: $org, userId: $user, role: \"king\") { role } }";
        assert_eq!(gql_error_code(&admin.graphql(invalid, bad_role).await), "VALIDATION_ERROR");
        let (stranger, stranger_email) = app.user("Sven").await;
        let add =
            "mutation($org: ID!, $email: String!) { inviteMember(orgId: $org, email: $email) { orgId role status } }";
        let into_foreign = stranger.graphql(add, json!({ "org": team.org, "email": stranger_email })).await;
        assert_eq!(gql_error_code(&into_foreign), "NOT_FOUND");
        // An address with an account and one without get the same answer.
        let unknown = admin.graphql(add, json!({ "org": team.org, "email": "nobody@example.com" })).await;
        let known = admin.graphql(add, json!({ "org": team.org, "email": stranger_email })).await;
        assert_eq!(unknown, known);
        assert_eq!(known["data"]["inviteMember"]["status"], "pending", "{known}");
        let again = admin.graphql(add, json!({ "org": team.org, "email": admin_email })).await;
        assert_eq!(gql_error_code(&again), "CONFLICT");
    }
}

#[tokio::test]
async fn owners_leaving_at_once_leave_one_owner() {
    for app in apps().await {
        let team = new_team(&app, "Olga", "olga.example").await;
        let first = owner_id(&team).await;
        let mut others = Vec::new();
        for name in ["Ona", "Oren", "Osk", "Ove"] {
            let (client, email) = join(&app, &team, name, Role::Owner).await;
            others.push((client, user_id_of(&team, &email).await));
        }
        // All five leave at once. Each checks that another owner remains
        // before it goes, so without a lock several could count the others
        // and all go.
        let leave = "mutation($org: ID!, $user: ID!) { removeMember(orgId: $org, userId: $user) }";
        let leaving = std::iter::once((&team.owner, &first)).chain(others.iter().map(|(client, id)| (client, id)));
        let replies = futures_util::future::join_all(
            leaving.map(|(client, id)| client.graphql(leave, json!({ "org": team.org, "user": id }))),
        )
        .await;
        let left = replies.iter().filter(|reply| reply["data"]["removeMember"] == true).count();
        assert_eq!(left, 4, "{replies:?}");
        let stayed = replies.iter().position(|reply| gql_error_code(reply) == "CONFLICT").expect("one owner stays");
        let remaining = if stayed == 0 { &team.owner } else { &others[stayed - 1].0 };
        let members =
            remaining.graphql("query($org: ID!) { members(orgId: $org) { role } }", json!({ "org": team.org })).await;
        assert_eq!(members["data"]["members"], json!([{ "role": "owner" }]), "{members}");
    }
}

#[tokio::test]
async fn an_owner_leaving_while_the_other_deletes_their_account_leaves_no_org_ownerless() {
    use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
    for app in apps().await {
        for round in 0..30 {
            let team = new_team(&app, &format!("Dee{round}"), &format!("dee{round}.example")).await;
            let (second, email) = join(&app, &team, &format!("Lee{round}"), Role::Owner).await;
            let second_id = user_id_of(&team, &email).await;
            // Each sees the other as an owner unless they take turns: then
            // the org would be left with no owner at all.
            let leave = "mutation($org: ID!, $user: ID!) { removeMember(orgId: $org, userId: $user) }";
            let (deleted, left) = tokio::join!(
                team.owner.post("/api/auth/delete-user", json!({})),
                second.graphql(leave, json!({ "org": team.org, "user": second_id })),
            );
            deleted.expect(200);
            let org_id: i64 = team.org.parse().unwrap();
            let org = entity::org::Entity::find_by_id(org_id).one(&app.state.db).await.unwrap();
            let owners = entity::member::Entity::find()
                .filter(entity::member::Column::OrgId.eq(org_id))
                .filter(entity::member::Column::Role.eq("owner"))
                .count(&app.state.db)
                .await
                .unwrap();
            if left["data"]["removeMember"] == true {
                assert!(org.is_none(), "both owners went and the org stayed: {left}");
            } else {
                assert_eq!(gql_error_code(&left), "CONFLICT", "{left}");
                assert!(org.is_some() && owners == 1, "the one who stayed owns the org");
            }
        }
    }
}

/// `workspace` answers the site and org a page is about with the viewer's
/// role, its admin-only reads are null below admin, and another org's site,
/// visitor or link is NOT_FOUND, as the same reads are at the top level.
#[tokio::test]
async fn workspace_answers_site_org_and_role_and_hides_what_the_role_may_not_see() {
    const DOCUMENT: &str = "query($site: Int, $vid: String, $link: ID) {
        workspace(siteId: $site, trackerVid: $vid, linkId: $link) {
            site { id } org { id role }
            traffic(timeRange: \"24h\") { pageviews }
            members { email }
            apiKeys { id } invitations { id } webhookSigningSecret destinations { id }
            webhookDeliveries(first: 5) { id }
        }
    }";
    for app in apps().await {
        let (owner, site) = app.user_with_site("Wanda", "workspace.example").await;
        let org = org_of(&owner).await;
        let team = Team { owner, org: org.clone(), site };
        app.collect(pageview(site, "ws-visitor", "https://workspace.example/")).await.expect(202);
        let link = team
            .owner
            .post("/api/links", json!({ "siteId": site, "slug": "ws", "destinationUrl": "https://workspace.example/" }))
            .await;
        let link_id = link.expect(200)["link"]["id"].as_str().unwrap().to_owned();

        for role in [Role::Viewer, Role::Member, Role::Admin] {
            let (client, _) = join(&app, &team, &format!("ws-{}", role.name()), role).await;
            for variables in
                [json!({}), json!({ "site": site }), json!({ "vid": "ws-visitor" }), json!({ "link": link_id })]
            {
                let answer = client.graphql(DOCUMENT, variables.clone()).await;
                let ws = &answer["data"]["workspace"];
                assert!(answer.get("errors").is_none(), "{answer}");
                assert_eq!(ws["site"]["id"], site, "{variables} {answer}");
                assert_eq!(ws["org"], json!({ "id": org, "role": role.name() }));
                assert_eq!(ws["traffic"]["pageviews"], 1);
                assert_eq!(ws["members"].as_array().unwrap().len(), 1 + role as usize + 1, "{answer}");
                for admin_only in ["apiKeys", "invitations", "webhookSigningSecret", "destinations"] {
                    assert_eq!(ws[admin_only].is_null(), role < Role::Admin, "{admin_only} for {role:?}: {answer}");
                }
                assert_eq!(ws["webhookDeliveries"].is_null(), role < Role::Member, "{answer}");
            }
        }

        let (stranger, _) = app.user_with_site("Stranger", "stranger.example").await;
        for variables in [json!({ "site": site }), json!({ "vid": "ws-visitor" }), json!({ "link": link_id })] {
            let answer = stranger.graphql(DOCUMENT, variables.clone()).await;
            assert_eq!(gql_error_code(&answer), "NOT_FOUND", "{variables} {answer}");
            assert!(answer["data"].is_null(), "{answer}");
        }
        // Without a site of their own, `site` is null and the org is theirs.
        let (newcomer, _) = app.user("Newcomer").await;
        let answer = newcomer.graphql(DOCUMENT, json!({})).await;
        let ws = &answer["data"]["workspace"];
        assert!(ws["site"].is_null() && ws["traffic"].is_null() && ws["destinations"].is_null(), "{answer}");
        assert_eq!(ws["org"]["role"], "owner", "{answer}");
        assert_eq!(ws["members"].as_array().unwrap().len(), 1, "{answer}");
    }
}
