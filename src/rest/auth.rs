//! What only the REST face of the account API knows: Better Auth's
//! `image: null`, which a GraphQL variable cannot tell from absent.

use serde_json::{Map, Value, json};

use super::openapi::fields;
use crate::error::AppResult;

/// The body of update-user: `name`, `image`, or both; a null name is no name.
pub fn update_user_body() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "anyOf": [fields::person_name(), { "type": "null" }] },
            "image": { "anyOf": [fields::image(), { "type": "null" }] },
        },
        "anyOf": [
            { "required": ["name"], "properties": { "name": { "type": "string" } } },
            { "required": ["image"] },
        ],
    })
}

/// Better Auth removes the image with `image: null`; the document gets the
/// empty string, which means the same.
pub fn update_user_input(mut body: Map<String, Value>) -> AppResult<Map<String, Value>> {
    if body.get("image") == Some(&Value::Null) {
        body.insert("image".to_owned(), Value::String(String::new()));
    }
    Ok(body)
}
