//! HTTP faces of the schema: POST and GET `/graphql`, and `/graphql/ws`.

use async_graphql::{
    BatchRequest, Data,
    http::ALL_WEBSOCKET_PROTOCOLS,
    parser::{parse_query, types::OperationType},
};
use async_graphql_axum::{GraphQLProtocol, GraphQLResponse, GraphQLWebSocket};
use axum::{
    extract::{Query, State, WebSocketUpgrade, ws::rejection::WebSocketUpgradeRejection},
    http::{HeaderMap, header},
    response::{Html, IntoResponse, Response},
};
use serde::Deserialize;

use super::{AppSchema, MAX_BATCH, explorer, loaders};
use crate::{
    auth::{RequestContext, cookie},
    error::{AppError, AppResult, ErrorCode},
    rest::extract::RawBody,
    state::AppState,
};

/// POST /graphql: one operation or a batch of at most MAX_BATCH.
pub async fn post(
    State(schema): State<AppSchema>,
    State(app): State<AppState>,
    ctx: RequestContext,
    RawBody(body): RawBody,
) -> AppResult<Response> {
    let batch: BatchRequest = serde_json::from_slice(&body)
        .map_err(|err| AppError::bad_request(format!("body is not a GraphQL request: {err}")))?;
    if let BatchRequest::Batch(requests) = &batch
        && requests.len() > MAX_BATCH
    {
        return Err(AppError::bad_request(format!("at most {MAX_BATCH} operations per batch")));
    }
    let batch = batch.data(ctx).data(loaders::per_request(&app.db));
    Ok(GraphQLResponse::from(schema.execute_batch(batch).await).into_response())
}

#[derive(Deserialize)]
pub struct GetParams {
    query: Option<String>,
    variables: Option<String>,
    #[serde(rename = "operationName")]
    operation_name: Option<String>,
}

/// GET /graphql: the explorer page, or a read-only query given as `?query=`.
/// Mutations are refused over GET, so a link cannot change anything.
pub async fn get(
    State(schema): State<AppSchema>,
    State(app): State<AppState>,
    ctx: RequestContext,
    params: Result<Query<GetParams>, axum::extract::rejection::QueryRejection>,
) -> AppResult<Response> {
    let Query(params) = params.map_err(|err| AppError::bad_request(err.body_text()))?;
    let Some(query) = params.query else {
        return Ok((explorer::security_headers(), Html(explorer::PAGE)).into_response());
    };
    let document = parse_query(&query).map_err(|err| AppError::bad_request(err.to_string()))?;
    let is_mutation = document.operations.iter().any(|(name, op)| {
        let selected = params.operation_name.as_deref().is_none_or(|wanted| name.is_some_and(|n| n.as_str() == wanted));
        selected && op.node.ty != OperationType::Query
    });
    if is_mutation {
        return Err(AppError::new(ErrorCode::BadRequest, "mutations and subscriptions need POST"));
    }
    let variables = match params.variables {
        Some(text) => serde_json::from_str(&text).map_err(|_| AppError::bad_request("variables is not JSON"))?,
        None => serde_json::Value::Null,
    };
    let mut request = async_graphql::Request::new(query)
        .variables(async_graphql::Variables::from_json(variables))
        .data(ctx)
        .data(loaders::per_request(&app.db));
    if let Some(name) = params.operation_name {
        request = request.operation_name(name);
    }
    Ok(GraphQLResponse::from(schema.execute(request).await).into_response())
}

/// GET /graphql/ws: subscriptions over `graphql-transport-ws` (and the older
/// `graphql-ws`). The caller is resolved from the upgrade request's cookie or
/// bearer token, like any other request.
pub async fn ws(
    State(schema): State<AppSchema>,
    State(app): State<AppState>,
    ctx: RequestContext,
    headers: HeaderMap,
    protocol: Result<GraphQLProtocol, axum::http::StatusCode>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> AppResult<Response> {
    let upgrade = upgrade.map_err(|err| AppError::bad_request(err.body_text()))?;
    let protocol = protocol.map_err(|_| AppError::bad_request("unsupported websocket subprotocol"))?;
    // Browsers send cookies on cross-site websocket upgrades; refuse foreign origins.
    if cookie::session_token(&headers).is_some()
        && let Some(origin) = headers.get(header::ORIGIN)
        && origin.to_str().ok().map(|o| o.trim_end_matches('/')) != Some(app.base_origin.as_str())
    {
        return Err(AppError::new(ErrorCode::InvalidOrigin, "request origin does not match this service"));
    }
    Ok(upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |stream| {
            let mut data = Data::default();
            data.insert(ctx);
            data.insert(loaders::per_request(&app.db));
            GraphQLWebSocket::new(stream, schema, protocol).with_data(data).serve()
        })
        .into_response())
}
