//! A GraphQL socket holds access only as long as the credential behind it:
//! each way access ends (sign-out, a password change, a revoked key, a
//! changed role, a removal from the org) closes it at once, on the instance
//! where it happened and on every other; an operation started after the
//! credential went is refused; a running subscription stops pushing when
//! the viewer can no longer read its site. Sockets also authenticate by
//! `connectionParams`, as Apollo and urql send them.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Client, TestApp, apps, invite_and_accept, traffic::pageview, ws};
use futures_util::SinkExt;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

const LIVE: &str = "subscription($site: Int!) { liveVisitors(siteId: $site) { trackerVid page } }";
/// Well within the promise ("at once"), with room for a loaded CI machine.
const AT_ONCE: Duration = Duration::from_secs(3);

async fn socket_for(app: &TestApp, client: &Client) -> ws::Socket {
    ws::connect(app, Some(client.session.as_deref().unwrap())).await
}

async fn org_of_owner(owner: &Client) -> String {
    owner.graphql("{ orgs { id } }", json!({})).await["data"]["orgs"][0]["id"].as_str().unwrap().to_owned()
}

/// A member (with `role`) of `owner`'s org, and their user id.
async fn member(app: &TestApp, owner: &Client, role: &str, name: &str) -> (Client, String) {
    let (client, email) = app.user(name).await;
    let joined = invite_and_accept(owner, &client, &org_of_owner(owner).await, &email, role).await;
    (client, joined["data"]["acceptInvitation"]["userId"].as_str().unwrap().to_owned())
}

#[track_caller]
fn assert_forbidden(close: Option<(u16, String)>, what: &str) {
    let (code, _) = close.unwrap_or_else(|| panic!("{what}: the socket stayed open"));
    assert_eq!(code, 4403, "{what}");
}

#[tokio::test]
async fn every_way_access_ends_closes_the_socket_at_once() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Sol", "sol.example").await;
        let org = org_of_owner(&owner).await;

        // Sign-out.
        let (leaver, _) = app.user("Lea").await;
        let mut socket = socket_for(&app, &leaver).await;
        leaver.post("/api/auth/sign-out", json!({})).await.expect(200);
        assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "sign-out");

        // A password change.
        let (changer, _) = app.user("Cam").await;
        let mut socket = socket_for(&app, &changer).await;
        changer
            .post(
                "/api/auth/change-password",
                json!({ "currentPassword": "correct horse", "newPassword": "battery staple" }),
            )
            .await
            .expect(200);
        assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "password change");

        // A revoked API key, by bearer on the upgrade.
        let created =
            owner.graphql("mutation { createApiKey(name: \"socket\") { key apiKey { id } } }", json!({})).await;
        let (key, key_id) = (&created["data"]["createApiKey"]["key"], &created["data"]["createApiKey"]["apiKey"]["id"]);
        let bearer = format!("Bearer {}", key.as_str().unwrap());
        let mut socket = ws::connect_with(&app, &[("authorization", &bearer)], json!({})).await;
        owner.graphql("mutation($id: ID!) { revokeApiKey(id: $id) { id } }", json!({ "id": key_id })).await;
        assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "key revocation");

        // A changed role.
        let (demoted, demoted_id) = member(&app, &owner, "admin", "Dee").await;
        let mut socket = socket_for(&app, &demoted).await;
        let change =
            "mutation($o: ID!, $u: ID!) { changeMemberRole(orgId: $o, userId: $u, role: \"viewer\") { role } }";
        owner.graphql(change, json!({ "o": org, "u": demoted_id })).await;
        assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "role change");

        // A removal from the org, with a subscription running: it pushes
        // events until then, and nothing after.
        let (removed, removed_id) = member(&app, &owner, "viewer", "Rex").await;
        let mut socket = socket_for(&app, &removed).await;
        ws::subscribe(&mut socket, "live", LIVE, json!({ "site": site })).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        app.collect(pageview(site, "before", "https://sol.example/before")).await.expect(202);
        let before = ws::next_json(&mut socket).await;
        assert_eq!(before["payload"]["data"]["liveVisitors"]["trackerVid"], "before", "{before}");
        let remove = "mutation($o: ID!, $u: ID!) { removeMember(orgId: $o, userId: $u) }";
        owner.graphql(remove, json!({ "o": org, "u": removed_id })).await;
        app.collect(pageview(site, "after", "https://sol.example/after")).await.expect(202);
        let (close, seen) = ws::closed_within(&mut socket, AT_ONCE).await;
        assert_forbidden(close, "removal");
        assert!(
            seen.iter().all(|message| message["payload"]["data"]["liveVisitors"]["trackerVid"] != "after"),
            "{seen:?}"
        );
    }
}

#[tokio::test]
async fn an_operation_started_after_the_credential_went_is_refused() {
    for app in apps().await {
        let (client, site) = app.user_with_site("Ora", "ora.example").await;
        let mut socket = socket_for(&app, &client).await;
        // The session ends without any signal (as an expiry would).
        let token = client.session.clone().unwrap();
        entity::auth_session::Entity::delete_many()
            .filter(entity::auth_session::Column::TokenHash.eq(leadtrail::auth::token::hash_token(&token)))
            .exec(&app.state.db)
            .await
            .unwrap();
        ws::subscribe(&mut socket, "late", LIVE, json!({ "site": site })).await;
        let (close, seen) = ws::closed_within(&mut socket, AT_ONCE).await;
        assert_forbidden(close, "an operation after the session ended");
        assert!(seen.iter().all(|message| message["type"] != "next"), "{seen:?}");
    }
}

#[tokio::test]
async fn an_open_socket_is_checked_again_without_any_signal() {
    for app in apps().await {
        let (client, _) = app.user("Per").await;
        let mut socket = socket_for(&app, &client).await;
        let token = client.session.clone().unwrap();
        entity::auth_session::Entity::delete_many()
            .filter(entity::auth_session::Column::TokenHash.eq(leadtrail::auth::token::hash_token(&token)))
            .exec(&app.state.db)
            .await
            .unwrap();
        let within = leadtrail::graphql::socket::RECHECK + Duration::from_secs(3);
        assert_forbidden(ws::closed_within(&mut socket, within).await.0, "the periodic check");
    }
}

#[tokio::test]
async fn a_subscription_stops_when_its_site_is_no_longer_readable() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Uma", "uma.example").await;
        let (viewer, viewer_id) = member(&app, &owner, "viewer", "Vic").await;
        let mut socket = socket_for(&app, &viewer).await;
        ws::subscribe(&mut socket, "live", LIVE, json!({ "site": site })).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The membership goes behind the service's back: no signal, so only
        // the subscription's own check can stop it.
        entity::member::Entity::delete_many()
            .filter(entity::member::Column::UserId.eq(viewer_id.parse::<i64>().unwrap()))
            .exec(&app.state.db)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(2_100)).await;
        app.collect(pageview(site, "unseen", "https://uma.example/")).await.expect(202);
        let ended = ws::next_json(&mut socket).await;
        assert_eq!(ended, json!({ "id": "live", "type": "complete" }), "the stream ends instead of pushing");
    }
}

#[tokio::test]
async fn sockets_authenticate_by_connection_params() {
    for app in apps().await {
        let (owner, site) = app.user_with_site("Ada", "ada.example").await;
        let created = owner.graphql("mutation { createApiKey(name: \"apollo\") { key } }", json!({})).await;
        let key = created["data"]["createApiKey"]["key"].as_str().unwrap().to_owned();
        let session = owner.session.clone().unwrap();
        let shapes = [
            json!({ "authorization": format!("Bearer {key}") }),
            json!({ "headers": { "Authorization": format!("Bearer {key}") } }),
            json!({ "cookie": format!("session={session}") }),
            json!({ "session": session }),
        ];
        for (index, params) in shapes.into_iter().enumerate() {
            let mut socket = ws::connect_with(&app, &[], params.clone()).await;
            ws::subscribe(&mut socket, "live", LIVE, json!({ "site": site })).await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            let vid = format!("params-{index}");
            app.collect(pageview(site, &vid, "https://ada.example/")).await.expect(202);
            let next = ws::next_json(&mut socket).await;
            assert_eq!(next["payload"]["data"]["liveVisitors"]["trackerVid"], vid, "{params}: {next}");
        }

        // A credential that does not resolve refuses the connection.
        let mut socket = ws::open(&app, &[]).await;
        let init = json!({ "type": "connection_init", "payload": { "authorization": "Bearer lt_not-a-key" } });
        socket.send(Message::text(init.to_string())).await.unwrap();
        let (close, _) = ws::closed_within(&mut socket, AT_ONCE).await;
        assert_eq!(close.map(|(code, _)| code), Some(4403));
    }
}

/// Revoked on one instance, the socket open on another closes too.
#[tokio::test]
async fn access_ends_on_every_instance() {
    let Some(apps) = common::postgres_instances(2).await else { return };
    let (owner, _) = apps[0].user_with_site("Ivo", "ivo.example").await;
    let org = org_of_owner(&owner).await;
    let elsewhere = |client: &Client| apps[1].client().with_session(client.session.clone().unwrap());

    let (leaver, _) = apps[0].user("Len").await;
    let mut socket = socket_for(&apps[1], &elsewhere(&leaver)).await;
    leaver.post("/api/auth/sign-out", json!({})).await.expect(200);
    assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "sign-out elsewhere");

    let (changer, _) = apps[0].user("Cy").await;
    let mut socket = socket_for(&apps[1], &elsewhere(&changer)).await;
    changer
        .post(
            "/api/auth/change-password",
            json!({ "currentPassword": "correct horse", "newPassword": "battery staple" }),
        )
        .await
        .expect(200);
    assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "password change elsewhere");

    let created = owner.graphql("mutation { createApiKey(name: \"far\") { key apiKey { id } } }", json!({})).await;
    let bearer = format!("Bearer {}", created["data"]["createApiKey"]["key"].as_str().unwrap());
    let mut socket = ws::connect_with(&apps[1], &[("authorization", &bearer)], json!({})).await;
    let key_id: &Value = &created["data"]["createApiKey"]["apiKey"]["id"];
    owner.graphql("mutation($id: ID!) { revokeApiKey(id: $id) { id } }", json!({ "id": key_id })).await;
    assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "key revocation elsewhere");

    let (demoted, demoted_id) = member(&apps[0], &owner, "admin", "Dov").await;
    let mut socket = socket_for(&apps[1], &elsewhere(&demoted)).await;
    let change = "mutation($o: ID!, $u: ID!) { changeMemberRole(orgId: $o, userId: $u, role: \"viewer\") { role } }";
    owner.graphql(change, json!({ "o": org, "u": demoted_id })).await;
    assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "role change elsewhere");

    let (removed, removed_id) = member(&apps[0], &owner, "viewer", "Ren").await;
    let mut socket = socket_for(&apps[1], &elsewhere(&removed)).await;
    let remove = "mutation($o: ID!, $u: ID!) { removeMember(orgId: $o, userId: $u) }";
    owner.graphql(remove, json!({ "o": org, "u": removed_id })).await;
    assert_forbidden(ws::closed_within(&mut socket, AT_ONCE).await.0, "removal elsewhere");
}

#[tokio::test]
async fn a_socket_lives_no_longer_than_its_lifetime() {
    for app in common::apps_with(|config| config.ws_max_lifetime_secs = 1).await {
        let (client, _) = app.user("Tim").await;
        let mut socket = socket_for(&app, &client).await;
        let (close, _) = ws::closed_within(&mut socket, Duration::from_secs(4)).await;
        assert_eq!(close.map(|(code, _)| code), Some(4000));
    }
}
