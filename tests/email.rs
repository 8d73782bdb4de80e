//! Email (design §21) through a real SMTP server on a loopback port: the
//! password reset and verification flows, invitations by email, email
//! alerts, retries when the server refuses or hangs, and header injection.
//! Every link in a message is followed over HTTP.

// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    apps_with, gql_error_code,
    smtp::{SmtpServer, smtp_missing, token_of},
    unique,
    web::{expect_page, post_form},
};
use leadtrail::time::HOUR_MS;
use serde_json::json;

/// The path and query of a link to the app.
fn path_of(link: &str) -> String {
    let url = url::Url::parse(link).expect("a link");
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

#[tokio::test]
async fn a_forgotten_password_is_reset_through_the_emailed_link() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    for app in apps_with(|config| smtp.configure(config)).await {
        let (client, email) = app.user("Reset").await;
        // The same answer for an address nobody has.
        let known = app.client().post("/api/auth/request-password-reset", json!({ "email": email })).await;
        let unknown = app
            .client()
            .post("/api/auth/request-password-reset", json!({ "email": format!("{}@example.com", unique("nobody")) }))
            .await;
        assert_eq!(known.expect(200), unknown.expect(200));
        assert_eq!(known.body["status"], true);
        app.client()
            .post("/api/auth/request-password-reset", json!({ "email": "not an address" }))
            .await
            .expect_error(400, "VALIDATION_ERROR");

        let message = smtp.wait_for_message(&email, "Reset your Leadtrail password").await;
        assert_eq!(message.from(), common::smtp::FROM);
        assert_eq!(message.header("To").as_deref(), Some(email.as_str()));
        assert!(message.header("Message-ID").is_some() && message.header("Date").is_some());
        let link = message.link("/reset-password?token=");
        assert!(link.starts_with(&app.base), "{link}");
        assert!(message.html().contains(&link.replace('&', "&amp;")), "{}", message.html());
        assert!(message.text().contains("one hour"));

        // The link opens the form.
        let page = app.client().get(&path_of(&link)).await;
        let html = expect_page(&page, 200);
        assert!(html.contains("Choose a new password") && html.contains("name=\"token\""), "{html}");

        // A short password is refused beside the field, and the link still works.
        let short =
            post_form(&app.client(), "/reset-password", &[("token", &token_of(&link)), ("password", "short")], &[])
                .await;
        assert!(expect_page(&short, 400).contains("New password:"), "{}", short.text);

        let done = post_form(
            &app.client(),
            "/reset-password",
            &[("token", &token_of(&link)), ("password", "a brand new one")],
            &[],
        )
        .await;
        assert_eq!(common::web::location(&done), "/login?reset=1");
        // Every session ended.
        assert_eq!(client.get("/api/auth/get-session").await.expect(200), &serde_json::Value::Null);
        app.client()
            .post("/api/auth/sign-in/email", json!({ "email": email, "password": "correct horse" }))
            .await
            .expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        let signed_in = app
            .client()
            .post("/api/auth/sign-in/email", json!({ "email": email, "password": "a brand new one" }))
            .await;
        assert_eq!(signed_in.expect(200)["user"]["email"], email.as_str());

        // Used once: the API says so on `token`, and the page says so too.
        let again = app
            .client()
            .post("/api/auth/reset-password", json!({ "token": token_of(&link), "newPassword": "yet another one" }))
            .await;
        again.expect_error(400, "VALIDATION_ERROR");
        assert_eq!(again.body["field"], "token");
        assert!(again.text.contains("already used"), "{}", again.text);
        let used_page = expect_page(&app.client().get(&path_of(&link)).await, 400);
        assert!(used_page.contains("already used"), "{used_page}");
        let wrong = app
            .client()
            .post("/api/auth/reset-password", json!({ "token": "made-up", "newPassword": "yet another one" }))
            .await;
        wrong.expect_error(400, "VALIDATION_ERROR");
        assert!(wrong.text.contains("not valid"), "{}", wrong.text);
    }
}

#[tokio::test]
async fn a_reset_link_lapses_after_an_hour_and_only_the_newest_works() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    for app in apps_with(|config| smtp.configure(config)).await {
        let (_, email) = app.user("Lapse").await;
        app.client().post("/api/auth/request-password-reset", json!({ "email": email })).await.expect(200);
        let first = token_of(&smtp.wait_for_message(&email, "Reset").await.link("token="));
        app.client().post("/api/auth/request-password-reset", json!({ "email": email })).await.expect(200);
        let newest = loop {
            let links: Vec<String> = smtp
                .received()
                .into_iter()
                .filter(|m| m.rcpt.contains(&email) && m.subject().contains("Reset"))
                .map(|m| token_of(&m.link("token=")))
                .collect();
            if links.len() == 2 {
                break links[1].clone();
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        let replaced = app
            .client()
            .post("/api/auth/reset-password", json!({ "token": first, "newPassword": "new password 1" }))
            .await;
        replaced.expect_error(400, "VALIDATION_ERROR");

        app.state.delivery.clock.advance(HOUR_MS + 1);
        let lapsed = app
            .client()
            .post("/api/auth/reset-password", json!({ "token": newest, "newPassword": "new password 1" }))
            .await;
        lapsed.expect_error(400, "VALIDATION_ERROR");
        assert!(lapsed.text.contains("expired"), "{}", lapsed.text);
        let page = expect_page(&app.client().get(&format!("/reset-password?token={newest}")).await, 400);
        assert!(page.contains("expired"), "{page}");
    }
}

#[tokio::test]
async fn sign_up_and_change_email_send_a_verification_link() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    for app in apps_with(|config| smtp.configure(config)).await {
        let (client, email) = app.user("Verify").await;
        let session = client.get("/api/auth/get-session").await;
        assert_eq!(session.expect(200)["user"]["emailVerified"], false, "{}", session.text);
        let message = smtp.wait_for_message(&email, "Confirm your email").await;
        let link = message.link("/verify-email?token=");
        let page = expect_page(&app.client().get(&path_of(&link)).await, 200);
        assert!(page.contains("Email confirmed") && page.contains(&email), "{page}");
        let session = client.get("/api/auth/get-session").await;
        assert_eq!(session.expect(200)["user"]["emailVerified"], true);
        // Once only.
        let again = app.client().get(&format!("/api/auth/verify-email?token={}", token_of(&link))).await;
        again.expect_error(400, "VALIDATION_ERROR");
        assert_eq!(again.body["field"], "token");

        // A new address is unverified until its own link is followed.
        let new_email = format!("{}@example.com", unique("moved"));
        client.post("/api/auth/change-email", json!({ "newEmail": new_email })).await.expect(200);
        let session = client.get("/api/auth/get-session").await;
        assert_eq!(session.expect(200)["user"]["emailVerified"], false);
        let link = smtp.wait_for_message(&new_email, "Confirm your email").await.link("/verify-email?token=");
        let verified = app.client().get(&format!("/api/auth/verify-email?token={}", token_of(&link))).await;
        assert_eq!(verified.expect(200)["user"]["emailVerified"], true, "{}", verified.text);
        assert_eq!(verified.body["status"], true);

        // Asking again answers the same for anyone.
        for address in [new_email.as_str(), "someone-else@example.com"] {
            let asked = app.client().post("/api/auth/send-verification-email", json!({ "email": address })).await;
            assert_eq!(asked.expect(200), &json!({ "status": true }));
        }
    }
}

#[tokio::test]
async fn an_emailed_invitation_signs_a_new_person_up_into_the_org() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    for app in apps_with(|config| smtp.configure(config)).await {
        let (owner, site) = app.user_with_site("Owner", &format!("{}.example", unique("inv"))).await;
        let org = common::web::org_of(&owner, site).await;
        let invited = format!("{}@example.com", unique("newcomer"));
        let sent = owner
            .graphql(
                "mutation($o: ID!, $e: String!) { inviteMember(orgId: $o, email: $e, role: \"viewer\") { id } }",
                json!({ "o": org, "e": invited }),
            )
            .await;
        assert!(sent["errors"].is_null(), "{sent}");
        let message = smtp.wait_for_message(&invited, "invites you to").await;
        assert!(message.text().contains("as viewer"), "{}", message.text());
        let link = message.link("/join?token=");

        let page = expect_page(&app.client().get(&path_of(&link)).await, 200);
        assert!(page.contains(&invited) && page.contains("Create the account and join"), "{page}");
        // A short password stays on the page, beside its field.
        let short = post_form(
            &app.client(),
            "/join",
            &[("token", &token_of(&link)), ("intent", "signup"), ("name", "New"), ("password", "short")],
            &[],
        )
        .await;
        assert!(expect_page(&short, 400).contains("Password:"), "{}", short.text);
        let joined = post_form(
            &app.client(),
            "/join",
            &[
                ("token", &token_of(&link)),
                ("intent", "signup"),
                ("name", "New Person"),
                ("password", "a long password"),
            ],
            &[],
        )
        .await;
        assert_eq!(common::web::location(&joined), "/");
        let newcomer = app.client().with_session(joined.session_cookie_value().expect("signed in"));
        let sites = newcomer.get("/api/sites").await;
        assert!(
            sites.text.contains(&format!("\"siteId\":{site}")) || sites.text.contains(&format!("{site}")),
            "{}",
            sites.text
        );
        let members = owner.graphql("query($o: ID!) { members(orgId: $o) { email role } }", json!({ "o": org })).await;
        assert!(
            members["data"]["members"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["email"] == invited.as_str() && m["role"] == "viewer"),
            "{members}"
        );
        let session = newcomer.get("/api/auth/get-session").await;
        assert_eq!(session.expect(200)["user"]["emailVerified"], true);

        // Used: a clear page and a 400 on `token`.
        let used = expect_page(&app.client().get(&path_of(&link)).await, 400);
        assert!(used.contains("already accepted"), "{used}");
        let answer = app
            .client()
            .graphql("query($t: String!) { invitationByToken(token: $t) { id } }", json!({ "t": token_of(&link) }))
            .await;
        assert_eq!(gql_error_code(&answer), "VALIDATION_ERROR");

        // A withdrawn invitation's link stops working.
        let other = format!("{}@example.com", unique("withdrawn"));
        let sent = owner
            .graphql(
                "mutation($o: ID!, $e: String!) { inviteMember(orgId: $o, email: $e) { id } }",
                json!({ "o": org, "e": other }),
            )
            .await;
        let id = sent["data"]["inviteMember"]["id"].as_str().unwrap().to_owned();
        let link = smtp.wait_for_message(&other, "invites you to").await.link("/join?token=");
        owner.graphql("mutation($id: ID!) { cancelInvitation(id: $id) }", json!({ "id": id })).await;
        let page = expect_page(&app.client().get(&path_of(&link)).await, 400);
        assert!(page.contains("withdrawn"), "{page}");

        // Someone signed in with another address cannot take it.
        let third = format!("{}@example.com", unique("third"));
        owner
            .graphql(
                "mutation($o: ID!, $e: String!) { inviteMember(orgId: $o, email: $e) { id } }",
                json!({ "o": org, "e": third }),
            )
            .await;
        let link = smtp.wait_for_message(&third, "invites you to").await.link("/join?token=");
        let (stranger, _) = app.user("Stranger").await;
        let taken = stranger
            .graphql(
                "mutation($t: String!) { acceptInvitationByToken(token: $t) { role } }",
                json!({ "t": token_of(&link) }),
            )
            .await;
        assert_eq!(gql_error_code(&taken), "VALIDATION_ERROR", "{taken}");
        let page = expect_page(&stranger.get(&path_of(&link)).await, 200);
        assert!(page.contains("This invitation is for") && !page.contains("Create the account"), "{page}");

        // The admin's email log lists what went out.
        let log = owner
            .graphql("query($o: ID!) { emailLog(orgId: $o) { kind recipient status } }", json!({ "o": org }))
            .await;
        let rows = log["data"]["emailLog"].as_array().unwrap_or_else(|| panic!("{log}"));
        assert!(
            rows.iter().any(|row| row["recipient"] == invited.as_str()
                && row["status"] == "sent"
                && row["kind"] == "invitation"),
            "{log}"
        );
        let team = expect_page(&owner.get(&format!("/settings/team?site={site}")).await, 200);
        assert!(team.contains("Email log") && team.contains(&invited) && team.contains("sent "), "{team}");
        let (outsider, _) = app.user("Outsider").await;
        let refused = outsider.graphql("query($o: ID!) { emailLog(orgId: $o) { kind } }", json!({ "o": org })).await;
        assert_eq!(gql_error_code(&refused), "NOT_FOUND", "{refused}");
    }
}

#[tokio::test]
async fn invitation_links_for_existing_accounts_lapse_and_verification_leads_back() {
    if smtp_missing() {
        return;
    }
    let smtp = SmtpServer::start(0);
    for app in apps_with(|config| {
        smtp.configure(config);
        config.auth_account_rate_limit_per_minute = 2;
    })
    .await
    {
        let (owner, site) = app.user_with_site("Olga", &format!("{}.example", unique("own"))).await;
        let org = common::web::org_of(&owner, site).await;
        let invite = |email: String| {
            let owner = owner.clone();
            let org = org.clone();
            async move {
                owner
                    .graphql(
                        "mutation($o: ID!, $e: String!) { inviteMember(orgId: $o, email: $e, role: \"member\") { id } }",
                        json!({ "o": org, "e": email }),
                    )
                    .await
            }
        };

        // Someone with an account, signed in with the invited address, joins with one click.
        let (member, email) = app.user("Existing").await;
        invite(email.clone()).await;
        let link = smtp.wait_for_message(&email, "invites you to").await.link("/join?token=");
        let page = expect_page(&member.get(&path_of(&link)).await, 200);
        assert!(page.contains("value=\"accept\"") && !page.contains("Create the account"), "{page}");
        let joined = post_form(&member, "/join", &[("token", &token_of(&link)), ("intent", "accept")], &[]).await;
        assert_eq!(common::web::location(&joined), "/");
        let members = owner.graphql("query($o: ID!) { members(orgId: $o) { email role } }", json!({ "o": org })).await;
        assert!(
            members["data"]["members"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["email"] == email.as_str() && m["role"] == "member")
        );

        // An invitation past its week is a clear page and a 400 on `token`.
        let late = format!("{}@example.com", unique("late"));
        invite(late.clone()).await;
        let link = smtp.wait_for_message(&late, "invites you to").await.link("/join?token=");
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        entity::invitation::Entity::update_many()
            .col_expr(entity::invitation::Column::ExpiresAt, Expr::value(leadtrail::time::now_ms() - 1))
            .filter(entity::invitation::Column::Email.eq(late.as_str()))
            .exec(&app.state.db)
            .await
            .unwrap();
        let page = expect_page(&app.client().get(&path_of(&link)).await, 400);
        assert!(page.contains("expired"), "{page}");
        let answer = app
            .client()
            .graphql(
                "mutation($t: String!) { signUpWithInvitation(token: $t, name: \"Late\", password: \"long enough\") { token } }",
                json!({ "t": token_of(&link) }),
            )
            .await;
        assert_eq!(gql_error_code(&answer), "VALIDATION_ERROR", "{answer}");
        assert_eq!(answer["errors"][0]["extensions"]["field"], "token");

        // A verification asked with a callback path leads back there.
        let (_, address) = app.user("Callback").await;
        smtp.wait_for_message(&address, "Confirm your email").await;
        app.client()
            .post("/api/auth/send-verification-email", json!({ "email": address, "callbackURL": "/settings/account" }))
            .await
            .expect(200);
        let links: Vec<String> = loop {
            let found: Vec<String> = smtp
                .received()
                .into_iter()
                .filter(|m| m.rcpt.contains(&address))
                .map(|m| m.link("/verify-email"))
                .collect();
            if found.len() == 2 {
                break found;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        assert!(links[1].contains("callbackURL=%2Fsettings%2Faccount"), "{}", links[1]);
        let followed = app.client().get(&path_of(&links[1])).await;
        assert_eq!(common::web::location(&followed), "/settings/account");
        // The first link was replaced by the second.
        let replaced = app.client().get(&format!("/api/auth/verify-email?token={}", token_of(&links[0]))).await;
        replaced.expect_error(400, "VALIDATION_ERROR");

        // Reset emails to one address are limited whoever asks.
        let target = app.user("Target").await.1;
        for _ in 0..2 {
            app.client().post("/api/auth/request-password-reset", json!({ "email": target })).await.expect(200);
        }
        let limited = app.client().post("/api/auth/request-password-reset", json!({ "email": target })).await;
        limited.expect_error(429, "RATE_LIMITED");
    }
}
