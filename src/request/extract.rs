//! Request extractors whose rejections are the JSON error body, never axum's
//! plain-text ones.

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Request, rejection::BytesRejection},
    http::{StatusCode, request::Parts},
};
use serde_json::{Map, Value};

use crate::{
    auth::RequestContext,
    error::{AppError, ErrorCode},
};

impl<S: Send + Sync> FromRequestParts<S> for RequestContext {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, AppError> {
        parts
            .extensions
            .get::<RequestContext>()
            .cloned()
            .ok_or_else(|| AppError::internal("authenticate middleware is not installed"))
    }
}

/// The raw body, within the route's body limit.
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = AppError;

    async fn from_request(request: Request, state: &S) -> Result<Self, AppError> {
        Bytes::from_request(request, state).await.map(RawBody).map_err(body_error)
    }
}

fn body_error(rejection: BytesRejection) -> AppError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        AppError::new(ErrorCode::PayloadTooLarge, "request body is too large")
    } else {
        AppError::bad_request(rejection.body_text())
    }
}

/// A JSON object body. An empty body reads as `{}`, so endpoints whose fields
/// are all optional can be called without one. Field types are checked later,
/// by the GraphQL document the body feeds.
pub struct JsonBody(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = AppError;

    async fn from_request(request: Request, state: &S) -> Result<Self, AppError> {
        let RawBody(bytes) = RawBody::from_request(request, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(JsonBody(Map::new()));
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(mut map)) => {
                map.values_mut().for_each(whole_numbers_as_integers);
                Ok(JsonBody(map))
            }
            Ok(_) => Err(AppError::bad_request("request body must be a JSON object")),
            Err(err) => Err(AppError::bad_request(format!("malformed JSON: {err}"))),
        }
    }
}

/// JSON has one number type, so `4.0` is the integer 4; GraphQL's Int would
/// refuse it as a float.
fn whole_numbers_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) if number.is_f64() => {
            if let Some(float) = number.as_f64()
                && float.fract() == 0.0
                && float.abs() < 9.0e15
            {
                // Exact: every whole number below 2^53 is an f64 and an i64.
                *value = Value::from(float as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers_as_integers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers_as_integers),
        _ => {}
    }
}

/// Query-string parameters; a malformed query string is a 400 with the JSON body.
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| ApiQuery(value))
            .map_err(|err| AppError::new(ErrorCode::ValidationError, err.body_text()))
    }
}

/// Path parameters; a malformed segment is a 400 with the JSON body.
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| ApiPath(value))
            .map_err(|err| AppError::bad_request(err.body_text()))
    }
}
