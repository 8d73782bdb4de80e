//! PostgreSQL's text cannot hold the NUL character (U+0000): a string with
//! one fails inside a write as a database error, a 500. Every face but
//! collect reaches the services through a GraphQL operation, so operations
//! whose text or variables carry one are refused here, before any resolver
//! runs, the same on both databases.

use async_graphql::{
    Value, Variables,
    parser::types::{BaseType, ExecutableDocument, Type},
};

/// The path of the first value holding a NUL character, such as
/// `input.name` or `ids[2]`, among the variables `document` declares. Others
/// are never read (a REST body's unknown fields arrive as variables too), and
/// `JSON` ones are stored as JSON text, where a NUL is an escape both
/// databases hold.
pub fn in_variables(document: &ExecutableDocument, variables: &Variables) -> Option<String> {
    document
        .operations
        .iter()
        .flat_map(|(_, operation)| operation.node.variable_definitions.iter())
        .filter(|definition| !is_json(&definition.node.var_type.node))
        .find_map(|definition| {
            let name = &definition.node.name.node;
            variables.get(name).and_then(nul_at).map(|rest| format!("{name}{rest}"))
        })
}

fn is_json(declared: &Type) -> bool {
    match &declared.base {
        BaseType::Named(name) => name.as_str() == "JSON",
        BaseType::List(item) => is_json(item),
    }
}

/// The rest of the path to the first string in `value` holding a NUL
/// character: empty when `value` is that string. Built only on a hit.
fn nul_at(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => text.contains('\0').then(String::new),
        Value::List(items) => {
            items.iter().enumerate().find_map(|(index, item)| nul_at(item).map(|rest| format!("[{index}]{rest}")))
        }
        Value::Object(fields) => {
            fields.iter().find_map(|(name, field)| nul_at(field).map(|rest| format!(".{name}{rest}")))
        }
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

    #[test]
    fn finds_the_path_of_a_nul_in_declared_variables() {
        let declared = "query($name: String, $input: SiteInput, $ids: [ID!], $rows: [Row], $traits: JSON, $all: [JSON]) \
                        { a }";
        let cases = [
            (json!({ "name": "plain", "ids": ["3"] }), None),
            (json!({ "name": "a\u{0}b" }), Some("name")),
            (json!({ "input": { "domain": "x.example", "name": "\u{0}" } }), Some("input.name")),
            (json!({ "ids": ["1", "2", "3\u{0}"] }), Some("ids[2]")),
            (json!({ "rows": [{ "tags": ["ok", "b\u{0}d"] }] }), Some("rows[0].tags[1]")),
            (json!({ "name": "", "input": null, "ids": [] }), None),
            // Stored as JSON text, where the NUL is an escape.
            (json!({ "traits": { "k": "\u{0}" }, "all": [{ "k": "\u{0}" }] }), None),
            // Not declared, so never read.
            (json!({ "junk\u{0}": "\u{0}", "other": ["\u{0}"] }), None),
        ];
        let document = async_graphql::parser::parse_query(declared).unwrap();
        for (variables, expected) in cases {
            let found = in_variables(&document, &Variables::from_json(variables.clone()));
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
