//! A local webhook receiver for the alert tests: `{base}/hook/<behaviour>`
//! records every request and answers as its behaviour says.
#![allow(dead_code)]

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    Router,
    body::Bytes,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
};
use base64::{Engine, engine::general_purpose::STANDARD};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub raw: String,
}

impl Received {
    pub fn id(&self) -> String {
        self.headers["webhook-id"].to_str().unwrap().to_owned()
    }
    pub fn body(&self) -> Value {
        serde_json::from_str(&self.raw).unwrap()
    }
}

#[derive(Clone, Default)]
pub struct Inbox {
    received: Arc<Mutex<Vec<Received>>>,
    /// Requests per behaviour, for the ones that change their answer.
    calls: Arc<Mutex<HashMap<String, usize>>>,
}

impl Inbox {
    pub fn at(&self, path: &str) -> Vec<Received> {
        self.received.lock().unwrap().iter().filter(|r| r.path == path).cloned().collect()
    }
    pub fn all(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

async fn receive(
    State(inbox): State<Inbox>,
    Path(behaviour): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = String::from_utf8_lossy(&body).into_owned();
    let calls = {
        let mut calls = inbox.calls.lock().unwrap();
        let count = calls.entry(behaviour.clone()).or_default();
        *count += 1;
        *count
    };
    inbox.received.lock().unwrap().push(Received { path: behaviour.clone(), headers, raw });
    match behaviour.as_str() {
        "gone" => (StatusCode::GONE, "gone").into_response(),
        "bad" => (StatusCode::BAD_REQUEST, "no").into_response(),
        "broken" => (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
        "busy" => (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "3600")], "later").into_response(),
        // Fails twice, then takes it.
        "flaky" if calls <= 2 => (StatusCode::SERVICE_UNAVAILABLE, "not now").into_response(),
        // Fails once, then takes it.
        "hiccup" if calls == 1 => (StatusCode::SERVICE_UNAVAILABLE, "not now").into_response(),
        _ => (StatusCode::OK, "ok").into_response(),
    }
}

/// A local receiver on a free port: `{base}/hook/<behaviour>`.
pub async fn receiver() -> (String, Inbox) {
    let inbox = Inbox::default();
    let router = Router::new().route("/hook/{behaviour}", post(receive)).with_state(inbox.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (base, inbox)
}

/// Standard Webhooks, from its specification: base64 of HMAC-SHA256 over
/// `id.timestamp.body`, keyed with the secret's bytes after `whsec_`.
pub fn assert_signed(secret: &str, received: &Received) {
    let id = received.id();
    let timestamp = received.headers["webhook-timestamp"].to_str().unwrap();
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.{}", received.raw).as_bytes());
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    let signatures = received.headers["webhook-signature"].to_str().unwrap();
    assert!(signatures.split(' ').any(|signature| signature == expected), "{signatures} != {expected}");
}
