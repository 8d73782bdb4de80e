//! A `graphql-transport-ws` client for subscription tests.
#![allow(dead_code)]

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};

use super::TestApp;

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens `/graphql/ws` with an optional session cookie and completes the handshake.
pub async fn connect(app: &TestApp, session: Option<&str>) -> Socket {
    let mut request = format!("{}/graphql/ws", app.base.replace("http://", "ws://")).into_client_request().unwrap();
    request.headers_mut().insert("sec-websocket-protocol", "graphql-transport-ws".parse().unwrap());
    if let Some(token) = session {
        request.headers_mut().insert("cookie", format!("session={token}").parse().unwrap());
    }
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("websocket upgrade");
    socket.send(Message::text(json!({ "type": "connection_init" }).to_string())).await.unwrap();
    assert_eq!(next_json(&mut socket).await["type"], "connection_ack");
    socket
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
