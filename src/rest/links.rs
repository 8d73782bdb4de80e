//! `/api/links`, `/api/links/check-slug` and `/api/link-analytics`.

use std::collections::HashMap;

use axum::response::Response;
use serde_json::{Value, json};

use super::{
    bridge::Bridge,
    extract::{ApiPath, ApiQuery, JsonBody},
    optional_number,
};
use crate::error::{AppError, AppResult};

type Params = HashMap<String, String>;

fn site_id(params: &Params) -> AppResult<Option<i64>> {
    optional_number("siteId", params.get("siteId").map(String::as_str))
}

pub async fn list(bridge: Bridge, ApiQuery(params): ApiQuery<Params>) -> AppResult<Response> {
    let variables = json!({ "siteId": site_id(&params)? });
    Ok(bridge.run(include_str!("documents/links_list.graphql"), variables).await?.field("links"))
}

pub async fn create(bridge: Bridge, JsonBody(body): JsonBody) -> AppResult<Response> {
    Ok(bridge.run(include_str!("documents/link_create.graphql"), body).await?.field("createLink"))
}

/// REST body keys and the update input's fields. A key that is absent leaves
/// the field unchanged; `null` clears `expires_at` and `max_clicks`.
const UPDATE_FIELDS: [(&str, &str); 12] = [
    ("destinationUrl", "destinationUrl"),
    ("slug", "slug"),
    ("campaign", "campaign"),
    ("source", "source"),
    ("medium", "medium"),
    ("content", "content"),
    ("notes", "notes"),
    ("link_type", "linkType"),
    ("is_active", "isActive"),
    ("expires_at", "expiresAt"),
    ("max_clicks", "maxClicks"),
    ("tags", "tags"),
];

pub async fn update(bridge: Bridge, ApiPath(id): ApiPath<String>, JsonBody(mut body): JsonBody) -> AppResult<Response> {
    match body.get("tags") {
        None | Some(Value::Array(_)) => {}
        Some(Value::Null) => {
            body.insert("tags".to_owned(), Value::Array(Vec::new()));
        }
        Some(_) => return Err(AppError::validation("tags", "must be an array of strings")),
    }
    let input: serde_json::Map<String, Value> = UPDATE_FIELDS
        .iter()
        .filter_map(|(key, field)| body.get(*key).map(|value| ((*field).to_owned(), value.clone())))
        .collect();
    let variables = json!({ "id": id, "input": input });
    Ok(bridge.run(include_str!("documents/link_update.graphql"), variables).await?.whole())
}

pub async fn delete(bridge: Bridge, ApiPath(id): ApiPath<String>) -> AppResult<Response> {
    let variables = json!({ "id": id });
    Ok(bridge.run(include_str!("documents/link_delete.graphql"), variables).await?.field("deleteLink"))
}

pub async fn check_slug(bridge: Bridge, ApiQuery(params): ApiQuery<Params>) -> AppResult<Response> {
    let slug = params.get("slug").ok_or_else(|| AppError::validation("slug", "is required"))?;
    let variables = json!({ "slug": slug, "siteId": site_id(&params)? });
    Ok(bridge.run(include_str!("documents/check_slug.graphql"), variables).await?.field("checkSlug"))
}

pub async fn analytics(bridge: Bridge, ApiQuery(params): ApiQuery<Params>) -> AppResult<Response> {
    let variables = json!({
        "siteId": site_id(&params)?,
        "range": params.get("range"),
        "slug": params.get("slug"),
        "campaign": params.get("campaign"),
        "source": params.get("source"),
    });
    Ok(bridge.run(include_str!("documents/link_analytics.graphql"), variables).await?.field("linkAnalytics"))
}
