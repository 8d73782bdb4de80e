//! A `graphql-transport-ws` client for subscription tests.
#![allow(dead_code)]

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

use super::TestApp;

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens `/graphql/ws` with an optional session cookie and completes the handshake.
pub async fn connect(app: &TestApp, session: Option<&str>) -> Socket {
    let cookie = session.map(|token| format!("session={token}"));
    let headers: Vec<(&str, &str)> = cookie.iter().map(|cookie| ("cookie", cookie.as_str())).collect();
    connect_with(app, &headers, json!({})).await
}

/// Opens `/graphql/ws` with these upgrade headers and this `connection_init`
/// payload, and completes the handshake.
pub async fn connect_with(app: &TestApp, headers: &[(&str, &str)], params: Value) -> Socket {
    let mut socket = open(app, headers).await;
    socket.send(Message::text(json!({ "type": "connection_init", "payload": params }).to_string())).await.unwrap();
    let ack = next_json(&mut socket).await;
    assert_eq!(ack["type"], "connection_ack", "{ack}");
    socket
}

/// The upgrade alone, before `connection_init`.
pub async fn open(app: &TestApp, headers: &[(&str, &str)]) -> Socket {
    let mut request = format!("{}/graphql/ws", app.base.replace("http://", "ws://")).into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "graphql-transport-ws".parse().unwrap());
    for (name, value) in headers {
        let name = tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap();
        request.headers_mut().insert(name, value.parse().unwrap());
    }
    let (socket, _) = tokio_tungstenite::connect_async(request).await.expect("websocket upgrade");
    socket
}

/// Reads until the server closes the socket, for at most `within`: the
/// close code and reason, or `None` if it stayed open. Messages on the way
/// are returned too.
pub async fn closed_within(socket: &mut Socket, within: std::time::Duration) -> (Option<(u16, String)>, Vec<Value>) {
    let deadline = tokio::time::Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let Ok(message) = tokio::time::timeout_at(deadline, socket.next()).await else { return (None, seen) };
        match message {
            Some(Ok(Message::Text(text))) => seen.push(serde_json::from_str(&text).unwrap()),
            Some(Ok(Message::Close(frame))) => {
                return (Some(frame.map_or((1005, String::new()), |f| (f.code.into(), f.reason.to_string()))), seen);
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return (Some((1006, String::new())), seen),
        }
    }
}

pub async fn subscribe(socket: &mut Socket, id: &str, query: &str, variables: Value) {
    let message = json!({ "id": id, "type": "subscribe", "payload": { "query": query, "variables": variables } });
    socket.send(Message::text(message.to_string())).await.unwrap();
}

/// The next JSON message, within five seconds.
pub async fn next_json(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(std::time::Duration::from_secs(5), socket.next())
            .await
            .expect("message in time")
            .unwrap()
            .unwrap();
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).unwrap();
        }
    }
}
