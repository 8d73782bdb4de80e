//! Runs a page's GraphQL document through the one executor, so a page sees
//! exactly what an API caller with the same session sees: the same schema,
//! viewer, loaders, limits and error codes.

use axum::{
    extract::FromRequestParts,
    http::{HeaderMap, header, request::Parts},
};
use serde_json::Value;

use crate::{
    auth::RequestContext,
    error::{AppError, AppResult},
    graphql::executor,
    server::RouterState,
};

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
    let ctx = RequestContext::from_request_parts(parts, state).await?;
    let (data, headers) = executor::run(&state.schema, &state.app, ctx, document, variables).await?.json()?;
    let mut cookies = HeaderMap::new();
    for value in headers.get_all(header::SET_COOKIE) {
        cookies.append(header::SET_COOKIE, value.clone());
    }
    Ok(Answer { data, cookies })
}

/// The answer's `data` as the page's typed view of it.
pub fn decode<T: serde::de::DeserializeOwned>(data: Value) -> AppResult<T> {
    serde_json::from_value(data).map_err(|err| AppError::internal(format!("page document answer: {err}")))
}
