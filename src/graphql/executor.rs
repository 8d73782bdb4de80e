//! The one way a GraphQL document runs in this process. `/graphql`, its
//! WebSocket, every REST route and every web page hand their document,
//! variables and caller to this module; it attaches what resolvers read (the
//! request, the operation's database gate and its DataLoaders) in one place
//! and answers typed data or an `AppError`, with no HTTP answer built and
//! read back on the way.

use async_graphql::{Data, Variables};
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;

use super::{AppSchema, gate::Gate, loaders};
use crate::{
    auth::RequestContext,
    error::{AppError, AppResult},
    state::AppState,
};

/// Gives one operation what its resolvers read.
pub fn prepare(request: async_graphql::Request, app: &AppState, ctx: RequestContext) -> async_graphql::Request {
    let gate = Gate::new(app);
    request.data(ctx).data(loaders::per_request(gate.clone())).data(gate)
}

/// The same for a WebSocket connection, whose operations share one gate.
pub fn connection_data(app: &AppState, ctx: RequestContext) -> Data {
    let gate = Gate::new(app);
    let mut data = Data::default();
    data.insert(ctx);
    data.insert(loaders::per_request(gate.clone()));
    data.insert(gate);
    data
}

/// A document's answer: its `data`, and the headers its resolvers set (the
/// session cookie on sign-in and sign-out).
pub struct Answer {
    pub data: async_graphql::Value,
    pub headers: HeaderMap,
}

impl Answer {
    /// The data as JSON, for a REST body.
    pub fn json(self) -> AppResult<(serde_json::Value, HeaderMap)> {
        Ok((self.data.into_json().map_err(AppError::internal)?, self.headers))
    }

    /// The data as the caller's typed view of it (a page's view struct).
    pub fn decode<T: DeserializeOwned>(self) -> AppResult<T> {
        async_graphql::from_value(self.data).map_err(|err| AppError::internal(format!("document answer: {err}")))
    }
}

/// Runs `document` with `variables` as `ctx`'s caller. The first error, if
/// any, is the answer: documents run in process are written here and ask for
/// nothing that fails on its own.
pub async fn run(
    schema: &AppSchema,
    app: &AppState,
    ctx: RequestContext,
    document: &str,
    variables: serde_json::Value,
) -> AppResult<Answer> {
    let request = async_graphql::Request::new(document).variables(Variables::from_json(variables));
    let response = schema.execute(prepare(request, app, ctx)).await;
    if let Some(error) = response.errors.first() {
        return Err(AppError::from(error));
    }
    Ok(Answer { data: response.data, headers: response.http_headers })
}
