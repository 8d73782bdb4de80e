//! Login CSRF in a real browser: a page on another site auto-submits a
//! `text/plain` form that smuggles the attacker's credentials as JSON, and
//! fires a `no-cors` fetch with credentials. The server refuses both, so the
//! browser holds no `session` cookie and get-session answers null. Skipped,
//! with a note, when Chromium or ChromeDriver is not installed.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{
    TestApp, apps,
    browser::{browser_missing, serve_page, start_browser},
};
use sea_orm::{ConnectionTrait, Statement};
use serde_json::json;

const PASSWORD: &str = "correct horse";

/// The attacker's page. In a text/plain form body each field is sent as
/// `name=value`, so a name holding the JSON up to a last string and a value
/// closing it make the whole body one JSON object.
fn attack_page(base: &str, email: &str) -> String {
    let credentials = json!({ "email": email, "password": PASSWORD }).to_string();
    let prefix = format!(r#"{},"pad":""#, credentials.trim_end_matches('}'));
    let escape = |text: &str| text.replace('&', "&amp;").replace('\'', "&#39;");
    format!(
        r#"<!doctype html><html><head><title>Free prizes</title></head><body>
<form id="login" method="post" enctype="text/plain" action="{base}/api/auth/sign-in/email">
<input type="hidden" name='{name}' value='"}}'></form>
<script>
fetch("{base}/api/auth/sign-in/email", {{ method: "POST", mode: "no-cors", credentials: "include", body: '{body}' }})
  .catch(function () {{}})
  .finally(function () {{ document.title = "fetched"; document.getElementById("login").submit(); }});
</script></body></html>"#,
        name = escape(&prefix),
        body = escape(&credentials),
    )
}

async fn sessions_of(app: &TestApp, email: &str) -> i64 {
    let backend = app.state.db.get_database_backend();
    let sql =
        format!("SELECT COUNT(*) AS n FROM auth_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = '{email}'");
    let row = app.state.db.query_one_raw(Statement::from_string(backend, sql)).await.unwrap().unwrap();
    row.try_get("", "n").unwrap()
}

#[tokio::test]
async fn a_foreign_page_cannot_sign_the_browser_in() {
    if browser_missing() {
        return;
    }
    for app in apps().await {
        let (_, attacker) = app.user("Mallory").await;
        assert_eq!(sessions_of(&app, &attacker).await, 1, "the attacker's own sign-up");
        // `localhost` and 127.0.0.1 are different sites: the browser sends a
        // foreign Origin and `Sec-Fetch-Site: cross-site`.
        let evil = serve_page(attack_page(&app.base, &attacker)).await.replace("127.0.0.1", "localhost");
        let (_driver, browser) = start_browser(&[]).await;

        browser.goto(&format!("{evil}/")).await.unwrap();
        let action = format!("{}/api/auth/sign-in/email", app.base);
        let mut landed = false;
        for _ in 0..100 {
            if browser.current_url().await.unwrap().as_str() == action {
                landed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(landed, "the forged form was submitted");
        let answer = browser.find(fantoccini::Locator::Css("body")).await.unwrap().text().await.unwrap();
        assert!(answer.contains("INVALID_ORIGIN"), "the server refused the form: {answer}");

        // Neither the form nor the fetch left a cookie or a session behind.
        browser.goto(&format!("{}/api/auth/get-session", app.base)).await.unwrap();
        let session = browser.find(fantoccini::Locator::Css("body")).await.unwrap().text().await.unwrap();
        assert_eq!(session.trim(), "null", "the browser is not signed in");
        let cookies = browser.get_all_cookies().await.unwrap();
        assert!(cookies.iter().all(|cookie| cookie.name() != "session"), "{cookies:?}");
        assert_eq!(sessions_of(&app, &attacker).await, 1, "no session was created for the attacker");
        browser.close().await.ok();
    }
}
