//! Runs a page's GraphQL document through the REST bridge, so a page sees
//! exactly what an API caller with the same session sees: the same schema,
//! viewer, loaders, limits and error codes.

use axum::{
    extract::FromRequestParts,
    http::{HeaderMap, header, request::Parts},
};
use serde_json::Value;

use crate::{
    RouterState,
    error::{AppError, AppResult},
    rest::bridge::PublicBridge,
};

/// Answers larger than this are not read back (a page is far smaller).
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// A document's `data`, and the cookies its resolvers set (sign-in, sign-out).
pub struct Answer {
    pub data: Value,
    pub cookies: HeaderMap,
}

/// Runs `document` with `variables` as the request's caller (or none).
pub async fn run(
    parts: &mut Parts,
    state: &RouterState,
    document: &'static str,
    variables: Value,
) -> AppResult<Answer> {
    let PublicBridge(bridge) = PublicBridge::from_request_parts(parts, state).await?;
    // The bridge answers an HTTP response (its REST face); read the JSON back.
    // A `data` accessor on the bridge's output would save this copy, but that
    // file belongs to the REST face.
    let response = bridge.run(document, variables).await?.whole();
    let (head, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_ANSWER).await.map_err(AppError::internal)?;
    let data = serde_json::from_slice(&bytes).map_err(AppError::internal)?;
    let mut cookies = HeaderMap::new();
    for value in head.headers.get_all(header::SET_COOKIE) {
        cookies.append(header::SET_COOKIE, value.clone());
    }
    Ok(Answer { data, cookies })
}

/// The answer's `data` as the page's typed view of it.
pub fn decode<T: serde::de::DeserializeOwned>(data: Value) -> AppResult<T> {
    serde_json::from_value(data).map_err(|err| AppError::internal(format!("page document answer: {err}")))
}
