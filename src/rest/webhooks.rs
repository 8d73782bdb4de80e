//! `/api/webhook`.

use axum::response::Response;
use serde_json::{Value, json};

use super::{bridge::Bridge, extract::JsonBody};
use crate::error::AppResult;

pub async fn info(bridge: Bridge) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/webhook_info.graphql"), json!({})).await?.field("webhookInfo"))
}

/// Delivers, or with `dry_run: true` answers the exact payload and headers
/// without sending them.
pub async fn send(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    let document = if body.get("dry_run") == Some(&Value::Bool(true)) {
        include_str!("documents/webhook_preview.graphql")
    } else {
        include_str!("documents/webhook_send.graphql")
    };
    Ok(bridge.run(document, body).await?.field("sendWebhook"))
}
