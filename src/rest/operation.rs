//! What a row of the REST table is: a route's method, path, GraphQL
//! document, parameters, body and answer (`routes` holds the rows).

use serde_json::{Map, Value};

use axum::routing::MethodRouter;

use super::bridge::Bridge;
use crate::{error::AppResult, server::RouterState};

/// Which part of the GraphQL answer is the REST answer.
pub enum Output {
    /// The whole `data` object (the document's aliases give the REST names).
    Whole,
    /// One top-level field of `data`.
    Field(&'static str),
    /// One top-level field of `data`, reshaped (a wire format that leaves
    /// out what GraphQL answers as null).
    Shaped(&'static str, fn(Value) -> Value),
}

/// How a query or path value becomes a GraphQL variable.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A number; anything else is 400 `VALIDATION_ERROR`.
    Int,
    /// `true` or `false` (also `1` or `0`); anything else is 400.
    Bool,
    Text,
    /// A site id in the path; anything but a number names no site (404).
    SiteId,
}

impl Kind {
    pub fn json_type(self) -> &'static str {
        match self {
            Kind::Int | Kind::SiteId => "integer",
            Kind::Bool => "boolean",
            Kind::Text => "string",
        }
    }
}

/// A query-string or path parameter and the variable it fills.
pub struct Param {
    pub name: &'static str,
    pub variable: &'static str,
    pub kind: Kind,
    pub required: bool,
}

pub(super) const fn param(name: &'static str, kind: Kind, required: bool) -> Param {
    Param { name, variable: name, kind, required }
}

/// A JSON schema, built when the OpenAPI document is.
pub type SchemaFn = fn() -> Value;
/// Reshapes a REST body into the document's variables.
pub type BodyMap = fn(Map<String, Value>) -> AppResult<Map<String, Value>>;
/// The body field a refused variable path (`input.linkType`) came from.
pub type FieldMap = fn(&str) -> Option<String>;

/// Where the JSON body goes.
pub enum Body {
    None,
    /// The body's fields are the document's variables, less those taken from
    /// the path or query.
    Variables {
        except: &'static [&'static str],
    },
    /// A body the route reshapes before it becomes the variables; `schema`
    /// describes it for OpenAPI, `field` names a refused input as the body
    /// did.
    Mapped {
        schema: SchemaFn,
        map: BodyMap,
        field: FieldMap,
    },
}

/// A route that cannot be one GraphQL document (a streamed download): its own
/// method router, and the schema of its answer for OpenAPI.
pub struct Hook {
    pub route: fn(&'static Operation) -> MethodRouter<RouterState>,
    pub answer: SchemaFn,
}

/// A route that also answers as a streamed CSV download with `format=csv`:
/// it gets the route's variables, as the document would.
pub type CsvDownload =
    fn(Bridge, Map<String, Value>) -> futures_util::future::BoxFuture<'static, AppResult<axum::response::Response>>;

pub struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    pub id: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    /// The GraphQL document the route runs.
    pub document: &'static str,
    pub output: Output,
    /// The `{id}` segment, when the path has one.
    pub path_param: Option<Param>,
    pub query: &'static [Param],
    pub body: Body,
    /// Works without a session.
    pub public: bool,
    /// Answers with its own handler instead of the document's output.
    pub hook: Option<Hook>,
    /// With `format=csv`, answers every matching row as CSV instead.
    pub csv: Option<CsvDownload>,
}

pub(super) const fn op(
    method: &'static str,
    path: &'static str,
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
) -> Operation {
    Operation {
        method,
        path,
        id,
        tag,
        summary,
        document: "",
        output: Output::Whole,
        path_param: None,
        query: &[],
        body: Body::None,
        public: false,
        hook: None,
        csv: None,
    }
}
