//! The few GraphQL types every capability uses; the others live beside their queries.

use async_graphql::{ID, InputValueError, InputValueResult, Scalar, ScalarType, SimpleObject, Value};

use crate::time;

/// An instant, as an ISO 8601 UTC string with milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp(pub i64);

#[Scalar(name = "Timestamp")]
impl ScalarType for Timestamp {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(text) => time::parse_iso(text)
                .map(Timestamp)
                .ok_or_else(|| InputValueError::custom("expected an ISO 8601 timestamp")),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(text) if time::parse_iso(text).is_some())
    }

    fn to_value(&self) -> Value {
        Value::String(time::iso(self.0))
    }
}

/// Parses an id argument; a malformed id is just an id that does not exist.
pub fn parse_id(id: &ID, what: &str) -> crate::error::AppResult<i64> {
    id.parse::<i64>().map_err(|_| crate::error::AppError::not_found(what))
}

#[derive(SimpleObject)]
pub struct SuccessPayload {
    pub success: bool,
}
