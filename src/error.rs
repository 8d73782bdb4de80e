//! The one error type. REST answers it as `{"code", "message"}` with the code's
//! status; GraphQL carries the same code in `extensions.code`.

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    BadRequest,
    ValidationError,
    PasswordTooShort,
    PasswordTooLong,
    InvalidPassword,
    InvalidUrl,
    InvalidWebhookUrl,
    SessionExpired,
    Unauthorized,
    InvalidEmailOrPassword,
    Forbidden,
    SiteLimitReached,
    InvalidOrigin,
    NotFound,
    Conflict,
    SlugTaken,
    EmailInUse,
    RequestTimeout,
    PayloadTooLarge,
    RateLimited,
    DeliveryFailed,
    Unavailable,
    InternalError,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 23] = [
        Self::BadRequest,
        Self::ValidationError,
        Self::PasswordTooShort,
        Self::PasswordTooLong,
        Self::InvalidPassword,
        Self::InvalidUrl,
        Self::InvalidWebhookUrl,
        Self::SessionExpired,
        Self::Unauthorized,
        Self::InvalidEmailOrPassword,
        Self::Forbidden,
        Self::SiteLimitReached,
        Self::InvalidOrigin,
        Self::NotFound,
        Self::Conflict,
        Self::SlugTaken,
        Self::EmailInUse,
        Self::RequestTimeout,
        Self::PayloadTooLarge,
        Self::RateLimited,
        Self::DeliveryFailed,
        Self::Unavailable,
        Self::InternalError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "BAD_REQUEST",
            Self::ValidationError => "VALIDATION_ERROR",
            Self::PasswordTooShort => "PASSWORD_TOO_SHORT",
            Self::PasswordTooLong => "PASSWORD_TOO_LONG",
            Self::InvalidPassword => "INVALID_PASSWORD",
            Self::InvalidUrl => "INVALID_URL",
            Self::InvalidWebhookUrl => "INVALID_WEBHOOK_URL",
            Self::SessionExpired => "SESSION_EXPIRED",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::InvalidEmailOrPassword => "INVALID_EMAIL_OR_PASSWORD",
            Self::Forbidden => "FORBIDDEN",
            Self::SiteLimitReached => "SITE_LIMIT_REACHED",
            Self::InvalidOrigin => "INVALID_ORIGIN",
            Self::NotFound => "NOT_FOUND",
            Self::Conflict => "CONFLICT",
            Self::SlugTaken => "SLUG_TAKEN",
            Self::EmailInUse => "EMAIL_IN_USE",
            Self::RequestTimeout => "REQUEST_TIMEOUT",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::RateLimited => "RATE_LIMITED",
            Self::DeliveryFailed => "DELIVERY_FAILED",
            Self::Unavailable => "UNAVAILABLE",
            Self::InternalError => "INTERNAL_ERROR",
        }
    }

    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|candidate| candidate.as_str() == code)
    }

    pub fn status(self) -> StatusCode {
        match self {
            Self::BadRequest
            | Self::ValidationError
            | Self::PasswordTooShort
            | Self::PasswordTooLong
            | Self::InvalidPassword
            | Self::InvalidUrl
            | Self::InvalidWebhookUrl
            | Self::SessionExpired => StatusCode::BAD_REQUEST,
            Self::Unauthorized | Self::InvalidEmailOrPassword => StatusCode::UNAUTHORIZED,
            Self::Forbidden | Self::SiteLimitReached | Self::InvalidOrigin => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Conflict | Self::SlugTaken | Self::EmailInUse => StatusCode::CONFLICT,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Self::DeliveryFailed => StatusCode::BAD_GATEWAY,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// Deliberately not `Display`: async-graphql converts any `Display` type into
/// an error without our `extensions.code`, and this type must never lose it.
#[derive(Debug, Clone)]
pub struct AppError {
    pub code: ErrorCode,
    pub message: String,
    /// Seconds for the `Retry-After` header (429 and 503).
    pub retry_after: Option<u64>,
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), retry_after: None }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// A field failed validation; the message names the field.
    pub fn validation(field: &str, problem: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::ValidationError, format!("{field}: {problem}"))
    }

    /// Text holding the NUL character, which PostgreSQL's text cannot store:
    /// refused the same on both databases, before it reaches a write.
    pub fn nul_character(field: &str) -> Self {
        Self::validation(field, "must not contain the NUL character (U+0000)")
    }

    pub fn unauthorized() -> Self {
        Self::new(ErrorCode::Unauthorized, "authentication required")
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} not found"))
    }

    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self {
            retry_after: Some(retry_after_secs.max(1)),
            ..Self::new(ErrorCode::RateLimited, "too many requests, slow down")
        }
    }

    pub fn unavailable(message: impl Into<String>, retry_after_secs: u64) -> Self {
        Self { retry_after: Some(retry_after_secs.max(1)), ..Self::new(ErrorCode::Unavailable, message) }
    }

    /// Logs the cause; clients only ever see `INTERNAL_ERROR`.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(ErrorCode::InternalError, "internal error")
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }
}

/// Whether a database error passes if the same work is tried again: a locked
/// or busy SQLite file, a lost or refused PostgreSQL connection, a deadlock or
/// serialization failure between instances. The one rule for every retry.
pub fn is_transient(err: &sea_orm::DbErr) -> bool {
    if matches!(err, sea_orm::DbErr::ConnectionAcquire(_) | sea_orm::DbErr::Conn(_)) {
        return true;
    }
    let text = err.to_string().to_lowercase();
    [
        "locked",
        "busy",
        "connection",
        "closed",
        "terminating",
        "timed out",
        "broken pipe",
        "shutting down",
        "deadlock detected",
        "could not serialize",
    ]
    .iter()
    .any(|sign| text.contains(sign))
}

impl From<sea_orm::DbErr> for AppError {
    fn from(err: sea_orm::DbErr) -> Self {
        // Tell the client to retry rather than reporting a server bug.
        if is_transient(&err) {
            tracing::warn!(error = %err, "database unavailable");
            return Self::unavailable("the database is unavailable, retry shortly", 2);
        }
        Self::internal(err)
    }
}

impl From<sea_orm::TransactionError<AppError>> for AppError {
    fn from(err: sea_orm::TransactionError<AppError>) -> Self {
        match err {
            sea_orm::TransactionError::Connection(db) => db.into(),
            sea_orm::TransactionError::Transaction(app) => app,
        }
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'static str,
    message: &'a str,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let body = ErrorBody { code: self.code.as_str(), message: &self.message };
        let mut response = (self.status(), Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

impl From<AppError> for async_graphql::Error {
    fn from(err: AppError) -> Self {
        use async_graphql::ErrorExtensions;
        let mut gql = async_graphql::Error::new(err.message);
        let code = err.code.as_str();
        let retry_after = err.retry_after;
        gql = gql.extend_with(|_, ext| {
            ext.set("code", code);
            if let Some(secs) = retry_after {
                ext.set("retryAfter", secs);
            }
        });
        gql
    }
}

/// The code a GraphQL error carries, if it carries one of ours.
fn graphql_code(err: &async_graphql::ServerError) -> Option<ErrorCode> {
    err.extensions.as_ref().and_then(|ext| ext.get("code")).and_then(|value| match value {
        async_graphql::Value::String(code) => ErrorCode::parse(code),
        _ => None,
    })
}

/// The openings of async-graphql's own limit errors, which name no code: the
/// parser's nesting limits, and the checks `graphql::limits` replaces should
/// they ever be switched on again. The grammar's own stack limit reads like a
/// syntax error; only its last line tells (`GRAPHQL_STACK_LIMIT`).
const GRAPHQL_STACK_LIMIT: &str = "= stack limit reached";
const GRAPHQL_LIMIT_MESSAGES: [&str; 5] = [
    "recursion limit exceeded",
    "The recursion depth of the query cannot be greater than",
    "Query is nested too deep",
    "Query is too complex",
    "The number of directives on the field",
];

/// Gives a GraphQL error without a code the one it stands for. Every resolver
/// returns `AppResult`, whose errors all carry a code (an internal failure is
/// `INTERNAL_ERROR` with no internal text, logged where it happened), and
/// `graphql::limits` gives its refusals BAD_REQUEST. So an error without a
/// code comes from GraphQL itself: a limit (BAD_REQUEST, like every other
/// limit), or parsing, validation, or coercing variables and arguments
/// ("Variable name is not defined"): the caller sent something of the wrong
/// shape (VALIDATION_ERROR).
pub fn classify_graphql_error(err: &mut async_graphql::ServerError) {
    if graphql_code(err).is_none() {
        let limit = GRAPHQL_LIMIT_MESSAGES.iter().any(|opening| err.message.starts_with(opening))
            || err.message.ends_with(GRAPHQL_STACK_LIMIT);
        let code = if limit { ErrorCode::BadRequest } else { ErrorCode::ValidationError };
        err.extensions.get_or_insert_with(Default::default).set("code", code.as_str());
    }
}

impl From<&async_graphql::ServerError> for AppError {
    fn from(err: &async_graphql::ServerError) -> Self {
        let mut err = err.clone();
        classify_graphql_error(&mut err);
        let ext = err.extensions.as_ref();
        let code = graphql_code(&err).unwrap_or(ErrorCode::InternalError);
        let retry_after = ext.and_then(|ext| ext.get("retryAfter")).and_then(|value| match value {
            async_graphql::Value::Number(n) => n.as_u64(),
            _ => None,
        });
        Self { code, message: err.message, retry_after }
    }
}
