//! What the GraphQL types cannot say about a REST route: every status it can
//! answer, and the rules its services apply to each field (lengths, patterns,
//! enumerations), so a client or a contract test can tell valid input from
//! invalid without calling the server.

use serde_json::{Value, json};

use super::{
    super::operation::{Kind, Operation, Param},
    fields,
};
use crate::{
    enrich::source::CHANNELS,
    service::{accounts, analytics::desk, scoring},
};

const WEBHOOK_TYPES: [&str; 5] = ["custom", "crm_one", "crm_two", "chat_one", "chat_two"];

/// The credential routes, each rate limited per client IP.
const RATE_LIMITED: [&str; 5] = ["signUp", "signIn", "changePassword", "changeEmail", "deleteUser"];

/// Every status `op` can answer besides its success.
pub fn statuses(op: &Operation) -> Vec<u16> {
    let unsafe_method = op.method != "GET";
    let account_route = op.path.starts_with("/api/auth/");
    // Any input can be malformed, any declared body too large, and the
    // database can be unavailable (503 with Retry-After).
    let mut statuses = vec![400, 413, 503];
    if !op.public || op.id == "signIn" {
        statuses.push(401);
    }
    // Roles, API keys on the account routes, and cross-site writes (INVALID_ORIGIN).
    if !op.public || unsafe_method {
        statuses.push(403);
    }
    if !op.public {
        statuses.push(404);
    }
    if (!op.public && unsafe_method) || op.id == "signUp" {
        statuses.push(409);
    }
    if account_route && unsafe_method {
        statuses.push(415);
    }
    if RATE_LIMITED.contains(&op.id) {
        statuses.push(429);
    }
    if op.id == "sendWebhook" {
        statuses.push(502);
    }
    statuses.sort_unstable();
    statuses
}

/// Whether a body must be sent: an empty one reads as `{}`, which is enough
/// when the schema requires nothing.
pub fn body_required(body: &Value) -> bool {
    body["required"].as_array().is_some_and(|required| !required.is_empty()) || body.get("anyOf").is_some()
}

/// A query parameter's schema by its kind. Numbers are 64-bit, and an
/// optional number may be given empty, which means absent.
pub fn query_parameter(param: &Param) -> Value {
    match param.kind {
        Kind::Int => {
            let number = json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX });
            if param.required { number } else { json!({ "anyOf": [number, { "type": "string", "maxLength": 0 }] }) }
        }
        Kind::Bool => {
            let flag = json!({ "type": "boolean" });
            json!({ "anyOf": [flag, { "type": "string", "enum": ["1", "0", ""] }] })
        }
        kind if kind.json_type() == "string" => super::fields::any_text(),
        kind => json!({ "type": kind.json_type() }),
    }
}

/// The service's rules for one query parameter.
pub fn field(operation: &str, name: &str) -> Option<Value> {
    FIELDS.iter().find(|(op, field, _)| *op == operation && *field == name).map(|(_, _, rule)| rule())
}

/// Adds the services' rules to a body schema derived from the document or
/// written by its route: each field's, then the whole body's.
pub fn apply_to_body(operation: &str, body: &mut Value) {
    if let Some(properties) = body.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, schema) in properties.iter_mut() {
            if let Some(rule) = field(operation, name) {
                merge(schema, &rule);
            }
        }
    }
    for (_, rule) in BODIES.iter().filter(|(op, _)| *op == operation) {
        merge(body, &rule());
    }
}

type Rule = fn() -> Value;

/// (operation id, field, rule).
const FIELDS: &[(&str, &str, Rule)] = &[
    ("signUp", "name", fields::person_name),
    ("signUp", "email", fields::email),
    ("signUp", "password", fields::new_password),
    ("signUp", "image", fields::image),
    ("signUp", "callbackURL", fields::callback_url),
    ("signIn", "callbackURL", fields::callback_url),
    ("changeEmail", "newEmail", fields::email),
    ("changePassword", "newPassword", fields::new_password),
    ("createSite", "domain", fields::host),
    ("createSite", "name", fields::new_site_name),
    ("updateSite", "name", || or_null(fields::site_name())),
    ("updateSite", "domain", || or_null(fields::host())),
    ("updateSite", "firstPartyDomain", || or_null(fields::optional_host())),
    ("updateSite", "trackingMode", || or_null(json!({ "type": "string", "enum": ["cookie", "cookieless"] }))),
    ("updateSite", "respectDoNotTrack", || json!({ "type": ["boolean", "null"] })),
    ("identify", "tracker_vid", fields::visitor_id),
    ("identify", "user_id", fields::optional_id),
    ("identify", "email", fields::optional_email),
    ("identify", "traits", || json!({ "type": ["object", "null"] })),
    ("identify", "name", fields::label),
    ("identify", "company", fields::label),
    ("identify", "phone", fields::label),
    ("identify", "source", fields::label),
    ("identify", "source_detail", fields::label),
    ("createLink", "destinationUrl", fields::web_url),
    ("createLink", "slug", fields::new_slug),
    ("createLink", "campaign", fields::label),
    ("createLink", "source", fields::label),
    ("createLink", "medium", fields::label),
    ("createLink", "content", fields::label),
    ("createLink", "notes", fields::notes),
    ("createLink", "link_type", fields::link_type),
    ("updateLink", "destinationUrl", || or_null(fields::web_url())),
    ("updateLink", "slug", || or_null(fields::slug())),
    ("updateLink", "campaign", || or_null(fields::label())),
    ("updateLink", "source", || or_null(fields::label())),
    ("updateLink", "medium", || or_null(fields::label())),
    ("updateLink", "content", || or_null(fields::label())),
    ("updateLink", "notes", || or_null(fields::notes())),
    ("updateLink", "is_active", || json!({ "type": ["boolean", "null"] })),
    ("updateLink", "link_type", || or_null(fields::link_type())),
    ("updateLink", "expires_at", fields::instant),
    ("updateLink", "max_clicks", || json!({ "minimum": 1, "maximum": i64::MAX })),
    ("updateLink", "tags", fields::tags),
    ("checkSlug", "slug", fields::exact_slug),
    ("linkAnalytics", "range", || fields::choice(&["7d", "30d", "90d", "all"], true)),
    ("listAccounts", "timeRange", || fields::choice(&["24h", "7d", "30d", "all"], true)),
    ("listAccounts", "q", || fields::search_text(accounts::MAX_KEY_LEN)),
    ("listAccounts", "sort", || fields::choice(&accounts::AccountSort::NAMES, true)),
    ("listAccounts", "limit", || json!({ "minimum": 1 })),
    ("listAccounts", "page", || json!({ "minimum": 1 })),
    ("account", "key", || json!({ "minLength": 1, "maxLength": accounts::MAX_KEY_LEN })),
    ("listVisitors", "limit", || json!({ "minimum": 1 })),
    ("listVisitors", "timeRange", || fields::choice(&["24h", "7d", "30d", "all"], true)),
    ("listVisitors", "filter", || fields::choice(&["bot"], true)),
    ("listVisitors", "q", || fields::search_text(desk::MAX_SEARCH_LEN)),
    ("listVisitors", "sort", || fields::choice(&desk::SortKey::NAMES, true)),
    ("listVisitors", "order", || fields::choice(&["desc", "asc"], true)),
    ("listVisitors", "page", || json!({ "minimum": 1, "maximum": desk::MAX_PAGE })),
    ("listVisitors", "status", || fields::choice(&["identified", "anonymous"], true)),
    ("listVisitors", "country", fields::country_code),
    ("listVisitors", "channel", || fields::choice(&CHANNELS, true)),
    ("listVisitors", "campaign", || fields::search_text(desk::MAX_FILTER_LEN)),
    ("listVisitors", "link", || fields::search_text(desk::MAX_FILTER_LEN)),
    ("listVisitors", "visited", || fields::path_pattern(desk::MAX_FILTER_LEN)),
    ("listVisitors", "account", || fields::search_text(desk::MAX_FILTER_LEN)),
    ("listVisitors", "minScore", || json!({ "minimum": 0, "maximum": scoring::MAX_SCORE })),
    ("stats", "timeRange", || fields::choice(&["24h", "7d", "30d"], true)),
    ("sendWebhook", "tracker_vid", fields::visitor_id),
    ("sendWebhook", "webhook_type", || fields::choice(&WEBHOOK_TYPES, true)),
    ("sendWebhook", "webhook_url", fields::webhook_url),
];

/// Rules that tie fields together: (operation id, rule for the whole body).
const BODIES: &[(&str, Rule)] = &[
    // A person is named by a user id, an email, or both.
    ("identify", || {
        json!({ "anyOf": [
            { "required": ["user_id"], "properties": { "user_id": { "type": "string", "minLength": 1 } } },
            { "required": ["email"], "properties": { "email": { "type": "string", "minLength": 1 } } },
        ] })
    }),
    // The chat products take only their own webhook hosts.
    ("sendWebhook", || {
        let chat = |kind: &str, url: &str| {
            json!({ "required": ["webhook_type"], "properties": {
                "webhook_type": fields::choice(&[kind], false), "webhook_url": { "pattern": url },
            } })
        };
        json!({ "anyOf": [
            { "not": { "required": ["webhook_type"] } },
            { "properties": { "webhook_type": { "anyOf": [{ "type": "null" }, fields::choice(&WEBHOOK_TYPES[..3], true)] } } },
            chat("chat_one", r"^\s*https://hooks\.slack\.com/services/"),
            chat("chat_two", r"^\s*https://[a-z][a-z0-9-]*\.(logic\.azure|powerplatform|webhook\.office)\.com/"),
        ] })
    }),
];

/// A field of a route's own update body, where null leaves the value as it is.
fn or_null(mut rule: Value) -> Value {
    if let Some(kind) = rule.get("type").and_then(Value::as_str).map(str::to_owned) {
        rule["type"] = json!([kind, "null"]);
    }
    for key in ["enum", "anyOf"] {
        if let Some(options) = rule.get_mut(key).and_then(Value::as_array_mut) {
            options.push(if key == "enum" { Value::Null } else { json!({ "type": "null" }) });
        }
    }
    rule
}

/// Adds a rule's keywords to a derived schema. A nullable field keeps its
/// `anyOf` with null, and the rule applies to the non-null branch.
pub fn merge(schema: &mut Value, rule: &Value) {
    if let Some(options) = schema.get_mut("anyOf").and_then(Value::as_array_mut)
        && options.iter().any(|option| option["type"] == json!("null"))
    {
        if let Some(branch) = options.iter_mut().find(|option| option["type"] != json!("null")) {
            merge(branch, rule);
        }
        return;
    }
    if let (Some(target), Some(rule)) = (schema.as_object_mut(), rule.as_object()) {
        for (key, value) in rule {
            // The derived type already says what the field takes (null
            // included); only a rule that lists its types replaces it.
            if key == "type" && target.contains_key("type") && !value.is_array() {
                continue;
            }
            target.insert(key.clone(), value.clone());
        }
    }
}
