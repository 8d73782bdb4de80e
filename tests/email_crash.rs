//! The email outbox survives the process dying mid-send: a message the
//! worker had claimed and was handing to the SMTP server when SIGKILL came
//! is sent after the restart, once.
#![allow(clippy::unwrap_used)]

mod common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use common::{
    process::{launch_with, signal, wait},
    smtp::{FROM, SmtpServer, smtp_missing},
    unique,
};
use serde_json::json;

#[tokio::test]
async fn a_message_in_flight_at_sigkill_is_sent_after_the_restart_once() {
    if smtp_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let database_url = format!("sqlite://{}?mode=rwc", dir.path().join("crash.db").display());
    // A server that takes the connection and never answers: the send is in
    // flight, claimed and committed, when the process dies.
    let wedged = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let wedged_url = format!("smtp://127.0.0.1:{}", wedged.local_addr().unwrap().port());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = wedged.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            held.push(socket);
        }
    });
    let settings = |url: &str| {
        vec![("SMTP_URL", url.to_owned()), ("EMAIL_FROM", FROM.to_owned()), ("SMTP_TIMEOUT_SECS", "2".to_owned())]
    };
    let env = settings(&wedged_url);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (child, base) = launch_with(&database_url, &env).await;
    let email = format!("{}@example.com", unique("crash"));
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/auth/sign-up/email"))
        .json(&json!({ "name": "Crash", "email": email, "password": "correct horse" }))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    for _ in 0..200 {
        if connections.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(connections.load(Ordering::SeqCst) > 0, "the worker was sending");
    signal(&child, "KILL");
    wait(child).await;

    let smtp = SmtpServer::start(0);
    let env = settings(&smtp.url());
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (child, _) = launch_with(&database_url, &env).await;
    // Claimed again once the dead worker's lease lapses (about 11 s here).
    let mut sent = Vec::new();
    for _ in 0..600 {
        sent = smtp.received().into_iter().filter(|m| m.rcpt.contains(&email)).collect();
        if !sent.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sent.len(), 1, "sent after the restart");
    assert!(sent[0].subject().contains("Confirm your email"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let sent = smtp.received().into_iter().filter(|m| m.rcpt.contains(&email)).count();
    assert_eq!(sent, 1, "once");
    signal(&child, "TERM");
    wait(child).await;
}
