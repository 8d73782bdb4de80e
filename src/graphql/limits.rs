//! What one GraphQL operation may ask for. Every refusal here carries
//! `extensions.code` BAD_REQUEST and happens before any resolver runs, except
//! the introspection budget, which counts while the answer is built.
//!
//! Introspection is held to a budget instead of the depth limit: the standard
//! introspection query of GraphQL tooling (graphql-js's `getIntrospectionQuery`)
//! nests `ofType` seven levels deep, past any depth limit that suits real
//! queries, yet it is cheap. What makes introspection expensive is fan-out
//! (`types { fields { type { fields ... } } }`), which depth does not measure
//! and the budget does.

use std::{
    collections::HashSet,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use async_graphql::{
    Response, ServerError, ServerResult, ValidationResult, Value, Variables,
    extensions::{
        Extension, ExtensionContext, ExtensionFactory, NextExecute, NextParseQuery, NextRequest, NextResolve,
        NextSubscribe, NextValidation, ResolveInfo,
    },
    parser::types::{ExecutableDocument, OperationType, Selection, SelectionSet},
    registry::{MetaType, Registry},
};

use futures_util::stream::{BoxStream, StreamExt};

use super::{errors::with_codes, gate::Gate};
use crate::{auth::RequestContext, error::AppError, state::AppState};

/// Deep enough for every nested query we document, shallow enough to stop
/// abuse. Queries that select only introspection are exempt (`Limits`).
pub const MAX_DEPTH: usize = 12;
/// Lists count their rows (`cost`): a page of 500 visitors with the list's
/// fields, or one full profile, fits; 500 visitors with their sessions' events
/// does not.
pub const MAX_COMPLEXITY: usize = crate::config::MAX_OPERATION_COST;
/// Operations in one batched request.
pub const MAX_BATCH: usize = 10;
/// Top-level fields one operation may select, aliases counted: each is a
/// read of its own, and a page's document needs a handful.
pub const MAX_ROOT_FIELDS: usize = 20;

/// Introspection fields one request may resolve. graphql-js's full
/// introspection query resolves about 8,000 of them on this schema; the
/// margin lets the schema grow several times over, while a query that
/// multiplies lists (`types { fields { type { fields ... } } }`, repeated under
/// aliases) stops after a bounded amount of work.
pub const INTROSPECTION_BUDGET: usize = 100_000;

/// The `Limits` extension; `introspection` is the `GRAPHQL_INTROSPECTION` switch.
pub struct Limits {
    pub introspection: bool,
}

impl ExtensionFactory for Limits {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(LimitsExtension {
            introspection: self.introspection,
            introspection_only: AtomicBool::new(false),
            budget: AtomicUsize::new(INTROSPECTION_BUDGET),
            over_budget: AtomicBool::new(false),
        })
    }
}

/// Set when an operation was executed, so its answer has a `data` entry; the
/// HTTP face puts one in a request's data and reads it afterwards.
#[derive(Clone, Default)]
pub struct Executed(Arc<AtomicBool>);

impl Executed {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// One per request (`create` runs for each), so the state needs no reset.
struct LimitsExtension {
    introspection: bool,
    introspection_only: AtomicBool,
    budget: AtomicUsize,
    over_budget: AtomicBool,
}

/// A refusal: the request asked for more than this server answers.
pub fn refusal(message: impl Into<String>) -> ServerError {
    refused(AppError::bad_request(message))
}

/// A refusal before any resolver runs, with `err`'s code, message, field and wait.
fn refused(err: AppError) -> ServerError {
    let mut refusal = ServerError::new(err.message, None);
    let extensions = refusal.extensions.get_or_insert_with(Default::default);
    extensions.set("code", err.code.as_str());
    if let Some(field) = err.field {
        extensions.set("field", field);
    }
    if let Some(secs) = err.retry_after {
        extensions.set("retryAfter", secs);
    }
    refusal
}

#[async_graphql::async_trait::async_trait]
impl Extension for LimitsExtension {
    /// The error boundary rides on this extension too: every extension costs
    /// a call per resolved field, so the schema has only one.
    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        with_codes(next.run(ctx).await)
    }

    fn subscribe<'s>(
        &self,
        ctx: &ExtensionContext<'_>,
        stream: BoxStream<'s, Response>,
        next: NextSubscribe<'_>,
    ) -> BoxStream<'s, Response> {
        next.run(ctx, stream).map(with_codes).boxed()
    }

    async fn parse_query(
        &self,
        ctx: &ExtensionContext<'_>,
        query: &str,
        variables: &Variables,
        next: NextParseQuery<'_>,
    ) -> ServerResult<ExecutableDocument> {
        if super::nul::in_source(query) {
            return Err(refused(AppError::nul_character("query")));
        }
        let document = next.run(ctx, query, variables).await?;
        let field_types = |input: &str, field: &str| match ctx.schema_env.registry.types.get(input) {
            Some(MetaType::InputObject { input_fields, .. }) => {
                input_fields.get(field).map(|value| value.ty.trim_matches(|c| matches!(c, '[' | ']' | '!')).to_owned())
            }
            _ => None,
        };
        if let Some(path) = super::nul::in_variables(&document, variables, &field_types) {
            return Err(refused(AppError::nul_character(&path)));
        }
        let types = RegistryTypes(&ctx.schema_env.registry);
        if let Some((path, problem)) = super::variables::wrong_type(&document, variables, &types) {
            return Err(refused(AppError::validation(&path, problem)));
        }
        let roots = RootFields::of(&document);
        if roots.introspection && !self.introspection {
            return Err(refusal("introspection is turned off on this server (GRAPHQL_INTROSPECTION)"));
        }
        if roots.most > MAX_ROOT_FIELDS {
            return Err(refusal(format!(
                "Query selects {} top-level fields in one operation, at most {MAX_ROOT_FIELDS}",
                roots.most
            )));
        }
        self.introspection_only.store(roots.only_introspection, Ordering::Relaxed);
        if let Some(gate) = ctx.data_opt::<Gate>() {
            gate.parsed(roots.mutation);
        }
        Ok(document)
    }

    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let result = next.run(ctx).await?;
        if result.complexity > MAX_COMPLEXITY {
            return Err(vec![refusal(format!(
                "Query is too complex: it may return {} rows and fields, at most {MAX_COMPLEXITY}",
                result.complexity
            ))]);
        }
        if result.depth > MAX_DEPTH && !self.introspection_only.load(Ordering::Relaxed) {
            return Err(vec![refusal(format!(
                "Query is nested too deep: {} levels, at most {MAX_DEPTH}",
                result.depth
            ))]);
        }
        // The caller's read budget pays for the operation before it runs.
        if let (Some(app), Some(request)) = (ctx.data_opt::<AppState>(), ctx.data_opt::<RequestContext>()) {
            app.read_budget.charge(request, result.complexity).map_err(|err| vec![refused(err)])?;
        }
        Ok(result)
    }

    async fn execute(
        &self,
        ctx: &ExtensionContext<'_>,
        operation_name: Option<&str>,
        next: NextExecute<'_>,
    ) -> Response {
        let response = next.run(ctx, operation_name).await;
        // A part of a schema is worse than none: drop what was built.
        if self.over_budget.load(Ordering::Relaxed) {
            return Response::from_errors(vec![refusal(format!(
                "Introspection is too large: at most {INTROSPECTION_BUDGET} introspection fields per request"
            ))]);
        }
        if let Some(executed) = ctx.data_opt::<Executed>() {
            executed.0.store(true, Ordering::Relaxed);
        }
        response
    }

    async fn resolve(
        &self,
        ctx: &ExtensionContext<'_>,
        info: ResolveInfo<'_>,
        next: NextResolve<'_>,
    ) -> ServerResult<Option<Value>> {
        if info.is_for_introspection
            && self.budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(1)).is_err()
        {
            // Stop building without an error per field; `execute` reports it
            // once. List items must answer Some.
            self.over_budget.store(true, Ordering::Relaxed);
            return Ok(Some(Value::Null));
        }
        let (parent, name) = (info.parent_type, info.name);
        next.run(ctx, info).await.map_err(|err| qualify_field(&ctx.schema_env.registry, parent, name, err))
    }
}

/// The schema's types, as the variable check reads them.
struct RegistryTypes<'a>(&'a Registry);

impl super::variables::Types for RegistryTypes<'_> {
    fn input_fields(&self, name: &str) -> Option<Vec<(String, String, bool)>> {
        match self.0.types.get(name) {
            Some(MetaType::InputObject { input_fields, .. }) => Some(
                input_fields
                    .values()
                    .map(|field| (field.name.clone(), field.ty.clone(), field.default_value.is_some()))
                    .collect(),
            ),
            _ => None,
        }
    }

    fn accepts(&self, name: &str, value: &Value) -> bool {
        match self.0.types.get(name) {
            Some(MetaType::Scalar { is_valid: Some(is_valid), .. }) => is_valid(value),
            Some(MetaType::Enum { enum_values, .. }) => match value {
                Value::Enum(value) => enum_values.contains_key(value.as_str()),
                Value::String(value) => enum_values.contains_key(value.as_str()),
                _ => false,
            },
            _ => true,
        }
    }
}

/// Names a refused input as the caller sent it. A service names a field of
/// an input object by itself (`linkType`); the caller sent it inside an
/// argument (`input.linkType`), which this finds from the field's arguments.
fn qualify_field(registry: &Registry, parent: &str, field: &str, mut err: ServerError) -> ServerError {
    let Some(Value::String(name)) = err.extensions.as_ref().and_then(|ext| ext.get("field")).cloned() else {
        return err;
    };
    let Some(MetaType::Object { fields, .. }) = registry.types.get(parent) else { return err };
    let Some(meta) = fields.get(field) else { return err };
    // `steps[1]` is an item of the input field `steps`.
    let base = name.split('[').next().unwrap_or_default();
    if name.contains('.') || meta.args.contains_key(base) {
        return err;
    }
    let holder = meta.args.iter().find(|(_, arg)| {
        let ty = arg.ty.trim_matches(|c| matches!(c, '[' | ']' | '!'));
        matches!(registry.types.get(ty), Some(MetaType::InputObject { input_fields, .. }) if input_fields.contains_key(base))
    });
    if let Some((argument, _)) = holder {
        let qualified = format!("{argument}.{name}");
        if let Some(problem) = err.message.strip_prefix(&format!("{name}: ")) {
            err.message = format!("{qualified}: {problem}");
        }
        err.extensions.get_or_insert_with(Default::default).set("field", qualified);
    }
    err
}

/// What the root fields of a document's operations are.
#[derive(Debug, PartialEq)]
struct RootFields {
    /// Some operation selects `__schema` or `__type`.
    introspection: bool,
    /// Every operation is a query that selects only `__schema`, `__type` and
    /// `__typename`: schema tooling, exempt from the depth limit.
    only_introspection: bool,
    /// Some operation is a mutation.
    mutation: bool,
    /// The most root fields one operation resolves: one per response key
    /// (alias or name), through fragments, since fields with the same key
    /// merge and run once. Introspection has its own budget and is not counted.
    most: usize,
}

impl RootFields {
    fn of(document: &ExecutableDocument) -> Self {
        let mut roots = RootFields { introspection: false, only_introspection: true, mutation: false, most: 0 };
        for (_, operation) in document.operations.iter() {
            if operation.node.ty != OperationType::Query {
                roots.only_introspection = false;
            }
            roots.mutation |= operation.node.ty == OperationType::Mutation;
            let mut keys = HashSet::new();
            roots.walk(document, &operation.node.selection_set.node, &mut HashSet::new(), &mut keys);
            roots.most = roots.most.max(keys.len());
        }
        roots
    }

    /// Fragments are walked once each: a cycle is a validation error found later.
    fn walk<'d>(
        &mut self,
        document: &'d ExecutableDocument,
        set: &'d SelectionSet,
        seen: &mut HashSet<&'d str>,
        keys: &mut HashSet<&'d str>,
    ) {
        for selection in &set.items {
            match &selection.node {
                Selection::Field(field) => {
                    let name = field.node.name.node.as_str();
                    match name {
                        "__schema" | "__type" => self.introspection = true,
                        "__typename" => {}
                        _ => {
                            self.only_introspection = false;
                            keys.insert(field.node.alias.as_ref().map_or(name, |alias| alias.node.as_str()));
                        }
                    }
                }
                Selection::FragmentSpread(spread) => {
                    let name = spread.node.fragment_name.node.as_str();
                    if seen.insert(name)
                        && let Some(fragment) = document.fragments.get(name)
                    {
                        self.walk(document, &fragment.node.selection_set.node, seen, keys);
                    }
                }
                Selection::InlineFragment(inline) => self.walk(document, &inline.node.selection_set.node, seen, keys),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use async_graphql::parser::parse_query;

    use super::*;
    use crate::error::ErrorCode;

    fn roots(query: &str) -> (bool, bool) {
        let roots = RootFields::of(&parse_query(query).expect("a valid document"));
        (roots.introspection, roots.only_introspection)
    }

    fn most_roots(query: &str) -> usize {
        RootFields::of(&parse_query(query).expect("a valid document")).most
    }

    #[test]
    fn root_fields_are_counted_by_response_key() {
        for (query, count) in [
            ("{ viewer { id } }", 1),
            ("{ a: viewer { id } b: viewer { id } viewer { id } }", 3),
            ("{ viewer { id } viewer { email } }", 1),
            ("{ ...F a: sites { id } } fragment F on Query { a: sites { id } b: sites { id } }", 2),
            ("{ ... on Query { x: viewer { id } } y: viewer { id } }", 2),
            ("query A { a: viewer { id } } query B { a: viewer { id } b: viewer { id } c: viewer { id } }", 3),
            ("{ __typename viewer { id } }", 1),
            ("{ a: __schema { description } b: __schema { description } }", 0),
        ] {
            assert_eq!(most_roots(query), count, "{query}");
        }
        let aliases: String = (0..1000).map(|i| format!("s{i}: viewer {{ id }} ")).collect();
        assert_eq!(most_roots(&format!("{{ {aliases} }}")), 1000);
    }

    /// REST runs GraphQL documents and answers an error with its code's status.
    #[test]
    fn limit_errors_are_bad_request_on_rest_too() {
        use crate::error::AppError;
        let refused = AppError::from(&refusal("Query is nested too deep: 13 levels, at most 12"));
        assert_eq!((refused.code, refused.status().as_u16()), (ErrorCode::BadRequest, 400));
        for message in ["recursion limit exceeded.", "The recursion depth of the query cannot be greater than `32`"] {
            let parser_limit = AppError::from(&ServerError::new(message, None));
            assert_eq!(parser_limit.code, ErrorCode::BadRequest, "{message}");
        }
        let malformed = AppError::from(&ServerError::new("Unknown field \"nope\" on type \"Query\".", None));
        assert_eq!(malformed.code, ErrorCode::ValidationError);
    }

    #[test]
    fn root_fields_tell_tooling_from_real_queries() {
        assert_eq!(roots("{ __schema { types { name } } }"), (true, true));
        assert_eq!(roots("query Q { __type(name: \"Site\") { name } __typename }"), (true, true));
        assert_eq!(roots("{ ...F } fragment F on Query { __schema { queryType { name } } }"), (true, true));
        assert_eq!(roots("{ ... on Query { __schema { queryType { name } } } }"), (true, true));
        assert_eq!(roots("{ __typename }"), (false, true));
        assert_eq!(roots("{ viewer { id } __schema { queryType { name } } }"), (true, false));
        assert_eq!(roots("{ ...F } fragment F on Query { viewer { id } }"), (false, false));
        assert_eq!(roots("query A { __schema { queryType { name } } } query B { sites { id } }"), (true, false));
        assert_eq!(roots("mutation { __typename }"), (false, false));
        // A fragment cycle ends the walk instead of looping; validation refuses it.
        assert_eq!(
            roots("{ ...A } fragment A on Query { ...B } fragment B on Query { ...A __schema { description } }"),
            (true, true)
        );
    }
}
