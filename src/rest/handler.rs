//! The one handler every REST row runs: the caller first (401 before any
//! input is looked at), then the path, query and body become the document's
//! variables, the bridge runs the document, and the row's output is answered.

use std::collections::HashMap;

use axum::{
    extract::{RawPathParams, RawQuery},
    response::Response,
    routing::{MethodFilter, MethodRouter, on},
};
use serde_json::{Map, Value};

use super::{
    bridge::{Bridge, PublicBridge},
    operation::{Body, Kind, Operation, Output, Param},
};
use crate::{
    error::{AppError, AppResult},
    request::extract::JsonBody,
    server::RouterState,
};

/// The method router for one row.
pub fn route(op: &'static Operation) -> MethodRouter<RouterState> {
    let filter = match op.method {
        "GET" => MethodFilter::GET,
        "POST" => MethodFilter::POST,
        "PUT" => MethodFilter::PUT,
        "DELETE" => MethodFilter::DELETE,
        other => panic!("route table: unsupported method {other}"),
    };
    if op.public {
        on(filter, move |PublicBridge(bridge): PublicBridge, path: RawPathParams, RawQuery(query), body: JsonBody| {
            run(op, bridge, path, query, body)
        })
    } else {
        on(filter, move |bridge: Bridge, path: RawPathParams, RawQuery(query), body: JsonBody| {
            run(op, bridge, path, query, body)
        })
    }
}

async fn run(
    op: &'static Operation,
    bridge: Bridge,
    path: RawPathParams,
    query: Option<String>,
    JsonBody(body): JsonBody,
) -> AppResult<Response> {
    let variables = match &op.body {
        Body::None => Map::new(),
        Body::Variables { .. } => body,
        Body::Mapped { map, .. } => map(body)?,
    };
    let variables = with_parameters(op, variables, &path, query.as_deref())?;
    if let Some(csv) = op.csv
        && wants_csv(query.as_deref())?
    {
        return csv(bridge, variables).await.map_err(|err| named_as_sent(op, err));
    }
    let output = bridge.run(op.document, Value::Object(variables)).await.map_err(|err| named_as_sent(op, err))?;
    Ok(match op.output {
        Output::Whole => output.whole(),
        Output::Field(name) => output.field(name),
        Output::Shaped(name, shape) => output.shaped(name, shape),
    })
}

/// Whether the query string asks for the CSV download (`format=csv`); JSON,
/// the default, is `format=json` or no `format`.
fn wants_csv(query: Option<&str>) -> AppResult<bool> {
    let format = query.and_then(|text| {
        url::form_urlencoded::parse(text.as_bytes()).find(|(name, _)| name == "format").map(|(_, value)| value)
    });
    match format.as_deref().map(str::trim) {
        None | Some("" | "json") => Ok(false),
        Some("csv") => Ok(true),
        Some(_) => Err(AppError::validation("format", "must be json or csv")),
    }
}

/// A refused input, named as the request named it: the query parameter
/// that filled the variable (`q` for `search`), or the body's own name when
/// the route reshaped its body.
fn named_as_sent(op: &Operation, err: AppError) -> AppError {
    let param =
        op.query.iter().find(|param| param.variable != param.name && err.field.as_deref() == Some(param.variable));
    if let Some(param) = param {
        return err.renamed(param.name.to_owned());
    }
    let Body::Mapped { field, .. } = &op.body else { return err };
    match err.field.as_deref().and_then(field) {
        Some(name) => err.renamed(name),
        None => err,
    }
}

/// Adds the row's path and query parameters to the variables, each converted to its kind.
pub fn with_parameters(
    op: &Operation,
    mut variables: Map<String, Value>,
    path: &RawPathParams,
    query: Option<&str>,
) -> AppResult<Map<String, Value>> {
    if let Some(param) = &op.path_param {
        let raw = path.iter().find(|(name, _)| *name == param.name).map(|(_, value)| value);
        set(&mut variables, param, raw)?;
    }
    let query: HashMap<String, String> =
        query.map(|text| url::form_urlencoded::parse(text.as_bytes()).into_owned().collect()).unwrap_or_default();
    for param in op.query {
        set(&mut variables, param, query.get(param.name).map(String::as_str))?;
    }
    Ok(variables)
}

/// Puts one parameter's value into the variables, converted to its kind.
fn set(variables: &mut Map<String, Value>, param: &Param, raw: Option<&str>) -> AppResult<()> {
    let value = match (raw, param.kind) {
        (None, _) if param.required => return Err(AppError::validation(param.name, "is required")),
        (None, _) => Value::Null,
        (Some(raw), Kind::Text) => Value::String(raw.to_owned()),
        (Some(raw), Kind::Int) => match raw.trim() {
            "" if param.required => return Err(AppError::validation(param.name, "is required")),
            "" => Value::Null,
            number => number
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| AppError::validation(param.name, "must be a number"))?,
        },
        (Some(raw), Kind::Bool) => match raw.trim() {
            "" => Value::Null,
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => return Err(AppError::validation(param.name, "must be true or false")),
        },
        (Some(raw), Kind::SiteId) => raw.parse::<i64>().map(Value::from).map_err(|_| AppError::not_found("site"))?,
    };
    variables.insert(param.variable.to_owned(), value);
    Ok(())
}
