//! Better Auth's shapes on /api/auth: the user and session fields its clients
//! read, the image, callbackURL, and Better Auth's own client driving every
//! account route (tests/clients/better_auth.mjs).
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{path::Path, process::Command};

use common::{apps, unique};
use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse";

#[track_caller]
fn assert_user(user: &Value, image: Value) {
    for field in ["id", "name", "email", "createdAt", "updatedAt"] {
        assert!(user[field].is_string(), "user.{field}: {user}");
    }
    assert_eq!(user["emailVerified"], false, "{user}");
    assert_eq!(user["image"], image, "{user}");
}

#[tokio::test]
async fn users_and_sessions_have_better_auth_fields() {
    for app in apps().await {
        let client = app.client();
        let email = format!("{}@example.com", unique("ba"));
        let image = "https://images.example/ann.png";
        let body = json!({ "name": "Ann", "email": email, "password": PASSWORD, "image": image });
        let reply = client.post("/api/auth/sign-up/email", body).await;
        let signed_up = reply.expect(200).clone();
        assert_user(&signed_up["user"], json!(image));
        assert_eq!((&signed_up["redirect"], &signed_up["url"]), (&json!(false), &json!(null)));
        let client = client.with_session(reply.session_cookie_value().unwrap());

        let reply = client.post("/api/auth/sign-in/email", json!({ "email": email, "password": PASSWORD })).await;
        let signed_in = reply.expect(200);
        assert_user(&signed_in["user"], json!(image));
        assert_eq!(signed_in["redirect"], false);

        let current = client.get("/api/auth/get-session").await.expect(200).clone();
        assert_user(&current["user"], json!(image));
        let session = &current["session"];
        for field in ["id", "token", "userId", "createdAt", "updatedAt", "expiresAt"] {
            assert!(session[field].is_string(), "session.{field}: {session}");
        }
        // Present in Better Auth's shape, but no IP address is stored (design §14).
        assert!(session.get("ipAddress").is_some_and(Value::is_null), "session.ipAddress: {session}");
        assert_eq!(session["token"].as_str(), client.session.as_deref(), "the caller's own token");
        assert_eq!(session["updatedAt"], session["createdAt"], "a new session has not changed");

        // The daily slide of the expiry is a change of the session.
        let backend = app.state.db.get_database_backend();
        let soon = leadtrail::time::now_ms() + leadtrail::time::DAY_MS;
        let sql = format!("UPDATE auth_sessions SET expires_at = {soon}, created_at = created_at - 10");
        app.state.db.execute_raw(Statement::from_string(backend, sql)).await.unwrap();
        client.get("/api/profile").await.expect(200);
        let slid = client.get("/api/auth/get-session").await.expect(200)["session"].clone();
        assert!(slid["updatedAt"].as_str() > slid["createdAt"].as_str(), "{slid}");
    }
}

#[tokio::test]
async fn update_user_stores_the_image() {
    for app in apps().await {
        let (client, email) = app.user("Ida").await;
        let path = "/api/auth/update-user";
        let image = "https://images.example/ida.png";
        let before = client.get("/api/auth/get-session").await.expect(200)["user"].clone();
        assert_user(&before, json!(null));

        let updated = client.post(path, json!({ "image": image })).await.expect(200)["user"].clone();
        assert_user(&updated, json!(image));
        assert_eq!((updated["name"].as_str(), updated["email"].as_str()), (Some("Ida"), Some(email.as_str())));
        assert!(updated["updatedAt"].as_str() >= before["updatedAt"].as_str());
        let stored = client.get("/api/auth/get-session").await.expect(200)["user"].clone();
        assert_eq!(stored["image"], image, "stored, not just echoed");

        // A name alone keeps the image; null removes it.
        let renamed = client.post(path, json!({ "name": "Ida B" })).await.expect(200)["user"].clone();
        assert_eq!((renamed["name"].as_str(), renamed["image"].as_str()), (Some("Ida B"), Some(image)));
        let cleared = client.post(path, json!({ "image": null })).await.expect(200)["user"].clone();
        assert_eq!(cleared["image"], json!(null));

        for bad in ["javascript:alert(1)", "data:image/png;base64,AAAA", "https://a b.example/x.png"] {
            client.post(path, json!({ "image": bad })).await.expect_error(400, "VALIDATION_ERROR");
        }
        client.post(path, json!({})).await.expect_error(400, "VALIDATION_ERROR");
        client.post(path, json!({ "name": null })).await.expect_error(400, "VALIDATION_ERROR");
        assert_eq!(client.get("/api/auth/get-session").await.expect(200)["user"]["image"], json!(null));
    }
}

#[tokio::test]
async fn a_same_site_callback_url_is_answered_and_others_are_refused() {
    for app in apps().await {
        let (_, email) = app.user("Cal").await;
        let sign_in = |callback: &str| json!({ "email": email, "password": PASSWORD, "callbackURL": callback });
        let client = app.client();
        let absolute = format!("{}/dashboard?tab=1", app.base);
        for callback in ["/dashboard", "/", "/a/b?c=d#e", absolute.as_str()] {
            let reply = client.post("/api/auth/sign-in/email", sign_in(callback)).await;
            let body = reply.expect(200);
            assert_eq!((&body["redirect"], &body["url"]), (&json!(true), &json!(callback)), "{callback}");
            assert!(reply.session_cookie_value().is_some());
        }
        let sign_up = json!({
            "name": "Cy", "email": format!("{}@example.com", unique("cy")), "password": PASSWORD, "callbackURL": "/welcome",
        });
        let body = client.post("/api/auth/sign-up/email", sign_up).await.expect(200).clone();
        assert_eq!((&body["redirect"], &body["url"]), (&json!(true), &json!("/welcome")));

        let foreign = [
            "https://evil.example/",
            "//evil.example/x",
            "/\\evil.example",
            "/\t/evil.example",
            "javascript:alert(1)",
            "http://127.0.0.1.evil.example/",
        ];
        for callback in foreign {
            let reply = client.post("/api/auth/sign-in/email", sign_in(callback)).await;
            reply.expect_error(400, "VALIDATION_ERROR");
            assert!(reply.body["message"].as_str().unwrap().starts_with("callbackURL"), "{}", reply.text);
            assert!(!reply.text.contains("evil.example"), "a foreign callbackURL is never echoed: {}", reply.text);
            assert!(reply.session_cookie_value().is_none(), "no sign-in with a refused callbackURL");
        }
    }
}

#[tokio::test]
async fn better_auth_client_drives_every_account_route() {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    if !clients.join("node_modules/better-auth").is_dir() {
        println!("SKIPPED: tests/clients/node_modules is missing; run `npm ci --prefix tests/clients`");
        return;
    }
    for app in apps().await {
        let mut command = Command::new("node");
        command.arg(clients.join("better_auth.mjs")).arg(&app.base).current_dir(&clients);
        // The server runs on this test's runtime; wait for node off it.
        let output = match tokio::task::spawn_blocking(move || command.output()).await.unwrap() {
            Ok(output) => output,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                println!("SKIPPED: node is not installed");
                return;
            }
            Err(err) => panic!("running node: {err}"),
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "[{}] better_auth.mjs failed\n{stdout}\n{stderr}", app.backend);
        assert!(stdout.contains("all steps passed"), "{stdout}");
        assert_eq!(app.state.db.query_all_raw(users(&app)).await.unwrap().len(), 0, "deleteUser removed the user");
    }
}

fn users(app: &common::TestApp) -> Statement {
    Statement::from_string(app.state.db.get_database_backend(), "SELECT id FROM users")
}
