//! `/api/visitors`, `/api/visitor`, `/api/visitor/:id`, `/api/stats` and `/api/session/:id`.

use std::collections::HashMap;

use axum::response::Response;
use serde_json::json;

use super::{
    bridge::Bridge,
    extract::{ApiPath, ApiQuery},
    optional_number,
};
use crate::error::{AppError, AppResult};

type Params = HashMap<String, String>;

fn required_site_id(params: &Params) -> AppResult<i64> {
    optional_number("siteId", params.get("siteId").map(String::as_str))?
        .ok_or_else(|| AppError::validation("siteId", "is required"))
}

pub async fn live(bridge: Bridge, ApiQuery(params): ApiQuery<Params>) -> AppResult<Response> {
    let variables = json!({ "siteId": required_site_id(&params)? });
    Ok(bridge.run(include_str!("documents/live_stream.graphql"), variables).await?.field("liveStream"))
}

pub async fn list(bridge: Bridge, ApiQuery(params): ApiQuery<Params>) -> AppResult<Response> {
    let variables = json!({
        "siteId": required_site_id(&params)?,
        "first": optional_number("limit", params.get("limit").map(String::as_str))?,
        "timeRange": params.get("timeRange"),
        "filter": params.get("filter"),
    });
    Ok(bridge.run(include_str!("documents/visitor_list.graphql"), variables).await?.field("visitors"))
}

pub async fn profile(
    bridge: Bridge,
    ApiPath(id): ApiPath<String>,
    ApiQuery(params): ApiQuery<Params>,
) -> AppResult<Response> {
    let variables = json!({ "siteId": required_site_id(&params)?, "id": id });
    Ok(bridge.run(include_str!("documents/visitor_profile.graphql"), variables).await?.field("visitor"))
}

pub async fn stats(bridge: Bridge, ApiQuery(params): ApiQuery<Params>) -> AppResult<Response> {
    let variables = json!({ "siteId": required_site_id(&params)?, "timeRange": params.get("timeRange") });
    Ok(bridge.run(include_str!("documents/stats.graphql"), variables).await?.field("stats"))
}

pub async fn session(
    bridge: Bridge,
    ApiPath(id): ApiPath<String>,
    ApiQuery(params): ApiQuery<Params>,
) -> AppResult<Response> {
    let variables = json!({ "siteId": required_site_id(&params)?, "id": id });
    Ok(bridge.run(include_str!("documents/session.graphql"), variables).await?.field("trackedSession"))
}
