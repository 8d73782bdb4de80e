//! Variables of the wrong type, named. GraphQL checks a variable against its
//! declaration only as deep as the variable itself: a value of the wrong type
//! inside an input object (`input: {expiresAt: "tomorrow"}`) fails while the
//! resolver reads its argument, as "Failed to parse Timestamp ... (occurred
//! while parsing LinkUpdateInput)", which names no field. REST bodies and web
//! forms fill whole input objects from what a person typed, so the field
//! matters: this finds the first value a declaration does not take, with its
//! path (`input.expiresAt`, `ids[2]`), before any resolver runs.

use async_graphql::{
    Value, Variables,
    parser::types::{BaseType, ExecutableDocument, Type},
};

/// What the schema says about a named type.
pub trait Types {
    /// An input object's fields with their declared types (`Int!`,
    /// `[String!]`) and whether each has a default; `None` when `name` is not
    /// an input object.
    fn input_fields(&self, name: &str) -> Option<Vec<(String, String, bool)>>;
    /// Whether a scalar or enum `name` takes `value`.
    fn accepts(&self, name: &str, value: &Value) -> bool;
}

/// The first declared variable, or field inside one, whose value its type
/// does not take: its path and what is wrong, in words for a person.
pub fn wrong_type(document: &ExecutableDocument, variables: &Variables, types: &dyn Types) -> Option<(String, String)> {
    let definitions = document.operations.iter().flat_map(|(_, operation)| operation.node.variable_definitions.iter());
    for definition in definitions {
        let name = definition.node.name.node.as_str();
        let value = match variables.get(&definition.node.name.node) {
            Some(value) => value,
            None if definition.node.default_value.is_some() => continue,
            None => &Value::Null,
        };
        if let Some(found) = check(&definition.node.var_type.node, value, types, name.to_owned()) {
            return Some(found);
        }
    }
    None
}

fn check(declared: &Type, value: &Value, types: &dyn Types, path: String) -> Option<(String, String)> {
    if matches!(value, Value::Null) {
        return (!declared.nullable).then(|| (path, "is required".to_owned()));
    }
    match &declared.base {
        BaseType::List(item) => match value {
            Value::List(items) => items
                .iter()
                .enumerate()
                .find_map(|(index, value)| check(item, value, types, format!("{path}[{index}]"))),
            // GraphQL takes one value where a list is declared.
            value => check(item, value, types, path),
        },
        BaseType::Named(name) => match (types.input_fields(name), value) {
            (Some(fields), Value::Object(given)) => fields.iter().find_map(|(field, field_type, has_default)| {
                let field_type = Type::new(field_type)?;
                let value = match given.get(field.as_str()) {
                    Some(value) => value,
                    None if *has_default => return None,
                    None => &Value::Null,
                };
                check(&field_type, value, types, format!("{path}.{field}"))
            }),
            (Some(_), _) => Some((path, "must be an object".to_owned())),
            (None, value) if types.accepts(name, value) => None,
            (None, _) => Some((path, problem(name).to_owned())),
        },
    }
}

/// What a value of type `name` must be.
fn problem(name: &str) -> &'static str {
    match name {
        "String" => "must be text",
        "Int" => "must be a whole number",
        "Float" => "must be a number",
        "Boolean" => "must be true or false",
        "ID" => "must be an id",
        "Timestamp" => "must be an ISO 8601 date and time, such as 2026-12-01T09:00:00Z",
        _ => "is not one of the values this field takes",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `LinkInput { slug: String, maxClicks: Int, expiresAt: Timestamp, tags: [String!], row: Row, kind: Kind! = A }`,
    /// `Row { on: Boolean! }`, enum `Kind { A B }`.
    struct Fake;

    impl Types for Fake {
        fn input_fields(&self, name: &str) -> Option<Vec<(String, String, bool)>> {
            let fields: &[(&str, &str, bool)] = match name {
                "LinkInput" => &[
                    ("slug", "String", false),
                    ("maxClicks", "Int", false),
                    ("expiresAt", "Timestamp", false),
                    ("tags", "[String!]", false),
                    ("row", "Row", false),
                    ("kind", "Kind!", true),
                ],
                "Row" => &[("on", "Boolean!", false)],
                _ => return None,
            };
            Some(fields.iter().map(|(field, ty, default)| ((*field).to_owned(), (*ty).to_owned(), *default)).collect())
        }

        fn accepts(&self, name: &str, value: &Value) -> bool {
            match (name, value) {
                ("String" | "ID", Value::String(_)) | ("Boolean", Value::Boolean(_)) => true,
                ("Int" | "ID", Value::Number(number)) => number.is_i64(),
                ("Timestamp", Value::String(text)) => crate::time::parse_iso(text).is_some(),
                ("Kind", Value::String(text)) => matches!(text.as_str(), "A" | "B"),
                _ => false,
            }
        }
    }

    #[test]
    fn finds_the_first_value_of_the_wrong_type_with_its_path() {
        let declared = "query($input: LinkInput!, $ids: [ID!], $kind: Kind, $n: Int = 3, $s: String!) { a }";
        let document = async_graphql::parser::parse_query(declared).unwrap();
        let fine = json!({ "input": { "slug": "x", "tags": ["a"], "row": { "on": true } }, "ids": ["1", 2], "s": "" });
        assert_eq!(wrong_type(&document, &Variables::from_json(fine), &Fake), None);
        for (variables, path, problem) in [
            (json!({ "s": "" }), "input", "is required"),
            (json!({ "input": "x", "s": "" }), "input", "must be an object"),
            (json!({ "input": { "maxClicks": "5" }, "s": "" }), "input.maxClicks", "must be a whole number"),
            (json!({ "input": { "expiresAt": "tomorrow" }, "s": "" }), "input.expiresAt", "must be an ISO 8601"),
            (json!({ "input": { "tags": ["a", 7] }, "s": "" }), "input.tags[1]", "must be text"),
            (json!({ "input": { "row": {} }, "s": "" }), "input.row.on", "is required"),
            (json!({ "input": {}, "ids": ["1", true], "s": "" }), "ids[1]", "must be an id"),
            (json!({ "input": {}, "kind": "C", "s": "" }), "kind", "is not one of the values"),
            (json!({ "input": { "kind": null }, "s": "" }), "input.kind", "is required"),
            (json!({ "input": {}, "n": null, "s": 5 }), "s", "must be text"),
            (json!({ "input": {} }), "s", "is required"),
        ] {
            let found = wrong_type(&document, &Variables::from_json(variables.clone()), &Fake);
            let (found_path, found_problem) = found.unwrap_or_else(|| panic!("nothing found in {variables}"));
            assert_eq!(found_path, path, "{variables}");
            assert!(found_problem.starts_with(problem), "{variables}: {found_problem}");
        }
    }
}
