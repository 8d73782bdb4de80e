//! The OpenAPI 3.1 document for the REST API and the public endpoints, served
//! at `/api/openapi.json`, with Swagger UI at `/docs`. Answer and body schemas
//! come from each route's GraphQL document (see `schema`); this file adds what
//! only the REST face knows: paths, query parameters and status codes.

pub(super) mod fields;
mod public;
mod rules;
pub mod schema;

use serde_json::{Map, Value, json};
use tokio::sync::OnceCell;

use crate::{error::AppError, graphql};

use super::{
    operation::{Body, Operation, Output},
    routes::OPERATIONS,
};

/// The document is the same for the life of the process; build it once.
static DOCUMENT: OnceCell<Value> = OnceCell::const_new();

pub async fn document() -> Result<&'static Value, AppError> {
    DOCUMENT
        .get_or_try_init(|| async {
            let response = graphql::introspection_schema().execute(schema::INTROSPECTION).await;
            if let Some(error) = response.errors.first() {
                return Err(AppError::internal(&error.message));
            }
            let data = response.data.into_json().map_err(AppError::internal)?;
            build(&schema::Types::from_introspection(&data)).map_err(AppError::internal)
        })
        .await
}

pub async fn serve() -> axum::response::Response {
    use axum::response::IntoResponse;
    match document().await {
        Ok(document) => axum::Json(document).into_response(),
        Err(err) => err.into_response(),
    }
}

fn error_responses(statuses: &[u16]) -> Map<String, Value> {
    statuses
        .iter()
        .map(|status| {
            let mut response = json!({
                "description": error_description(*status),
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } },
            });
            if matches!(status, 429 | 503) {
                response["headers"] = json!({
                    "Retry-After": { "description": "Seconds to wait", "required": true, "schema": { "type": "integer", "minimum": 1 } },
                });
            }
            (status.to_string(), response)
        })
        .collect()
}

fn error_description(status: u16) -> &'static str {
    match status {
        400 => "Invalid input; `message` names the field",
        401 => "No valid session or API key; on sign-in, a wrong email or password",
        403 => "The role is too weak (FORBIDDEN), or the request came from another site (INVALID_ORIGIN)",
        404 => "Not found, or another tenant's",
        405 => "Method not allowed",
        409 => "Conflict (slug, email or membership)",
        410 => "The link is inactive, expired or used up",
        413 => "The body is too large",
        415 => "The body is not application/json (code BAD_REQUEST)",
        429 => "Rate limited; see Retry-After",
        502 => "The webhook target failed",
        503 => "Overloaded or the database is unavailable; see Retry-After",
        _ => "Error",
    }
}

/// `{id}` segments of a path.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({ "name": name, "in": "path", "required": true, "schema": fields::any_text() }))
        .collect()
}

fn operation_object(types: &schema::Types, op: &Operation) -> Result<Value, String> {
    let (answer, variables) = match &op.hook {
        Some(hook) => ((hook.answer)(), Vec::new()),
        None => {
            let schemas = schema::document(types, op.document)?;
            let answer = match op.output {
                Output::Whole => schemas.data.clone(),
                Output::Field(name) | Output::Shaped(name, _) => schemas.data["properties"][name].clone(),
            };
            (answer, schemas.variables)
        }
    };
    let mut parameters = path_parameters(op.path);
    for param in op.query {
        let mut schema = rules::query_parameter(param);
        if let Some(rule) = rules::field(op.id, param.name) {
            rules::merge(&mut schema, &rule);
        }
        parameters.push(json!({ "name": param.name, "in": "query", "required": param.required, "schema": schema }));
    }
    if op.csv.is_some() {
        parameters.push(json!({
            "name": "format", "in": "query", "required": false,
            "description": "`csv` answers every matching row (not one page) as a CSV download",
            "schema": fields::choice(&["json", "csv"], true),
        }));
    }
    let mut object = json!({
        "operationId": op.id,
        "summary": op.summary,
        "tags": [op.tag],
        "parameters": parameters,
        "responses": { "200": { "description": "Success", "content": { "application/json": { "schema": answer } } } },
    });
    let body = match &op.body {
        Body::None => None,
        Body::Variables { except } => {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for (name, schema, needed) in variables.iter().filter(|(name, _, _)| !except.contains(&name.as_str())) {
                properties.insert(name.clone(), schema.clone());
                if *needed {
                    required.push(json!(name));
                }
            }
            Some(json!({ "type": "object", "properties": properties, "required": required }))
        }
        Body::Mapped { schema, .. } => Some(schema()),
    };
    if let Some(mut body) = body {
        rules::apply_to_body(op.id, &mut body);
        let required = rules::body_required(&body);
        object["requestBody"] = json!({ "required": required, "content": { "application/json": { "schema": body } } });
    }
    if op.csv.is_some() {
        object["responses"]["200"]["content"]["text/csv"] = json!({ "schema": { "type": "string" } });
    }
    if let Some(responses) = object["responses"].as_object_mut() {
        responses.extend(error_responses(&rules::statuses(op)));
    }
    if op.public {
        object["security"] = json!([]);
    }
    Ok(object)
}

/// The whole document.
pub fn build(types: &schema::Types) -> Result<Value, String> {
    let mut paths: Map<String, Value> = Map::new();
    for op in OPERATIONS {
        let item = paths.entry(op.path.to_owned()).or_insert_with(|| json!({}));
        item[op.method.to_lowercase()] = operation_object(types, op)?;
    }
    for (path, method, object) in public::operations() {
        let item = paths.entry(path.to_owned()).or_insert_with(|| json!({}));
        item[method] = object;
    }
    Ok(json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Leadtrail",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Web-visitor analytics and lead intelligence. Every /api route is also reachable as GraphQL at /graphql.",
        },
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "code": { "type": "string" },
                        "message": { "type": "string" },
                        "field": { "type": "string", "description": "The input at fault, as the request named it." },
                    },
                    "required": ["code", "message"],
                },
            },
            "securitySchemes": {
                "session": { "type": "apiKey", "in": "cookie", "name": "session" },
                "apiKey": { "type": "http", "scheme": "bearer" },
            },
        },
        "security": [{ "session": [] }, { "apiKey": [] }],
    }))
}
