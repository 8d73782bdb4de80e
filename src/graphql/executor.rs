//! The one way a GraphQL document runs in this process. `/graphql`, its
//! WebSocket, every REST route and every web page hand their document,
//! variables and caller to this module; it attaches what resolvers read (the
//! request, the operation's database gate and its DataLoaders) in one place
//! and answers typed data or an `AppError`, with no HTTP answer built and
//! read back on the way.

use async_graphql::{
    Data, Variables,
    parser::{
        parse_query,
        types::{ExecutableDocument, Selection, SelectionSet},
    },
};
use async_graphql_value::Value;
use axum::http::HeaderMap;
use serde::de::DeserializeOwned;

use super::{AppSchema, gate::Gate, loaders};
use crate::{
    auth::RequestContext,
    error::{AppError, AppResult},
    state::AppState,
};

/// Gives one operation what its resolvers read.
pub fn prepare(request: async_graphql::Request, app: &AppState, ctx: RequestContext) -> async_graphql::Request {
    let gate = Gate::new(app);
    request.data(ctx).data(loaders::per_request(gate.clone())).data(gate)
}

/// The same for a WebSocket connection, whose operations share one gate.
pub fn connection_data(app: &AppState, ctx: RequestContext) -> Data {
    let gate = Gate::new(app);
    let mut data = Data::default();
    data.insert(ctx);
    data.insert(loaders::per_request(gate.clone()));
    data.insert(gate);
    data
}

/// A document's answer: its `data`, and the headers its resolvers set (the
/// session cookie on sign-in and sign-out).
pub struct Answer {
    pub data: async_graphql::Value,
    pub headers: HeaderMap,
}

impl Answer {
    /// The data as JSON, for a REST body.
    pub fn json(self) -> AppResult<(serde_json::Value, HeaderMap)> {
        Ok((self.data.into_json().map_err(AppError::internal)?, self.headers))
    }

    /// The data as the caller's typed view of it (a page's view struct).
    pub fn decode<T: DeserializeOwned>(self) -> AppResult<T> {
        async_graphql::from_value(self.data).map_err(|err| AppError::internal(format!("document answer: {err}")))
    }
}

/// Runs `document` with `variables` as `ctx`'s caller. The first error, if
/// any, is the answer: documents run in process are written here and ask for
/// nothing that fails on its own. A refused input is named by the variable
/// the caller filled (`link_type` for a REST body, a form's own name), not
/// by the GraphQL argument it fed.
pub async fn run(
    schema: &AppSchema,
    app: &AppState,
    ctx: RequestContext,
    document: &'static str,
    variables: serde_json::Value,
) -> AppResult<Answer> {
    let request = async_graphql::Request::new(document).variables(Variables::from_json(variables));
    let response = schema.execute(prepare(request, app, ctx)).await;
    if let Some(error) = response.errors.first() {
        let error = AppError::from(error);
        let parsed = parse_query(document).ok();
        let variable =
            parsed.as_ref().zip(error.field.as_deref()).and_then(|(parsed, field)| variable_for(parsed, field));
        return Err(match variable {
            Some(variable) => error.renamed(variable),
            None => error,
        });
    }
    Ok(Answer { data: response.data, headers: response.http_headers })
}

/// The variable of `document` that fills the argument at `path` (`slug`, or
/// `input.linkType` for a field of an input object), in any field.
fn variable_for(document: &ExecutableDocument, path: &str) -> Option<String> {
    let (argument, inner) = match path.split_once('.') {
        Some((argument, inner)) => (argument, Some(inner)),
        None => (path, None),
    };
    // An item of a list field (`steps[1]`) is named after the list's variable.
    let (inner, item) = match inner.and_then(|inner| inner.find('[').map(|at| inner.split_at(at))) {
        Some((field, item)) => (Some(field), item),
        None => (inner, ""),
    };
    let mut sets: Vec<&SelectionSet> = document.operations.iter().map(|(_, op)| &op.node.selection_set.node).collect();
    sets.extend(document.fragments.values().map(|fragment| &fragment.node.selection_set.node));
    while let Some(set) = sets.pop() {
        for selection in &set.items {
            match &selection.node {
                Selection::Field(field) => {
                    for (name, value) in &field.node.arguments {
                        if name.node != argument {
                            continue;
                        }
                        let value = match (inner, &value.node) {
                            (None, value) => value,
                            (Some(inner), Value::Object(fields)) => match fields.get(inner) {
                                Some(value) => value,
                                None => continue,
                            },
                            // The whole input object is one variable: the
                            // field is inside it.
                            (Some(inner), Value::Variable(variable)) => {
                                return Some(format!("{variable}.{inner}{item}"));
                            }
                            _ => continue,
                        };
                        if let Value::Variable(variable) = value {
                            return Some(format!("{variable}{item}"));
                        }
                    }
                    sets.push(&field.node.selection_set.node);
                }
                Selection::InlineFragment(inline) => sets.push(&inline.node.selection_set.node),
                Selection::FragmentSpread(_) => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_argument_is_named_by_the_variable_that_filled_it() {
        let document = r#"
            mutation Create($siteId: Int!, $link_type: String, $dest: String!, $changes: SiteUpdateInput!) {
              createLink(input: { siteId: $siteId, linkType: $link_type, destinationUrl: $dest, slug: "fixed" }) { id }
              updateSite(id: 1, patch: $changes) { id }
            }
            query Stats($range: String) { ...F }
            fragment F on Query { stats(siteId: 1, timeRange: $range) { timeRange } }
        "#;
        let document = parse_query(document).unwrap();
        for (path, variable) in [
            ("input.linkType", Some("link_type")),
            ("input.destinationUrl", Some("dest")),
            ("input.slug", None),
            ("patch.name", Some("changes.name")),
            ("input.nope", None),
            ("timeRange", Some("range")),
            ("siteId", None),
        ] {
            assert_eq!(variable_for(&document, path).as_deref(), variable, "{path}");
        }
    }
}
