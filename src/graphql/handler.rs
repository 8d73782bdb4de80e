//! HTTP faces of the schema: POST and GET `/graphql`, and `/graphql/ws`.

use async_graphql::{
    BatchRequest,
    http::ALL_WEBSOCKET_PROTOCOLS,
    parser::{parse_query, types::OperationType},
};
use axum::{
    extract::{Query, State, WebSocketUpgrade, ws::rejection::WebSocketUpgradeRejection},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Response},
};
use serde::Deserialize;

use super::{
    AppSchema, executor, explorer,
    http::{self, MediaType},
    limits::Executed,
    socket,
};
use crate::{
    auth::{RequestContext, cookie},
    error::{AppError, AppResult, ErrorCode},
    request::extract::RawBody,
    state::AppState,
};

/// POST /graphql: one operation or a batch of at most MAX_BATCH, in a JSON body.
pub async fn post(
    State(schema): State<AppSchema>,
    State(app): State<AppState>,
    ctx: RequestContext,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> AppResult<Response> {
    if let Some(refused) = http::refuse_unless_json(&headers) {
        return Ok(refused);
    }
    let media = MediaType::negotiate(&headers);
    let batch = http::parse_body(&body)?;
    let mut executed = Vec::new();
    let mut prepare = |request| executor::prepare(mark(request, &mut executed), &app, ctx.clone());
    let batch = match batch {
        BatchRequest::Single(request) => BatchRequest::Single(prepare(request)),
        BatchRequest::Batch(requests) => BatchRequest::Batch(requests.into_iter().map(prepare).collect()),
    };
    http::respond(media, schema.execute_batch(batch).await, &executed)
}

/// Gives a request the marker that tells whether it was executed.
fn mark(request: async_graphql::Request, executed: &mut Vec<Executed>) -> async_graphql::Request {
    let marker = Executed::default();
    executed.push(marker.clone());
    request.data(marker)
}

#[derive(Deserialize)]
pub struct GetParams {
    query: Option<String>,
    variables: Option<String>,
    #[serde(rename = "operationName")]
    operation_name: Option<String>,
}

/// GET /graphql: the explorer page, or a read-only query given as `?query=`.
/// Mutations are refused over GET (405, as the GraphQL-over-HTTP spec asks),
/// so a link cannot change anything.
pub async fn get(
    State(schema): State<AppSchema>,
    State(app): State<AppState>,
    ctx: RequestContext,
    headers: HeaderMap,
    params: Result<Query<GetParams>, axum::extract::rejection::QueryRejection>,
) -> AppResult<Response> {
    let Query(params) = params.map_err(|err| AppError::bad_request(err.body_text()))?;
    let Some(query) = params.query else {
        return Ok((explorer::security_headers(), Html(explorer::PAGE)).into_response());
    };
    // A document that does not parse is answered by the schema, as a request error.
    let is_mutation = parse_query(&query).is_ok_and(|document| {
        document.operations.iter().any(|(name, op)| {
            let selected =
                params.operation_name.as_deref().is_none_or(|wanted| name.is_some_and(|n| n.as_str() == wanted));
            selected && op.node.ty != OperationType::Query
        })
    });
    if is_mutation {
        let mut refused = AppError::new(ErrorCode::BadRequest, "mutations and subscriptions need POST").into_response();
        *refused.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        refused.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return Ok(refused);
    }
    let variables = match params.variables {
        Some(text) => serde_json::from_str(&text).map_err(|_| AppError::bad_request("variables is not JSON"))?,
        None => serde_json::Value::Null,
    };
    let mut executed = Vec::new();
    let mut request = async_graphql::Request::new(query).variables(async_graphql::Variables::from_json(variables));
    if let Some(name) = params.operation_name {
        request = request.operation_name(name);
    }
    let request = executor::prepare(mark(request, &mut executed), &app, ctx);
    http::respond(MediaType::negotiate(&headers), schema.execute(request).await.into(), &executed)
}

/// GET /graphql/ws: subscriptions over `graphql-transport-ws` (and the older
/// `graphql-ws`); see `socket` for how access is kept checked.
pub async fn ws(
    State(schema): State<AppSchema>,
    State(app): State<AppState>,
    ctx: RequestContext,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> AppResult<Response> {
    let upgrade = upgrade.map_err(|err| AppError::bad_request(err.body_text()))?;
    let protocol =
        socket::protocol(&headers).ok_or_else(|| AppError::bad_request("unsupported websocket subprotocol"))?;
    // Browsers send cookies on cross-site websocket upgrades; refuse foreign origins.
    if cookie::session_token(&headers).is_some()
        && let Some(origin) = headers.get(header::ORIGIN)
        && origin.to_str().ok().map(|o| o.trim_end_matches('/')) != Some(app.base_origin.as_str())
    {
        return Err(AppError::new(ErrorCode::InvalidOrigin, "request origin does not match this service"));
    }
    Ok(upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |stream| socket::serve(stream, schema, app, ctx, headers, protocol))
        .into_response())
}
