//! JSON Schemas for REST answers and bodies, derived from each route's GraphQL
//! document and the live schema, so the OpenAPI document cannot drift from
//! what the bridge returns.

use std::collections::HashMap;

use async_graphql::parser::{
    parse_query,
    types::{BaseType, ExecutableDocument, OperationType, Selection, SelectionSet, Type},
};
use serde_json::{Map, Value, json};

/// A field's or argument's type, as introspection reports it.
#[derive(Debug, Clone)]
enum TypeRef {
    NonNull(Box<TypeRef>),
    List(Box<TypeRef>),
    Named(String),
}

/// The schema's object types (field types) and input types (field types).
pub struct Types {
    fields: HashMap<String, HashMap<String, TypeRef>>,
    kinds: HashMap<String, String>,
    query: String,
    mutation: String,
}

fn type_ref(value: &Value) -> TypeRef {
    match value["kind"].as_str() {
        Some("NON_NULL") => TypeRef::NonNull(Box::new(type_ref(&value["ofType"]))),
        Some("LIST") => TypeRef::List(Box::new(type_ref(&value["ofType"]))),
        _ => TypeRef::Named(value["name"].as_str().unwrap_or_default().to_owned()),
    }
}

pub const INTROSPECTION: &str = "{ __schema { queryType { name } mutationType { name }
  types { name kind
    fields { name type { ...T } }
    inputFields { name type { ...T } } } } }
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }";

impl Types {
    /// Reads the answer to INTROSPECTION.
    pub fn from_introspection(data: &Value) -> Types {
        let schema = &data["__schema"];
        let mut fields = HashMap::new();
        let mut kinds = HashMap::new();
        for ty in schema["types"].as_array().into_iter().flatten() {
            let name = ty["name"].as_str().unwrap_or_default().to_owned();
            kinds.insert(name.clone(), ty["kind"].as_str().unwrap_or_default().to_owned());
            let members = ty["fields"].as_array().or(ty["inputFields"].as_array());
            let map: HashMap<String, TypeRef> = members
                .into_iter()
                .flatten()
                .map(|f| (f["name"].as_str().unwrap_or_default().to_owned(), type_ref(&f["type"])))
                .collect();
            fields.insert(name, map);
        }
        Types {
            fields,
            kinds,
            query: schema["queryType"]["name"].as_str().unwrap_or("Query").to_owned(),
            mutation: schema["mutationType"]["name"].as_str().unwrap_or("Mutation").to_owned(),
        }
    }

    fn scalar(&self, name: &str) -> Value {
        match name {
            "String" | "ID" => json!({ "type": "string" }),
            "Int" => json!({ "type": "integer" }),
            "Float" => json!({ "type": "number" }),
            "Boolean" => json!({ "type": "boolean" }),
            "Timestamp" => json!({ "type": "string", "format": "date-time" }),
            // Free-form JSON: any value.
            "JSON" => json!({}),
            _ if self.kinds.get(name).map(String::as_str) == Some("ENUM") => json!({ "type": "string" }),
            _ => json!({}),
        }
    }
}

fn nullable(schema: Value) -> Value {
    if schema.as_object().is_some_and(Map::is_empty) {
        return schema;
    }
    json!({ "anyOf": [schema, { "type": "null" }] })
}

/// The schema of a selection of `type_name`'s fields, keyed by alias. Fields
/// under `@include` or `@skip` may be absent; every other one is present.
fn selection(types: &Types, doc: &ExecutableDocument, type_name: &str, set: &SelectionSet) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    collect(types, doc, type_name, set, &mut properties, &mut required);
    json!({ "type": "object", "properties": properties, "required": required })
}

fn collect(
    types: &Types,
    doc: &ExecutableDocument,
    type_name: &str,
    set: &SelectionSet,
    out: &mut Map<String, Value>,
    required: &mut Vec<Value>,
) {
    for item in &set.items {
        match &item.node {
            Selection::Field(field) => {
                let field = &field.node;
                let name = field.name.node.as_str();
                let key = field.alias.as_ref().map_or(name, |alias| alias.node.as_str()).to_owned();
                let schema = if name == "__typename" {
                    json!({ "type": "string" })
                } else {
                    match types.fields.get(type_name).and_then(|fields| fields.get(name)) {
                        Some(ty) => output(types, doc, ty, &field.selection_set.node),
                        None => json!({}),
                    }
                };
                let conditional =
                    field.directives.iter().any(|d| matches!(d.node.name.node.as_str(), "include" | "skip"));
                if !conditional && !required.contains(&Value::String(key.clone())) {
                    required.push(Value::String(key.clone()));
                }
                out.insert(key, schema);
            }
            Selection::FragmentSpread(spread) => {
                if let Some(fragment) = doc.fragments.get(&spread.node.fragment_name.node) {
                    collect(types, doc, type_name, &fragment.node.selection_set.node, out, required);
                }
            }
            Selection::InlineFragment(inline) => {
                collect(types, doc, type_name, &inline.node.selection_set.node, out, required)
            }
        }
    }
}

fn output(types: &Types, doc: &ExecutableDocument, ty: &TypeRef, set: &SelectionSet) -> Value {
    fn inner(types: &Types, doc: &ExecutableDocument, ty: &TypeRef, set: &SelectionSet) -> Value {
        match ty {
            TypeRef::NonNull(of) => inner(types, doc, of, set),
            TypeRef::List(of) => json!({ "type": "array", "items": output(types, doc, of, set) }),
            TypeRef::Named(name) if set.items.is_empty() => types.scalar(name),
            TypeRef::Named(name) => selection(types, doc, name, set),
        }
    }
    let schema = inner(types, doc, ty, set);
    if matches!(ty, TypeRef::NonNull(_)) { schema } else { nullable(schema) }
}

/// A variable's or input field's type as JSON Schema.
fn input(types: &Types, ty: &Type) -> Value {
    let schema = match &ty.base {
        BaseType::Named(name) => input_named(types, name.as_str()),
        BaseType::List(of) => json!({ "type": "array", "items": input(types, of) }),
    };
    if ty.nullable { nullable(schema) } else { schema }
}

fn input_named(types: &Types, name: &str) -> Value {
    if name == "Int" {
        // The REST arguments behind Int are 64-bit; JSON numbers beyond that
        // arrive as floats and are refused.
        return json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX });
    }
    if name == "String" || name == "ID" {
        return super::fields::any_text();
    }
    if types.kinds.get(name).map(String::as_str) != Some("INPUT_OBJECT") {
        return types.scalar(name);
    }
    let mut properties = Map::new();
    for (field, ty) in types.fields.get(name).into_iter().flatten() {
        properties.insert(field.clone(), input_ref(types, ty));
    }
    json!({ "type": "object", "properties": properties })
}

fn input_ref(types: &Types, ty: &TypeRef) -> Value {
    match ty {
        TypeRef::NonNull(of) => match of.as_ref() {
            TypeRef::List(item) => json!({ "type": "array", "items": input_ref(types, item) }),
            TypeRef::Named(name) => input_named(types, name),
            TypeRef::NonNull(_) => json!({}),
        },
        TypeRef::List(item) => nullable(json!({ "type": "array", "items": input_ref(types, item) })),
        TypeRef::Named(name) => nullable(input_named(types, name)),
    }
}

/// What a route's document answers, and the variables it takes.
pub struct DocumentSchemas {
    /// The whole `data` object.
    pub data: Value,
    /// Variable name -> (schema, required).
    pub variables: Vec<(String, Value, bool)>,
}

pub fn document(types: &Types, source: &str) -> Result<DocumentSchemas, String> {
    let doc = parse_query(source).map_err(|err| err.to_string())?;
    let (_, operation) = doc.operations.iter().next().ok_or("a document without an operation")?;
    let root = match operation.node.ty {
        OperationType::Query => &types.query,
        OperationType::Mutation => &types.mutation,
        OperationType::Subscription => return Err("subscriptions have no REST route".to_owned()),
    };
    let data = selection(types, &doc, root, &operation.node.selection_set.node);
    let variables = operation
        .node
        .variable_definitions
        .iter()
        .map(|definition| {
            let definition = &definition.node;
            let ty = &definition.var_type.node;
            let required = !ty.nullable && definition.default_value.is_none();
            // A variable with a default may be left out, but an explicit null
            // overrides the default and a non-null argument refuses it.
            let schema = match &definition.default_value {
                Some(_) => input(types, &Type { base: ty.base.clone(), nullable: false }),
                None => input(types, ty),
            };
            (definition.name.node.to_string(), schema, required)
        })
        .collect();
    Ok(DocumentSchemas { data, variables })
}
