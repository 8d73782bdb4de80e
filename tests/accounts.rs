//! /api/auth/*: sign-up, sign-in, sessions, account changes, CSRF and rate limits.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use common::{apps, apps_with, unique};
use sea_orm::{ConnectionTrait, DbBackend, Statement};
use serde_json::json;

const PASSWORD: &str = "correct horse";

#[tokio::test]
async fn sign_up_creates_user_org_and_cookie() {
    for app in apps().await {
        let client = app.client();
        let email = format!("{}@Example.com", unique("Ann"));
        let reply = client
            .post("/api/auth/sign-up/email", json!({ "name": "Ann", "email": email, "password": PASSWORD }))
            .await;
        let body = reply.expect(200);
        assert_eq!(body["user"]["name"], "Ann");
        assert_eq!(body["user"]["email"], email.to_lowercase(), "email is stored lower-case");
        assert!(body["user"]["id"].is_string());
        let created_at = body["user"]["createdAt"].as_str().unwrap();
        assert!(created_at.ends_with('Z') && created_at.len() == 24, "ISO with ms: {created_at}");
        let token = body["token"].as_str().unwrap();
        assert!(token.len() >= 43, "256-bit token");

        let cookie = reply.set_cookies().into_iter().find(|c| c.starts_with("session=")).unwrap();
        assert!(cookie.contains(&format!("session={token}")));
        assert!(cookie.contains("HttpOnly"));
        assert!(cookie.contains("SameSite=Lax"));
        assert!(cookie.contains("Path=/"));
        assert!(cookie.contains("Max-Age=604800"), "7 days: {cookie}");
        assert!(!cookie.contains("Secure"), "plain http BASE_URL gets no Secure flag");

        // Only a hash of the token is stored.
        let stored = app
            .state
            .db
            .query_one_raw(Statement::from_string(
                app.state.db.get_database_backend(),
                "SELECT token_hash FROM auth_sessions",
            ))
            .await
            .unwrap()
            .unwrap();
        let hash: String = stored.try_get("", "token_hash").unwrap();
        assert_ne!(hash, token);

        let signed_in = client.clone().with_session(token.to_owned());
        let profile = signed_in.get("/api/profile").await;
        let profile = &profile.expect(200)["profile"];
        assert_eq!(profile["org"]["role"], "owner");
        assert_eq!(profile["name"], "Ann");
    }
}

#[tokio::test]
async fn sign_up_rejects_bad_input() {
    for app in apps().await {
        let client = app.client();
        let path = "/api/auth/sign-up/email";
        let email = format!("{}@example.com", unique("bob"));
        client
            .post(path, json!({ "name": "Bob", "email": email, "password": "short" }))
            .await
            .expect_error(400, "PASSWORD_TOO_SHORT");
        client
            .post(path, json!({ "name": "Bob", "email": email, "password": "x".repeat(129) }))
            .await
            .expect_error(400, "PASSWORD_TOO_LONG");
        client
            .post(path, json!({ "name": "Bob", "email": "not-an-email", "password": PASSWORD }))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        client
            .post(path, json!({ "name": "  ", "email": email, "password": PASSWORD }))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        client.post(path, json!({ "email": email, "password": PASSWORD })).await.expect_error(400, "VALIDATION_ERROR");
        client
            .post(path, json!({ "name": 42, "email": email, "password": PASSWORD }))
            .await
            .expect_error(400, "VALIDATION_ERROR");
        client.post_raw(path, "{\"name\": ").await.expect_error(400, "BAD_REQUEST");
        client.post_raw(path, "[1, 2]").await.expect_error(400, "BAD_REQUEST");

        client.post(path, json!({ "name": "Bob", "email": email, "password": PASSWORD })).await.expect(200);
        client
            .post(path, json!({ "name": "Bob", "email": email.to_uppercase(), "password": PASSWORD }))
            .await
            .expect_error(409, "EMAIL_IN_USE");
    }
}

#[tokio::test]
async fn registration_can_be_disabled() {
    for app in apps_with(|config| config.disable_registration = true).await {
        app.client()
            .post("/api/auth/sign-up/email", json!({ "name": "Eve", "email": "eve@example.com", "password": PASSWORD }))
            .await
            .expect_error(403, "FORBIDDEN");
    }
}

#[tokio::test]
async fn sign_in_checks_credentials_without_telling_which_is_wrong() {
    for app in apps().await {
        let (_, email) = app.user("Cat").await;
        let client = app.client();
        let path = "/api/auth/sign-in/email";
        let wrong_password = client.post(path, json!({ "email": email, "password": "wrong password" })).await;
        wrong_password.expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        let unknown = client.post(path, json!({ "email": "nobody@example.com", "password": PASSWORD })).await;
        unknown.expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        assert_eq!(wrong_password.body, unknown.body, "same body for both failures");
        client.post(path, json!({ "email": email })).await.expect_error(400, "VALIDATION_ERROR");

        let reply = client.post(path, json!({ "email": email.to_uppercase(), "password": PASSWORD })).await;
        assert_eq!(reply.expect(200)["user"]["email"], email);
        let token = reply.session_cookie_value().unwrap();
        client.clone().with_session(token).get("/api/profile").await.expect(200);

        // Without rememberMe the cookie ends with the browser session.
        let reply = client.post(path, json!({ "email": email, "password": PASSWORD, "rememberMe": false })).await;
        reply.expect(200);
        let cookie = reply.set_cookies().into_iter().find(|c| c.starts_with("session=")).unwrap();
        assert!(!cookie.contains("Max-Age"), "{cookie}");
    }
}

#[tokio::test]
async fn sign_out_ends_the_session_server_side() {
    for app in apps().await {
        let (client, _) = app.user("Dan").await;
        let reply = client.post("/api/auth/sign-out", json!({})).await;
        assert_eq!(reply.expect(200), &json!({ "success": true }));
        let cleared = reply.set_cookies().into_iter().find(|c| c.starts_with("session=")).unwrap();
        assert!(cleared.contains("Max-Age=0"), "{cleared}");
        // The old token no longer works, even if a client kept it.
        client.get("/api/profile").await.expect_error(401, "UNAUTHORIZED");
        client.post("/api/auth/sign-out", json!({})).await.expect_error(401, "UNAUTHORIZED");
        app.client().post("/api/auth/sign-out", json!({})).await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn get_session_returns_session_and_user_or_null() {
    for app in apps().await {
        assert_eq!(app.client().get("/api/auth/get-session").await.expect(200), &json!(null));
        let bogus = app.client().with_session("not-a-real-token".to_owned());
        assert_eq!(bogus.get("/api/auth/get-session").await.expect(200), &json!(null));
        let (client, email) = app.user("Eli").await;
        let reply = client.get("/api/auth/get-session").await;
        let body = reply.expect(200);
        assert_eq!(body["user"]["email"], email);
        assert_eq!(body["session"]["userId"], body["user"]["id"]);
        assert!(body["session"]["expiresAt"].is_string());
        // Better Auth's shape: the caller's own token, as the cookie holds it.
        assert_eq!(body["session"]["token"], client.session.clone().unwrap());
    }
}

#[tokio::test]
async fn update_user_renames() {
    for app in apps().await {
        let (client, email) = app.user("Fay").await;
        let reply = client.post("/api/auth/update-user", json!({ "name": "Fay Smith" })).await;
        let user = &reply.expect(200)["user"];
        assert_eq!(user["name"], "Fay Smith");
        assert_eq!(user["email"], email);
        assert!(user["id"].is_string());
        assert_eq!(client.get("/api/profile").await.expect(200)["profile"]["name"], "Fay Smith");
        client.post("/api/auth/update-user", json!({ "name": "" })).await.expect_error(400, "VALIDATION_ERROR");
        client.post("/api/auth/update-user", json!({})).await.expect_error(400, "VALIDATION_ERROR");
        app.client().post("/api/auth/update-user", json!({ "name": "X" })).await.expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn change_email_takes_effect_at_once() {
    for app in apps().await {
        let (client, _) = app.user("Gus").await;
        let (_, taken) = app.user("Hal").await;
        let new_email = format!("{}@example.com", unique("gus-new"));
        let reply = client.post("/api/auth/change-email", json!({ "newEmail": new_email })).await;
        assert_eq!(reply.expect(200), &json!({ "status": true }));
        assert_eq!(client.get("/api/profile").await.expect(200)["profile"]["email"], new_email);
        app.client()
            .post("/api/auth/sign-in/email", json!({ "email": new_email, "password": PASSWORD }))
            .await
            .expect(200);

        client.post("/api/auth/change-email", json!({ "newEmail": taken })).await.expect_error(409, "EMAIL_IN_USE");
        let invalid = client.post("/api/auth/change-email", json!({ "newEmail": "nope" })).await;
        invalid.expect_error(400, "VALIDATION_ERROR");
        assert!(invalid.body["message"].as_str().unwrap().starts_with("newEmail"), "{}", invalid.text);
        client.post("/api/auth/change-email", json!({})).await.expect_error(400, "VALIDATION_ERROR");
        app.client()
            .post("/api/auth/change-email", json!({ "newEmail": new_email }))
            .await
            .expect_error(401, "UNAUTHORIZED");
    }
}

#[tokio::test]
async fn change_password_checks_current_and_can_revoke_sessions() {
    for app in apps().await {
        let (client, email) = app.user("Ida").await;
        let other = app.client().post("/api/auth/sign-in/email", json!({ "email": email, "password": PASSWORD })).await;
        let other = app.client().with_session(other.session_cookie_value().unwrap());
        let path = "/api/auth/change-password";

        client
            .post(path, json!({ "currentPassword": "wrong password", "newPassword": "new password 1" }))
            .await
            .expect_error(400, "INVALID_PASSWORD");
        client
            .post(path, json!({ "currentPassword": PASSWORD, "newPassword": "short" }))
            .await
            .expect_error(400, "PASSWORD_TOO_SHORT");
        client.post(path, json!({ "currentPassword": PASSWORD })).await.expect_error(400, "VALIDATION_ERROR");
        app.client()
            .post(path, json!({ "currentPassword": PASSWORD, "newPassword": "new password 1" }))
            .await
            .expect_error(401, "UNAUTHORIZED");

        let reply = client.post(path, json!({ "currentPassword": PASSWORD, "newPassword": "new password 1" })).await;
        let body = reply.expect(200);
        assert_eq!(body["user"]["email"], email);
        assert_eq!(body["token"], json!(null), "the current session is kept");
        other.get("/api/profile").await.expect(200);
        let sign_in = |password: &'static str| {
            let client = app.client();
            let email = email.clone();
            async move { client.post("/api/auth/sign-in/email", json!({ "email": email, "password": password })).await }
        };
        sign_in(PASSWORD).await.expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        sign_in("new password 1").await.expect(200);

        let reply = client
            .post(
                path,
                json!({ "currentPassword": "new password 1", "newPassword": "new password 2", "revokeOtherSessions": true }),
            )
            .await;
        let token = reply.expect(200)["token"].as_str().unwrap().to_owned();
        assert_eq!(reply.session_cookie_value().as_deref(), Some(token.as_str()));
        other.get("/api/profile").await.expect_error(401, "UNAUTHORIZED");
        client.get("/api/profile").await.expect_error(401, "UNAUTHORIZED");
        app.client().with_session(token).get("/api/profile").await.expect(200);
    }
}

#[tokio::test]
async fn delete_user_removes_account_and_solely_owned_data() {
    for app in apps().await {
        let (client, email) = app.user("Jo").await;
        let site = client.post("/api/sites", json!({ "domain": "jo.example" })).await;
        site.expect(200);
        client
            .post("/api/auth/delete-user", json!({ "password": "wrong password" }))
            .await
            .expect_error(400, "INVALID_PASSWORD");
        app.client().post("/api/auth/delete-user", json!({})).await.expect_error(401, "UNAUTHORIZED");

        let reply = client.post("/api/auth/delete-user", json!({ "password": PASSWORD })).await;
        assert_eq!(reply.expect(200), &json!({ "success": true, "message": "User deleted" }));
        client.get("/api/profile").await.expect_error(401, "UNAUTHORIZED");
        app.client()
            .post("/api/auth/sign-in/email", json!({ "email": email, "password": PASSWORD }))
            .await
            .expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        for table in ["users", "orgs", "members", "sites", "auth_sessions"] {
            assert_eq!(count(&app, table).await, 0, "{table} emptied");
        }
    }
}

#[tokio::test]
async fn delete_user_without_password_needs_a_fresh_session() {
    for app in apps().await {
        let (fresh, _) = app.user("Kim").await;
        fresh.post("/api/auth/delete-user", json!({})).await.expect(200);

        let (stale, _) = app.user("Lee").await;
        let backend = app.state.db.get_database_backend();
        let two_days_ago = leadtrail::time::now_ms() - 2 * leadtrail::time::DAY_MS;
        app.state
            .db
            .execute_raw(Statement::from_string(
                backend,
                format!("UPDATE auth_sessions SET created_at = {two_days_ago}"),
            ))
            .await
            .unwrap();
        stale.post("/api/auth/delete-user", json!({})).await.expect_error(400, "SESSION_EXPIRED");
        stale.post("/api/auth/delete-user", json!({ "password": PASSWORD })).await.expect(200);
    }
}

#[tokio::test]
async fn expired_sessions_are_refused() {
    for app in apps().await {
        let (client, _) = app.user("Max").await;
        let backend = app.state.db.get_database_backend();
        app.state
            .db
            .execute_raw(Statement::from_string(backend, "UPDATE auth_sessions SET expires_at = 1"))
            .await
            .unwrap();
        client.get("/api/profile").await.expect_error(401, "UNAUTHORIZED");
        assert_eq!(count(&app, "auth_sessions").await, 0, "expired session removed");
    }
}

#[tokio::test]
async fn sessions_slide_forward_once_a_day() {
    for app in apps().await {
        let (client, _) = app.user("Ned").await;
        assert!(client.get("/api/profile").await.set_cookies().is_empty(), "no refresh on a new session");
        let backend = app.state.db.get_database_backend();
        let in_five_days = leadtrail::time::now_ms() + 5 * leadtrail::time::DAY_MS;
        app.state
            .db
            .execute_raw(Statement::from_string(
                backend,
                format!("UPDATE auth_sessions SET expires_at = {in_five_days}"),
            ))
            .await
            .unwrap();
        let reply = client.get("/api/profile").await;
        reply.expect(200);
        let cookie = reply.set_cookies().into_iter().find(|c| c.starts_with("session=")).expect("cookie re-sent");
        assert!(cookie.contains("Max-Age=6048") || cookie.contains("Max-Age=6047"), "slid to 7 days: {cookie}");
    }
}

#[tokio::test]
async fn cross_origin_writes_with_the_cookie_are_refused() {
    for app in apps().await {
        let (client, _) = app.user("Oz").await;
        let evil = client.clone().with_origin("https://evil.example");
        evil.post("/api/auth/update-user", json!({ "name": "pwned" })).await.expect_error(403, "INVALID_ORIGIN");
        evil.post("/api/sites", json!({ "domain": "evil.example" })).await.expect_error(403, "INVALID_ORIGIN");
        evil.post("/graphql", json!({ "query": "mutation { signOut { success } }" }))
            .await
            .expect_error(403, "INVALID_ORIGIN");
        assert_eq!(client.get("/api/profile").await.expect(200)["profile"]["name"], "Oz", "nothing changed");
        // Reads are not affected, and neither is our own origin.
        evil.get("/api/profile").await.expect(200);
        let same = client.clone().with_origin(&app.base);
        same.post("/api/auth/update-user", json!({ "name": "Oz 2" })).await.expect(200);
    }
}

#[tokio::test]
async fn credential_endpoints_are_rate_limited_per_ip() {
    for app in apps_with(|config| config.auth_rate_limit_per_minute = 3).await {
        let client = app.client();
        for _ in 0..3 {
            client
                .post("/api/auth/sign-in/email", json!({ "email": "x@example.com", "password": PASSWORD }))
                .await
                .expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        }
        let limited =
            client.post("/api/auth/sign-in/email", json!({ "email": "x@example.com", "password": PASSWORD })).await;
        limited.expect_error(429, "RATE_LIMITED");
        let retry_after: u64 = limited.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
        // Each endpoint has its own budget.
        let email = format!("{}@example.com", unique("rl"));
        client
            .post("/api/auth/sign-up/email", json!({ "name": "R", "email": email, "password": PASSWORD }))
            .await
            .expect(200);
    }
}

async fn count(app: &common::TestApp, table: &str) -> i64 {
    let backend: DbBackend = app.state.db.get_database_backend();
    let row = app
        .state
        .db
        .query_one_raw(Statement::from_string(backend, format!("SELECT COUNT(*) AS n FROM {table}")))
        .await
        .unwrap()
        .unwrap();
    row.try_get("", "n").unwrap()
}
