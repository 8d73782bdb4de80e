//! The collect endpoint's wire format: one event, or `{"events": [...]}`.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{AppError, AppResult, ErrorCode};

pub const MAX_EVENTS: usize = 100;
pub const MAX_URL_LEN: usize = 2048;
pub const MAX_TITLE_LEN: usize = 512;
pub const MAX_VID_LEN: usize = 128;
pub const MAX_EVENT_NAME_LEN: usize = 128;
pub const MAX_PROPS_BYTES: usize = 4096;
pub const MAX_CLICK_KEY_LEN: usize = 64;

/// When an event happened: epoch milliseconds or an ISO 8601 string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum WireTime {
    Millis(i64),
    Iso(String),
}

#[derive(Debug, Deserialize)]
pub struct WireEvent {
    pub site: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub tracker_vid: Option<String>,
    pub url: String,
    pub title: Option<String>,
    pub referrer: Option<String>,
    pub event_name: Option<String>,
    pub props: Option<Map<String, Value>>,
    pub ts: Option<WireTime>,
    pub engaged_ms: Option<i64>,
    pub lt_click: Option<String>,
    /// A custom event's revenue (design §20).
    pub revenue: Option<WireRevenue>,
}

/// `{"amount": "19.99", "currency": "USD"}`: the amount as a string or a
/// number, read exactly.
#[derive(Debug, Deserialize)]
pub struct WireRevenue {
    pub amount: Value,
    pub currency: String,
}

/// Parses a body of one event or a batch, naming the offending field on error.
pub fn parse(body: &[u8]) -> AppResult<Vec<WireEvent>> {
    let value: Value =
        serde_json::from_slice(body).map_err(|err| AppError::bad_request(format!("malformed JSON: {err}")))?;
    let (events, prefix) = match value {
        Value::Object(mut object) if object.contains_key("events") => {
            let events = object.remove("events").unwrap_or(Value::Null);
            let Value::Array(list) = events else {
                return Err(AppError::validation("events", "must be an array"));
            };
            if list.is_empty() {
                return Err(AppError::validation("events", "must not be empty"));
            }
            if list.len() > MAX_EVENTS {
                return Err(AppError::new(
                    ErrorCode::PayloadTooLarge,
                    format!("events: at most {MAX_EVENTS} per request"),
                ));
            }
            (list, "events")
        }
        Value::Object(object) => (vec![Value::Object(object)], ""),
        _ => {
            return Err(AppError::bad_request("body must be an event object or {\"events\": [...]}"));
        }
    };
    events
        .into_iter()
        .enumerate()
        .map(|(index, event)| {
            serde_path_to_error::deserialize(event).map_err(|err| {
                let path = err.path().to_string();
                let field = if prefix.is_empty() { path } else { format!("{prefix}[{index}].{path}") };
                AppError::validation(&field, err.into_inner())
            })
        })
        .collect()
}
