//! The one error type. REST answers it as `{"code", "message"}` with the code's
//! status, plus `"field"` when one input is at fault; GraphQL carries the same
//! code in `extensions.code` and the field in `extensions.field`.

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
    /// For a refused input, `"<field>: <problem>"`.
    pub message: String,
    /// The input at fault, as the caller sent it: a services names it as
    /// its GraphQL argument or input field; the executor turns that into the
    /// REST or form name a document filled it from.
    pub field: Option<String>,
    /// Seconds for the `Retry-After` header (429 and 503).
    pub retry_after: Option<u64>,
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), field: None, retry_after: None }
    }

    /// One input is at fault: the message names it (`"<field>: <problem>"`)
    /// and `field` carries it as data.
    pub fn invalid(code: ErrorCode, field: &str, problem: impl std::fmt::Display) -> Self {
        Self { field: Some(field.to_owned()), ..Self::new(code, format!("{field}: {problem}")) }
    }

    /// What is wrong with the field, in words for a person, without the
    /// field's name; the whole message when no field is at fault.
    pub fn problem(&self) -> &str {
        self.field
            .as_deref()
            .and_then(|field| self.message.strip_prefix(field))
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(&self.message)
    }

    /// The same error about another name of the same input (the name the
    /// caller used for it).
    pub fn renamed(mut self, field: String) -> Self {
        if let Some(old) = self.field.take() {
            let problem = self.message.strip_prefix(&old).and_then(|rest| rest.strip_prefix(": "));
            if let Some(problem) = problem {
                self.message = format!("{field}: {problem}");
            }
            self.field = Some(field);
        }
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// A field failed validation; the message names the field.
    pub fn validation(field: &str, problem: impl std::fmt::Display) -> Self {
        Self::invalid(ErrorCode::ValidationError, field, problem)
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
/// serialization failure between instances. The one rule for every retry,
/// read from the error's kind and the database's own code, not its text.
pub fn is_transient(err: &sea_orm::DbErr) -> bool {
    use sea_orm::{DbErr, RuntimeErr, sqlx::Error};
    match err {
        DbErr::ConnectionAcquire(_) | DbErr::Conn(_) => true,
        DbErr::Exec(RuntimeErr::SqlxError(err)) | DbErr::Query(RuntimeErr::SqlxError(err)) => match err.as_ref() {
            Error::Io(_) | Error::PoolTimedOut | Error::PoolClosed | Error::WorkerCrashed | Error::Tls(_) => true,
            Error::Database(err) => err.code().is_some_and(|code| transient_code(&code)),
            _ => false,
        },
        _ => false,
    }
}

/// A database's own error code for a condition that passes: SQLite's
/// BUSY (5) and LOCKED (6), whatever their extended code (the low byte);
/// PostgreSQL's serialization failure and deadlock (40001, 40P01), lost or
/// refused connections (class 08), shutdowns (57P01-57P03) and too many
/// connections (53300).
fn transient_code(code: &str) -> bool {
    // SQLSTATEs are five characters; SQLite's codes are shorter numbers.
    if code.len() == 5 {
        return matches!(code, "40001" | "40P01" | "57P01" | "57P02" | "57P03" | "53300") || code.starts_with("08");
    }
    code.parse::<i32>().is_ok_and(|sqlite| matches!(sqlite & 0xff, 5 | 6))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_database_codes_are_known_by_number() {
        for (code, transient) in [
            ("5", true),
            ("517", true),
            ("6", true),
            ("262", true),
            ("19", false),
            ("2067", false),
            ("40001", true),
            ("40P01", true),
            ("08006", true),
            ("57P01", true),
            ("23505", false),
            ("42P01", false),
        ] {
            assert_eq!(transient_code(code), transient, "{code}");
        }
    }

    #[test]
    fn graphql_validation_errors_name_their_input() {
        for (message, field) in [
            (r#"Invalid value for argument "input.maxClicks", expected type "Int""#, Some("input.maxClicks")),
            (r#"Invalid value for argument "siteId", expected type "Int""#, Some("siteId")),
            (r#"Variable "$siteId" of required type "Int!" was not provided."#, Some("siteId")),
            ("Variable domain is not defined.", Some("domain")),
            (r#"Unknown field "nope" on type "Query"."#, None),
            ("Invalid value for argument \"", None),
        ] {
            assert_eq!(graphql_input_named(message).as_deref(), field, "{message}");
        }
    }

    #[test]
    fn a_refused_input_keeps_its_problem_apart_from_its_name() {
        let err = AppError::validation("linkType", "must be content, ad or bio");
        assert_eq!(
            (err.message.as_str(), err.problem()),
            ("linkType: must be content, ad or bio", "must be content, ad or bio")
        );
        let renamed = err.renamed("link_type".to_owned());
        assert_eq!(renamed.message, "link_type: must be content, ad or bio");
        assert_eq!(renamed.field.as_deref(), Some("link_type"));
        assert_eq!(AppError::not_found("site").problem(), "site not found");
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let body = ErrorBody { code: self.code.as_str(), message: &self.message, field: self.field.as_deref() };
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
        let (retry_after, field) = (err.retry_after, err.field);
        gql = gql.extend_with(|_, ext| {
            ext.set("code", code);
            if let Some(field) = field {
                ext.set("field", field);
            }
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
        let field = if limit { None } else { graphql_input_named(&err.message) };
        if let Some(field) = &field {
            err.message = format!("{field}: {}", wrong_type_problem(&err.message));
        }
        let extensions = err.extensions.get_or_insert_with(Default::default);
        extensions.set("code", code.as_str());
        if let Some(field) = field {
            extensions.set("field", field);
        }
    }
}

/// What async-graphql's message about a value of the wrong type says, in
/// the words our own checks use.
fn wrong_type_problem(message: &str) -> String {
    let expected = message.split("expected type \"").nth(1).and_then(|rest| rest.split('"').next());
    match expected.map(|ty| ty.trim_end_matches('!')) {
        Some("String") => "must be text".to_owned(),
        Some("Int") => "must be a whole number".to_owned(),
        Some("Float") => "must be a number".to_owned(),
        Some("Boolean") => "must be true or false".to_owned(),
        Some(ty) if ty.starts_with('[') => "must be a list".to_owned(),
        Some(ty) => format!("must be a {ty}"),
        None if message.contains("not defined") || message.contains("not provided") => "is required".to_owned(),
        None => "is not a valid value".to_owned(),
    }
}

/// The input a GraphQL validation error of async-graphql's is about: the
/// argument path of a value of the wrong type (`Invalid value for argument
/// "input.maxClicks", ...`) or the variable that is missing or mistyped
/// (`Variable "$siteId" ...`, `Variable siteId is not defined.`). This reads
/// the library's own wording; our errors carry their field as data.
fn graphql_input_named(message: &str) -> Option<String> {
    let quoted = |rest: &str| rest.split('"').next().filter(|name| !name.is_empty()).map(str::to_owned);
    if let Some(rest) = message.strip_prefix("Invalid value for argument \"") {
        return quoted(rest);
    }
    if let Some(name) = message.strip_prefix("Variable ").and_then(|rest| rest.strip_suffix(" is not defined.")) {
        return Some(name.trim_start_matches('$').to_owned()).filter(|name| !name.is_empty() && !name.contains(' '));
    }
    message.strip_prefix("Variable \"$").and_then(quoted)
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
        let field = ext.and_then(|ext| ext.get("field")).and_then(|value| match value {
            async_graphql::Value::String(field) => Some(field.clone()),
            _ => None,
        });
        Self { code, message: err.message, field, retry_after }
    }
}
