//! `/api/identify`.

use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use super::{
    bridge::Bridge,
    extract::{ApiQuery, JsonBody},
};
use crate::error::{AppError, AppResult};

pub async fn identify(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/identify.graphql"), body).await?.field("identify"))
}

#[derive(Deserialize)]
pub struct IdentityParams {
    tracker_vid: Option<String>,
    #[serde(rename = "siteId")]
    site_id: Option<String>,
}

pub async fn identity(bridge: Bridge, ApiQuery(params): ApiQuery<IdentityParams>) -> AppResult<Response> {
    let tracker_vid = params.tracker_vid.ok_or_else(|| AppError::validation("tracker_vid", "is required"))?;
    let site_id = super::optional_number("siteId", params.site_id.as_deref())?;
    let variables = json!({ "tracker_vid": tracker_vid, "siteId": site_id });
    Ok(bridge.run(include_str!("documents/identity.graphql"), variables).await?.field("identity"))
}
