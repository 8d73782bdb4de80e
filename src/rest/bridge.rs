//! The in-process REST → GraphQL bridge. A REST route is a static GraphQL
//! document plus extraction: it runs with the same caller and data as
//! `/graphql`, and GraphQL error codes become HTTP statuses and the error body.

use axum::{
    Json,
    extract::{FromRef, FromRequestParts},
    http::request::Parts,
    response::{IntoResponse, Response},
};
use serde_json::Value;

use crate::{
    auth::RequestContext,
    error::{AppError, AppResult},
    graphql::{AppSchema, executor},
    state::AppState,
};

/// The bridge for routes that need a caller: without a valid session or API
/// key the answer is 401, before any input is looked at.
pub struct Bridge {
    schema: AppSchema,
    app: AppState,
    ctx: RequestContext,
}

impl<S> FromRequestParts<S> for Bridge
where
    S: Send + Sync,
    AppSchema: FromRef<S>,
    AppState: FromRef<S>,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        let PublicBridge(bridge) = PublicBridge::from_request_parts(parts, state).await?;
        if bridge.ctx.viewer.is_none() {
            return Err(AppError::unauthorized());
        }
        Ok(bridge)
    }
}

/// The bridge for the routes that work without a caller: sign-up, sign-in
/// and get-session.
pub struct PublicBridge(pub Bridge);

impl<S> FromRequestParts<S> for PublicBridge
where
    S: Send + Sync,
    AppSchema: FromRef<S>,
    AppState: FromRef<S>,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        let ctx = RequestContext::from_request_parts(parts, state).await?;
        Ok(PublicBridge(Bridge { schema: AppSchema::from_ref(state), app: AppState::from_ref(state), ctx }))
    }
}

/// A successful run: its data, and the headers resolvers set (cookies).
pub struct Output {
    data: Value,
    headers: axum::http::HeaderMap,
}

impl Bridge {
    /// The caller, for a hook that calls a service itself.
    pub fn viewer(&self) -> AppResult<&crate::auth::Viewer> {
        self.ctx.viewer.as_ref().ok_or_else(AppError::unauthorized)
    }

    pub fn db(&self) -> &sea_orm::DatabaseConnection {
        &self.app.db
    }

    /// The read connections, for a hook that streams a long read.
    pub fn reads(&self) -> &sea_orm::DatabaseConnection {
        &self.app.reads
    }

    /// The instance's visit copies, for a hook that reads Explore.
    pub fn visit_copies(&self) -> std::sync::Arc<crate::service::explore::visit_copy::VisitCopies> {
        self.app.visit_copies.clone()
    }

    /// BASE_URL, for links in what a hook answers.
    pub fn base_url(&self) -> String {
        self.app.config.base_url()
    }

    /// Pays `cost` from the caller's read budget, as an operation of that
    /// complexity does before it runs.
    pub fn charge(&self, cost: usize) -> AppResult<()> {
        self.app.read_budget.charge(&self.ctx, cost)
    }

    pub async fn run(self, document: &'static str, variables: impl Into<Value>) -> AppResult<Output> {
        let (data, headers) =
            executor::run(&self.schema, &self.app, self.ctx, document, variables.into()).await?.json()?;
        Ok(Output { data, headers })
    }
}

impl Output {
    /// The whole `data` object is the response: the document's aliases already
    /// give it the REST field names.
    pub fn whole(self) -> Response {
        (self.headers, Json(self.data)).into_response()
    }

    /// One top-level field of `data` is the response.
    pub fn field(mut self, name: &str) -> Response {
        let value = self.data.get_mut(name).map(Value::take).unwrap_or(Value::Null);
        (self.headers, Json(value)).into_response()
    }

    /// One top-level field of `data`, reshaped, is the response.
    pub fn shaped(mut self, name: &str, shape: fn(Value) -> Value) -> Response {
        let value = self.data.get_mut(name).map(Value::take).unwrap_or(Value::Null);
        (self.headers, Json(shape(value))).into_response()
    }
}
