//! PostgreSQL's text cannot hold the NUL character (U+0000): a string with
//! one fails inside a write as a database error, a 500. Every face but
//! collect reaches the services through a GraphQL operation, so operations
//! whose text or variables carry one are refused here, before any resolver
//! runs, the same on both databases.

use async_graphql::{
    Value, Variables,
    parser::types::{BaseType, ExecutableDocument, Type},
};

/// The type names an operation's values are read as: `field_type(input,
/// field)` is the named type of an input object's field (`None` for a field
/// it does not have).
pub type FieldTypes<'a> = &'a dyn Fn(&str, &str) -> Option<String>;

/// The path of the first text value holding a NUL character, such as
/// `input.name` or `ids[2]`, among the variables `document` declares. Others
/// are never read (a REST body's unknown fields arrive as variables too), and
/// a `JSON` value, at any depth, is stored as JSON text, where a NUL is an
/// escape both databases hold.
pub fn in_variables(document: &ExecutableDocument, variables: &Variables, field_types: FieldTypes) -> Option<String> {
    document.operations.iter().flat_map(|(_, operation)| operation.node.variable_definitions.iter()).find_map(
        |definition| {
            let name = &definition.node.name.node;
            let declared = named(&definition.node.var_type.node);
            let value = variables.get(name)?;
            nul_at(value, declared, field_types).map(|rest| format!("{name}{rest}"))
        },
    )
}

/// The named type under a type's lists and non-nulls.
fn named(declared: &Type) -> &str {
    match &declared.base {
        BaseType::Named(name) => name.as_str(),
        BaseType::List(item) => named(item),
    }
}

/// The rest of the path to the first text in `value`, read as `type_name`,
/// holding a NUL character: empty when `value` is that text. Built only on
/// a hit.
fn nul_at(value: &Value, type_name: &str, field_types: FieldTypes) -> Option<String> {
    if type_name == "JSON" {
        return None;
    }
    match value {
        Value::String(text) => text.contains('\0').then(String::new),
        Value::List(items) => items
            .iter()
            .enumerate()
            .find_map(|(index, item)| nul_at(item, type_name, field_types).map(|rest| format!("[{index}]{rest}"))),
        Value::Object(fields) => fields.iter().find_map(|(name, field)| {
            let field_type = field_types(type_name, name)?;
            nul_at(field, &field_type, field_types).map(|rest| format!(".{name}{rest}"))
        }),
        _ => None,
    }
}

/// Whether GraphQL source text spells a NUL character: as itself, or as an
/// escape in a string literal (`\u0000`, or the braced `\u{0}`). An escape
/// outside a literal, as in a comment, is refused too; no real query has one.
pub fn in_source(text: &str) -> bool {
    text.contains('\0')
        || text.match_indices("\\u").any(|(at, escape)| {
            let rest = &text[at + escape.len()..];
            let digits = match rest.strip_prefix('{') {
                Some(braced) => braced.split('}').next().unwrap_or_default(),
                None => rest.get(..4).unwrap_or_default(),
            };
            !digits.is_empty() && digits.bytes().all(|digit| digit == b'0')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `SiteInput { domain: String, name: String, tags: [String], row: Row }`,
    /// `Row { tags: [String], traits: JSON }`.
    fn field_types(input: &str, field: &str) -> Option<String> {
        let ty = match (input, field) {
            ("SiteInput", "domain" | "name" | "tags") | ("Row", "tags") => "String",
            ("SiteInput", "row") => "Row",
            ("Row", "traits") => "JSON",
            _ => return None,
        };
        Some(ty.to_owned())
    }

    #[test]
    fn finds_the_path_of_a_nul_in_declared_text() {
        let declared = "query($name: String, $input: SiteInput, $ids: [ID!], $rows: [Row], $traits: JSON, $all: [JSON]) \
                        { a }";
        let cases = [
            (json!({ "name": "plain", "ids": ["3"] }), None),
            (json!({ "name": "a\u{0}b" }), Some("name")),
            (json!({ "input": { "domain": "x.example", "name": "\u{0}" } }), Some("input.name")),
            (json!({ "input": { "row": { "tags": ["ok", "b\u{0}d"] } } }), Some("input.row.tags[1]")),
            (json!({ "ids": ["1", "2", "3\u{0}"] }), Some("ids[2]")),
            (json!({ "rows": [{ "tags": ["ok"] }, { "tags": ["\u{0}"] }] }), Some("rows[1].tags[0]")),
            (json!({ "name": "", "input": null, "ids": [] }), None),
            // Stored as JSON text, where the NUL is an escape: as a variable
            // and inside an input object.
            (json!({ "traits": { "k": "\u{0}" }, "all": [{ "k": "\u{0}" }] }), None),
            (json!({ "rows": [{ "traits": { "k": ["\u{0}"] } }] }), None),
            // Not declared, or not a field of the input: never read.
            (json!({ "junk\u{0}": "\u{0}", "other": ["\u{0}"] }), None),
            (json!({ "input": { "domain": "x.example", "extra": "\u{0}" } }), None),
        ];
        let document = async_graphql::parser::parse_query(declared).unwrap();
        for (variables, expected) in cases {
            let found = in_variables(&document, &Variables::from_json(variables.clone()), &field_types);
            assert_eq!(found.as_deref(), expected, "{variables}");
        }
    }

    #[test]
    fn finds_nul_spelled_in_source_text() {
        let cases = [
            (r#"{ sites { id } }"#, false),
            (r#"mutation { createSite(input: {domain: "a\u0000"}) { id } }"#, true),
            (r#"mutation { createSite(input: {domain: "a\U0000"}) { id } }"#, false),
            (r#"mutation { createSite(input: {domain: "a\u{0}"}) { id } }"#, true),
            (r#"mutation { createSite(input: {domain: "a\u{000000}"}) { id } }"#, true),
            (r#"mutation { createSite(input: {domain: "a\u0041\u00e9"}) { id } }"#, false),
            (r#"mutation { createSite(input: {domain: "a\u{1F600}"}) { id } }"#, false),
            (r#"{ x(s: "\u00") }"#, false),
            (r#"{ x(s: "\u{}") }"#, false),
            ("{ x(s: \"\u{0}\") }", true),
            ("{ x(s: \"é\\u00\") }", false),
        ];
        for (text, expected) in cases {
            assert_eq!(in_source(text), expected, "{text}");
        }
    }
}
