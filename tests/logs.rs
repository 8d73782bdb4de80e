//! Secrets never reach the logs: passwords, session tokens, API keys and
//! webhook signing secrets, with every module logging at TRACE.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::{
    io::Write,
    sync::{Arc, Mutex},
};

use serde_json::json;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn secrets_stay_out_of_the_logs() {
    let captured = Captured::default();
    let writer = captured.clone();
    // Installed before the harness's own subscriber, which then stands aside.
    tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_env_filter(tracing_subscriber::EnvFilter::new("trace"))
        .try_init()
        .expect("the first subscriber of this test binary");

    for app in common::apps().await {
        let password = "correct horse battery staple 42";
        let email = common::unique("log") + "@example.com";
        let signed_up = app
            .client()
            .post("/api/auth/sign-up/email", json!({ "name": "Logan", "email": email, "password": password }))
            .await;
        let token = signed_up.expect(200)["token"].as_str().unwrap().to_owned();
        let client = app.client().with_session(token.clone());
        let signed_in =
            app.client().post("/api/auth/sign-in/email", json!({ "email": email, "password": password })).await;
        let second_token = signed_in.expect(200)["token"].as_str().unwrap().to_owned();
        let wrong = app
            .client()
            .post("/api/auth/sign-in/email", json!({ "email": email, "password": "wrong password 99" }))
            .await;
        wrong.expect_error(401, "INVALID_EMAIL_OR_PASSWORD");
        let new_password = "another long passphrase 43";
        client
            .post(
                "/api/auth/change-password",
                json!({ "currentPassword": password, "newPassword": new_password, "revokeOtherSessions": false }),
            )
            .await
            .expect(200);
        let key = client.graphql("mutation { createApiKey(name: \"log\") { key } }", json!({})).await;
        let key = key["data"]["createApiKey"]["key"].as_str().unwrap().to_owned();
        app.client().with_bearer(&key).get("/api/sites").await.expect(200);
        let secret = client.graphql("{ webhookSigningSecret }", json!({})).await;
        let secret = secret["data"]["webhookSigningSecret"].as_str().unwrap().to_owned();
        client.get("/api/profile").await.expect(200);

        let logs = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
        assert!(logs.contains("/api/auth/sign-in/email"), "requests were logged at all");
        for (what, secret) in [
            ("password", password),
            ("wrong password", "wrong password 99"),
            ("new password", new_password),
            ("session token", token.as_str()),
            ("second session token", second_token.as_str()),
            ("API key", key.as_str()),
            ("signing secret", secret.as_str()),
        ] {
            assert!(!logs.contains(secret), "the {what} appears in the logs");
        }
    }
}
