//! `/graphql/ws`: GraphQL over a WebSocket (`graphql-transport-ws`, and the
//! older `graphql-ws`), with access that ends when the credential does.
//!
//! The caller comes from the upgrade request (cookie or bearer key) or, for
//! clients that cannot set headers on a socket (Apollo, urql), from the
//! `connectionParams` of `connection_init`. A socket outlives any single
//! request, so its credential is checked again:
//! - before every operation the client starts;
//! - every `RECHECK` while the socket is open;
//! - at once when any instance signals that access ended (sign-out, a
//!   password change, a revoked key, a changed role, a removal from the org):
//!   the socket closes with 4403;
//! - and the socket closes after `SOCKET_LIFETIME` whatever happens, so a
//!   client reconnects and is authenticated afresh.
//!
//! Running subscriptions also check the viewer's access to their site before
//! they push an event (`live`).

use std::{
    str::FromStr,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use async_graphql::{
    Data,
    http::{ClientMessage, WebSocket as GraphqlSocket, WebSocketProtocols, WsMessage},
};
use axum::{
    extract::ws::{CloseFrame, Message, WebSocket},
    http::{HeaderMap, header},
};
use futures_util::{SinkExt, StreamExt, future};
use tokio::sync::{Mutex, Notify, broadcast::error::RecvError};

use super::{AppSchema, executor};
use crate::{
    auth::{RequestContext, Viewer},
    cluster::AccessRevoked,
    request::credential::Credential,
    state::AppState,
};

/// How often an open socket's credential is checked again.
pub const RECHECK: Duration = Duration::from_secs(15);
/// The close code when access ended (graphql-ws's "Forbidden").
const CLOSE_FORBIDDEN: u16 = 4403;
/// The close code when the socket's lifetime is over; clients reconnect.
const CLOSE_LIFETIME: u16 = 4000;

/// The subprotocol the client asked for, if this server speaks it.
pub fn protocol(headers: &HeaderMap) -> Option<WebSocketProtocols> {
    headers
        .get(header::SEC_WEBSOCKET_PROTOCOL)
        .and_then(|value| value.to_str().ok())
        .and_then(|protocols| protocols.split(',').find_map(|p| WebSocketProtocols::from_str(p.trim()).ok()))
}

/// What a socket's access rests on, once known.
struct Access {
    app: AppState,
    /// The credential, and the caller it stood for when the socket took it.
    held: Mutex<Option<(Credential, Viewer)>>,
    /// Notified when a check before an operation finds access gone.
    lost: Notify,
    /// `connection_init` carried a credential that does not resolve.
    refused: AtomicBool,
}

impl Access {
    /// Whether the credential still stands for the same caller.
    async fn holds(&self) -> bool {
        let Some((credential, viewer)) = self.held.lock().await.clone() else { return true };
        match credential.resolve(&self.app.db).await {
            Ok(Some(found)) => same_caller(&found.viewer, &viewer),
            Ok(None) => false,
            // A database that does not answer ends nothing; the next check decides.
            Err(_) => true,
        }
    }

    /// Whether a signal concerns this socket's caller.
    async fn revoked_by(&self, signal: AccessRevoked) -> bool {
        let held = self.held.lock().await;
        let Some((_, viewer)) = held.as_ref() else { return false };
        match (signal, viewer) {
            (AccessRevoked::Session { session_id }, Viewer::User { session_id: own, .. }) => session_id == *own,
            (AccessRevoked::User { user_id }, Viewer::User { user_id: own, .. }) => user_id == *own,
            (AccessRevoked::ApiKey { key_id }, Viewer::ApiKey { key_id: own, .. }) => key_id == *own,
            (AccessRevoked::Org { org_id }, Viewer::ApiKey { org_id: own, .. }) => org_id == *own,
            _ => false,
        }
    }
}

fn same_caller(now: &Viewer, then: &Viewer) -> bool {
    match (now, then) {
        (Viewer::User { session_id: a, .. }, Viewer::User { session_id: b, .. }) => a == b,
        (Viewer::ApiKey { key_id: a, .. }, Viewer::ApiKey { key_id: b, .. }) => a == b,
        _ => false,
    }
}

/// Serves one socket until it closes.
pub async fn serve(
    socket: WebSocket,
    schema: AppSchema,
    app: AppState,
    ctx: RequestContext,
    headers: HeaderMap,
    protocol: WebSocketProtocols,
) {
    let upgrade_credential = Credential::from_headers(&headers).zip(ctx.viewer.clone());
    let access = Arc::new(Access {
        app: app.clone(),
        held: Mutex::new(upgrade_credential),
        lost: Notify::new(),
        refused: AtomicBool::new(false),
    });
    let (mut sink, source) = socket.split();

    // Every operation the client starts waits for a fresh check.
    let checker = access.clone();
    let incoming = source
        .take_while(|message| future::ready(message.is_ok()))
        .filter_map(|message| {
            future::ready(match message {
                Ok(Message::Text(text)) => Some(text.as_bytes().to_vec()),
                Ok(Message::Binary(bytes)) => Some(bytes.to_vec()),
                _ => None,
            })
        })
        .filter_map(move |bytes| {
            let checker = checker.clone();
            async move {
                let message = ClientMessage::from_bytes(bytes);
                if matches!(message, Ok(ClientMessage::Start { .. })) && !checker.holds().await {
                    checker.lost.notify_one();
                    return None;
                }
                Some(message)
            }
        });

    let initializer = access.clone();
    let init = move |params: serde_json::Value| async move {
        connection_data(&initializer, ctx, &params).await.map_err(async_graphql::Error::new)
    };
    let operations = GraphqlSocket::from_message_stream(schema, incoming, protocol).on_connection_init(init);
    tokio::pin!(operations);

    let mut signals = app.cluster.access_signals();
    let mut recheck = tokio::time::interval_at(tokio::time::Instant::now() + RECHECK, RECHECK);
    let lifetime = tokio::time::sleep(Duration::from_secs(app.config.ws_max_lifetime_secs.max(1)));
    tokio::pin!(lifetime);
    let close = loop {
        tokio::select! {
            outgoing = operations.next() => match outgoing {
                Some(WsMessage::Text(text)) => {
                    if sink.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                // graphql-transport-ws closes a refused `connection_init`
                // with 4403, where async-graphql says 1002.
                Some(WsMessage::Close(code, reason)) => {
                    let code = if access.refused.load(Ordering::Relaxed) { CLOSE_FORBIDDEN } else { code };
                    break Some((code, reason));
                }
                None => break None,
            },
            () = access.lost.notified() => break Some((CLOSE_FORBIDDEN, "access ended".to_owned())),
            _ = recheck.tick() => {
                if !access.holds().await {
                    break Some((CLOSE_FORBIDDEN, "access ended".to_owned()));
                }
            }
            signal = signals.recv() => {
                let ended = match signal {
                    Ok(AccessRevoked::Unknown) | Err(RecvError::Lagged(_)) => !access.holds().await,
                    Ok(signal) => access.revoked_by(signal).await,
                    Err(RecvError::Closed) => false,
                };
                if ended {
                    break Some((CLOSE_FORBIDDEN, "access ended".to_owned()));
                }
            }
            () = &mut lifetime => break Some((CLOSE_LIFETIME, "connection lifetime reached; reconnect".to_owned())),
        }
    };
    if let Some((code, reason)) = close {
        sink.send(Message::Close(Some(CloseFrame { code, reason: reason.into() }))).await.ok();
    }
    sink.close().await.ok();
}

/// The data a socket's operations see. A credential in `connectionParams`
/// counts when the upgrade request carried none; one that does not resolve
/// refuses the connection, as a bad credential on a request is refused.
async fn connection_data(access: &Access, mut ctx: RequestContext, params: &serde_json::Value) -> Result<Data, String> {
    let mut held = access.held.lock().await;
    if held.is_none()
        && let Some(credential) = Credential::from_connection_params(params)
    {
        let found = credential.resolve(&access.app.db).await.map_err(|err| err.message)?;
        let Some(found) = found else {
            access.refused.store(true, Ordering::Relaxed);
            return Err("the credential in connectionParams is not valid".to_owned());
        };
        ctx.session_token = credential.session_token().map(str::to_owned);
        ctx.viewer = Some(found.viewer.clone());
        *held = Some((credential, found.viewer));
    }
    Ok(executor::connection_data(&access.app, ctx))
}
