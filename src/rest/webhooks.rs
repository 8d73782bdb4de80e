//! `/api/webhook`.

use axum::response::Response;
use serde_json::json;

use super::{bridge::Bridge, extract::JsonBody};
use crate::error::AppResult;

pub async fn info(bridge: Bridge) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/webhook_info.graphql"), json!({})).await?.field("webhookInfo"))
}

/// Delivers, or with `dry_run: true` answers the exact payload and headers
/// without sending them.
pub async fn send(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/webhook_send.graphql"), body).await?.field("sendWebhook"))
}
