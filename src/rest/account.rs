//! `/api/profile` and `/api/sites`.

use axum::response::Response;
use serde_json::{Value, json};

use super::{
    bridge::Bridge,
    extract::{ApiPath, JsonBody},
};
use crate::error::{AppError, AppResult};

pub async fn profile(bridge: Bridge) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/profile.graphql"), Value::Null).await?.whole())
}

pub async fn list_sites(bridge: Bridge) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/sites_list.graphql"), Value::Null).await?.whole())
}

pub async fn create_site(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/site_create.graphql"), body).await?.whole())
}

pub async fn update_site(
    bridge: Bridge,
    ApiPath(id): ApiPath<String>,
    JsonBody(mut body): JsonBody,
) -> AppResult<Response> {
    body.insert("id".to_owned(), json!(site_id(&id)?));
    Ok(bridge.run(include_str!("documents/site_update.graphql"), body).await?.whole())
}

pub async fn delete_site(bridge: Bridge, ApiPath(id): ApiPath<String>) -> AppResult<Response> {
    let variables = json!({ "id": site_id(&id)? });
    Ok(bridge.run(include_str!("documents/site_delete.graphql"), variables).await?.field("deleteSite"))
}

/// A path id that is not a number names no site.
pub fn site_id(raw: &str) -> AppResult<i64> {
    raw.parse().map_err(|_| AppError::not_found("site"))
}
