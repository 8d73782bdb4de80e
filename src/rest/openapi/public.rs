//! The public endpoints that do not go through GraphQL.

use serde_json::{Value, json};

fn error(description: &str) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } } })
}

fn event_schema() -> Value {
    let text = super::fields::any_text();
    // The collector reads numbers as 64-bit integers.
    let int64 = json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX });
    json!({
        "type": "object",
        "required": ["site", "type", "url"],
        "properties": {
            "site": int64,
            "type": { "type": "string", "enum": ["pageview", "custom_event", "ping"] },
            "tracker_vid": super::fields::visitor_id(), "url": text, "title": text, "referrer": text, "event_name": text,
            "props": { "type": "object" },
            "ts": { "anyOf": [int64, { "type": "string" }] },
            "engaged_ms": int64,
            "lt_click": text,
            "revenue": {
                "type": "object",
                "description": "A custom event's revenue: the exact amount (string or number) and its ISO 4217 currency",
                "required": ["amount", "currency"],
                "properties": { "amount": { "type": ["string", "number"] }, "currency": text },
            },
        },
    })
}

fn link_parameters() -> Value {
    json!([
        { "name": "site", "in": "path", "required": true, "schema": super::fields::any_text() },
        { "name": "link", "in": "path", "required": true, "schema": super::fields::any_text() },
    ])
}

/// (path, method, operation object).
pub fn operations() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "/api/collect",
            "post",
            json!({
                "operationId": "collect", "tags": ["collection"], "security": [],
                "summary": "Record one event or a batch of at most 100 (JSON sent as application/json or text/plain)",
                "requestBody": { "required": true, "content": {
                    "application/json": { "schema": { "anyOf": [event_schema(), {
                        "type": "object", "required": ["events"],
                        "properties": { "events": { "type": "array", "items": event_schema(), "minItems": 1, "maxItems": 100 } },
                    }]}},
                }},
                "responses": {
                    "202": { "description": "Accepted and queued for storage", "content": { "application/json": { "schema": {
                        "type": "object", "required": ["accepted"], "properties": { "accepted": { "type": "integer" } },
                    }}}},
                    "400": error("Invalid event; `message` names the field"),
                    "404": error("Unknown site"),
                    "413": error("More than 100 events or too large a body"),
                    "429": error("Rate limited; see Retry-After"),
                    "503": error("The write queue is full or the database is unavailable"),
                },
            }),
        ),
        (
            "/l/{site}/{link}",
            "get",
            json!({
                "operationId": "redirect", "tags": ["links"], "security": [], "parameters": link_parameters(),
                "summary": "Follow a tracking link: 302 to the destination with UTM labels and lt_click",
                "responses": {
                    "302": { "description": "Redirect", "headers": { "Location": { "schema": { "type": "string" } } } },
                    "404": { "description": "Unknown link: a small page for the person who followed it", "content": { "text/html": { "schema": { "type": "string" } } } },
                    "410": { "description": "Inactive, expired or used up", "content": { "text/html": { "schema": { "type": "string" } } } },
                },
            }),
        ),
        (
            "/l/{site}/{link}/qr.svg",
            "get",
            json!({
                "operationId": "qrCode", "tags": ["links"], "security": [], "parameters": link_parameters(),
                "summary": "The link as a QR code",
                "responses": {
                    "200": { "description": "SVG", "content": { "image/svg+xml": { "schema": { "type": "string" } } } },
                    "404": error("Unknown link"),
                },
            }),
        ),
        (
            "/script.js",
            "get",
            json!({
                "operationId": "trackerScript", "tags": ["collection"], "security": [],
                "summary": "The tracker script",
                "responses": {
                    "200": { "description": "JavaScript", "content": { "text/javascript": { "schema": { "type": "string" } } } },
                    "304": { "description": "Not modified" },
                },
            }),
        ),
        (
            "/api/openapi.json",
            "get",
            json!({
                "operationId": "openapi", "tags": ["docs"], "security": [],
                "summary": "This document",
                "responses": { "200": { "description": "OpenAPI 3.1", "content": { "application/json": { "schema": { "type": "object" } } } } },
            }),
        ),
    ]
}
