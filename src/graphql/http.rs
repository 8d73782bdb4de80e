//! GraphQL over HTTP (https://graphql.github.io/graphql-over-http/) for
//! `/graphql`: the request's media type and shape, the answer's media type
//! chosen from `Accept`, and its status.
//!
//! A request error (the document did not parse, failed validation or a limit,
//! so nothing was executed) has no `data` entry. With
//! `application/graphql-response+json` it answers 4xx; with `application/json`
//! it answers 200, as clients from before that media type expect.

use async_graphql::{BatchRequest, BatchResponse};
use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Map, Value};

use super::limits::{Executed, MAX_BATCH};
use crate::error::{AppError, AppResult, ErrorCode};

const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";
const JSON: &str = "application/json";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaType {
    GraphqlResponseJson,
    Json,
}

impl MediaType {
    /// The media type to answer in. No `Accept`, `*/*`, or nothing this server
    /// speaks all mean `application/json` (the spec's choice before its
    /// watershed, which graphql-http's audit checks); otherwise the highest
    /// quality wins, the more specific range breaks a tie, and
    /// `application/graphql-response+json` breaks the rest.
    pub fn negotiate(headers: &HeaderMap) -> Self {
        let mut best = [Match::default(); 2];
        for value in headers.get_all(header::ACCEPT) {
            let Ok(value) = value.to_str() else { continue };
            for range in value.split(',') {
                let mut params = range.split(';');
                let essence = params.next().unwrap_or_default().trim().to_ascii_lowercase();
                let quality = params
                    .filter_map(|param| param.split_once('='))
                    .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
                    .map_or(Some(1.0), |(_, q)| q.trim().parse::<f32>().ok());
                let Some(quality) = quality else { continue };
                for (slot, media) in best.iter_mut().zip([GRAPHQL_RESPONSE_JSON, JSON]) {
                    let specificity = match essence.as_str() {
                        e if e == media => 3,
                        "application/*" => 2,
                        "*/*" => 1,
                        _ => continue,
                    };
                    // The most specific range that matches sets the quality (RFC 9110).
                    if specificity > slot.specificity {
                        *slot = Match { specificity, quality };
                    }
                }
            }
        }
        let [graphql, json] = best;
        let acceptable = |m: Match| m.specificity > 0 && m.quality > 0.0;
        match (acceptable(graphql), acceptable(json)) {
            (true, false) => Self::GraphqlResponseJson,
            (true, true)
                if (graphql.quality, graphql.specificity) >= (json.quality, json.specificity)
                    && graphql.specificity == 3 =>
            {
                Self::GraphqlResponseJson
            }
            _ => Self::Json,
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Self::GraphqlResponseJson => GRAPHQL_RESPONSE_JSON,
            Self::Json => JSON,
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Match {
    /// 0: no range matched; 1: `*/*`; 2: `application/*`; 3: the type itself.
    specificity: u8,
    quality: f32,
}

/// A POST body is JSON (`application/json`, in UTF-8); anything else,
/// including no `Content-Type`, is refused with 415 (the answer returned). Browsers send form and text bodies
/// cross-site without asking, so this also keeps such requests out.
pub fn refuse_unless_json(headers: &HeaderMap) -> Option<Response> {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or_default();
    let mut parts = content_type.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    let utf8 = parts.filter_map(|param| param.split_once('=')).all(|(name, value)| {
        !name.trim().eq_ignore_ascii_case("charset")
            || matches!(value.trim().trim_matches('"').to_ascii_lowercase().as_str(), "utf-8" | "utf8")
    });
    if essence.eq_ignore_ascii_case(JSON) && utf8 {
        return None;
    }
    let mut response =
        AppError::bad_request("POST /graphql takes a JSON body: send Content-Type: application/json").into_response();
    *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    Some(response)
}

/// One operation (`{"query", "operationName", "variables", "extensions"}`) or
/// a batch of at most MAX_BATCH. Parameters of the wrong type are refused
/// here rather than read as absent; `null` is the same as absent.
pub fn parse_body(body: &[u8]) -> AppResult<BatchRequest> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(AppError::bad_request("the request body is empty; send {\"query\": \"...\"}"));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| AppError::bad_request(format!("body is not a GraphQL request: {err}")))?;
    match value {
        Value::Object(params) => Ok(BatchRequest::Single(request(params)?)),
        Value::Array(items) if items.is_empty() => Err(AppError::bad_request("a batch needs at least one operation")),
        Value::Array(items) if items.len() > MAX_BATCH => {
            Err(AppError::bad_request(format!("at most {MAX_BATCH} operations per batch")))
        }
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::Object(params) => request(params),
                _ => Err(AppError::bad_request("each operation of a batch is a JSON object")),
            })
            .collect::<AppResult<Vec<_>>>()
            .map(BatchRequest::Batch),
        _ => Err(AppError::bad_request("body must be a JSON object, or an array of them for a batch")),
    }
}

fn request(mut params: Map<String, Value>) -> AppResult<async_graphql::Request> {
    params.retain(|_, value| !value.is_null());
    match params.get("query") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(AppError::validation("query", "must be a string")),
        None => return Err(AppError::validation("query", "is required")),
    }
    if params.get("operationName").is_some_and(|name| !name.is_string()) {
        return Err(AppError::validation("operationName", "must be a string"));
    }
    for key in ["variables", "extensions"] {
        if params.get(key).is_some_and(|value| !value.is_object()) {
            return Err(AppError::validation(key, "must be an object"));
        }
    }
    serde_json::from_value(Value::Object(params))
        .map_err(|err| AppError::bad_request(format!("body is not a GraphQL request: {err}")))
}

/// The answer to one request or a batch; `executed` has one marker per
/// operation, in order.
pub fn respond(media: MediaType, batch: BatchResponse, executed: &[Executed]) -> AppResult<Response> {
    let ran = |index: usize| executed.get(index).is_some_and(Executed::get);
    let (status, body) = match &batch {
        BatchResponse::Single(response) => {
            let request_error = !ran(0) && !response.errors.is_empty();
            let status = if request_error && media == MediaType::GraphqlResponseJson {
                request_error_status(response)
            } else {
                StatusCode::OK
            };
            (status, entry(response, request_error)?)
        }
        // Batches are outside the spec; each entry follows the rules above,
        // and the whole answers 200, unless no operation ran at all: then,
        // as for one operation, the first refusal's status.
        BatchResponse::Batch(responses) => {
            let refused = |index: usize, response: &async_graphql::Response| !ran(index) && !response.errors.is_empty();
            let entries = responses
                .iter()
                .enumerate()
                .map(|(index, response)| entry(response, refused(index, response)))
                .collect::<AppResult<Vec<_>>>()?;
            let all_refused = responses.iter().enumerate().all(|(index, response)| refused(index, response));
            let status = match responses.first() {
                Some(first) if all_refused && media == MediaType::GraphqlResponseJson => request_error_status(first),
                _ => StatusCode::OK,
            };
            (status, Value::Array(entries))
        }
    };
    // A spent read budget is an HTTP matter whatever the media type: 429 with
    // Retry-After, as REST answers it, when no operation ran for that reason.
    let responses: Vec<&async_graphql::Response> = match &batch {
        BatchResponse::Single(response) => vec![response],
        BatchResponse::Batch(responses) => responses.iter().collect(),
    };
    let budget_waits: Option<Vec<u64>> = responses
        .iter()
        .enumerate()
        .map(|(index, response)| if ran(index) { None } else { rate_limited(response) })
        .collect();
    let retry_after = budget_waits.and_then(|waits| waits.into_iter().max());
    let status = if retry_after.is_some() { StatusCode::TOO_MANY_REQUESTS } else { status };
    let mut answer = (status, [(header::CONTENT_TYPE, media.content_type())], body.to_string()).into_response();
    if let Some(secs) = retry_after {
        answer.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if batch.is_ok()
        && let Some(cache_control) = batch.cache_control().value()
        && let Ok(value) = HeaderValue::from_str(&cache_control)
    {
        answer.headers_mut().insert(header::CACHE_CONTROL, value);
    }
    // Resolvers set headers (the session cookie on sign-in).
    answer.headers_mut().extend(batch.http_headers());
    Ok(answer)
}

/// A response as JSON, without `data` when nothing was executed.
fn entry(response: &async_graphql::Response, request_error: bool) -> AppResult<Value> {
    let mut value = serde_json::to_value(response).map_err(AppError::internal)?;
    if request_error && let Value::Object(fields) = &mut value {
        fields.remove("data");
    }
    Ok(value)
}

/// The wait of a response that did not run because the caller's read budget
/// was spent.
fn rate_limited(response: &async_graphql::Response) -> Option<u64> {
    let [error] = response.errors.as_slice() else { return None };
    let refused = AppError::from(error);
    (refused.code == ErrorCode::RateLimited).then(|| refused.retry_after.unwrap_or(1))
}

/// The status of the first error's code; every code the request phase gives
/// (VALIDATION_ERROR, BAD_REQUEST) is a 400.
fn request_error_status(response: &async_graphql::Response) -> StatusCode {
    response
        .errors
        .first()
        .and_then(|err| err.extensions.as_ref())
        .and_then(|ext| ext.get("code"))
        .and_then(|code| match code {
            async_graphql::Value::String(code) => ErrorCode::parse(code),
            _ => None,
        })
        .map_or(StatusCode::BAD_REQUEST, ErrorCode::status)
        .max(StatusCode::BAD_REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn negotiate(accept: Option<&str>) -> MediaType {
        let mut headers = HeaderMap::new();
        if let Some(accept) = accept {
            headers.insert(header::ACCEPT, HeaderValue::from_str(accept).expect("a header value"));
        }
        MediaType::negotiate(&headers)
    }

    #[test]
    fn accept_chooses_the_media_type() {
        use MediaType::{GraphqlResponseJson as Graphql, Json};
        for (accept, expected) in [
            (None, Json),
            (Some(""), Json),
            (Some("*/*"), Json),
            (Some("application/*"), Json),
            (Some("text/html"), Json),
            (Some("application/json"), Json),
            (Some("application/graphql-response+json"), Graphql),
            (Some("application/graphql-response+json, application/json;q=0.9"), Graphql),
            (Some("application/json, application/graphql-response+json"), Graphql),
            (Some("application/json;q=1, application/graphql-response+json;q=0.5"), Json),
            (Some("application/graphql-response+json;q=0, */*"), Json),
            (Some("Application/GraphQL-Response+JSON; charset=utf-8"), Graphql),
            (Some("application/json, */*;q=0.5"), Json),
            (Some("application/graphql-response+json;q=0.2, */*;q=0.1"), Graphql),
            (Some("application/json;q=0"), Json),
        ] {
            assert_eq!(negotiate(accept), expected, "{accept:?}");
        }
    }

    fn content_type(value: Option<&str>) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(value) = value {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(value).expect("a header value"));
        }
        refuse_unless_json(&headers).is_none()
    }

    #[test]
    fn only_json_bodies_are_taken() {
        for accepted in ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\""] {
            assert!(content_type(Some(accepted)), "{accepted}");
        }
        for refused in [
            None,
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            Some("application/graphql"),
            Some("application/json; charset=latin1"),
            Some("application/jsonx"),
        ] {
            assert!(!content_type(refused), "{refused:?}");
        }
    }

    #[test]
    fn parameters_of_the_wrong_type_are_refused() {
        for body in [
            "",
            "  ",
            "[]",
            "1",
            "\"{ a }\"",
            r#"{"notquery": "{ a }"}"#,
            r#"{"query": 1}"#,
            r#"{"query": ["{ a }"]}"#,
            r#"{"query": "{ a }", "operationName": 0}"#,
            r#"{"query": "{ a }", "variables": "{}"}"#,
            r#"{"query": "{ a }", "extensions": []}"#,
            r#"[{"query": "{ a }"}, 1]"#,
        ] {
            assert!(parse_body(body.as_bytes()).is_err(), "{body}");
        }
        let single = r#"{"query": "{ a }", "operationName": null, "variables": null, "extensions": null}"#;
        assert!(matches!(parse_body(single.as_bytes()), Ok(BatchRequest::Single(_))));
        let batch = r#"[{"query": "{ a }", "variables": {"x": 1}}, {"query": "{ b }"}]"#;
        assert!(matches!(parse_body(batch.as_bytes()), Ok(BatchRequest::Batch(requests)) if requests.len() == 2));
    }
}
