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
    PayloadTooLarge,
    RateLimited,
    DeliveryFailed,
    Unavailable,
    InternalError,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 22] = [
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

impl From<sea_orm::DbErr> for AppError {
    fn from(err: sea_orm::DbErr) -> Self {
        // A locked SQLite file or an unreachable PostgreSQL is transient: tell the
        // client to retry rather than reporting a server bug.
        match &err {
            sea_orm::DbErr::ConnectionAcquire(_) | sea_orm::DbErr::Conn(_) => {
                tracing::warn!(error = %err, "database unavailable");
                Self::unavailable("the database is unavailable, retry shortly", 2)
            }
            _ => Self::internal(err),
        }
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

impl From<&async_graphql::ServerError> for AppError {
    /// Errors without a code come from GraphQL itself (parsing, validation,
    /// variable coercion): the caller sent something of the wrong shape.
    fn from(err: &async_graphql::ServerError) -> Self {
        let ext = err.extensions.as_ref();
        let code = ext
            .and_then(|ext| ext.get("code"))
            .and_then(|value| match value {
                async_graphql::Value::String(code) => ErrorCode::parse(code),
                _ => None,
            })
            .unwrap_or(ErrorCode::ValidationError);
        let retry_after = ext.and_then(|ext| ext.get("retryAfter")).and_then(|value| match value {
            async_graphql::Value::Number(n) => n.as_u64(),
            _ => None,
        });
        Self { code, message: err.message.clone(), retry_after }
    }
}
