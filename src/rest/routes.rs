//! The REST face as one table: every `/api` route is a row naming its method,
//! path, GraphQL document, parameters and answer. The same rows mount the
//! router (`rest::routes`), write the OpenAPI document (`rest::openapi`) and
//! feed the tests (`rest::route_list`), so a new route is one document under
//! `documents/` plus one row here.

use serde_json::{Map, Value, json};

use super::operation::{Body, Hook, Kind, Operation, Output, Param, SchemaFn, op, param};
use crate::error::{AppError, AppResult};

macro_rules! doc {
    ($name:literal) => {
        include_str!(concat!("documents/", $name, ".graphql"))
    };
}

const SITE_ID: Param = param("siteId", Kind::Int, true);
const OPTIONAL_SITE_ID: Param = param("siteId", Kind::Int, false);
const NO_EXCEPTIONS: &[&str] = &[];
const TEXT_ID: Param = param("id", Kind::Text, true);
const SITE_PATH_ID: Param = param("id", Kind::SiteId, true);

/// The body of `PUT /api/links/{id}`: REST key, the update input's field, and
/// its JSON schema. A key that is absent leaves the field unchanged; `null`
/// clears `expires_at`, `max_clicks` and `tags`.
const LINK_UPDATE_FIELDS: [(&str, &str, SchemaFn); 12] = [
    ("destinationUrl", "destinationUrl", text),
    ("slug", "slug", text),
    ("campaign", "campaign", text),
    ("source", "source", text),
    ("medium", "medium", text),
    ("content", "content", text),
    ("notes", "notes", text),
    ("link_type", "linkType", || json!({ "type": "string", "enum": ["content", "ad", "bio"] })),
    ("is_active", "isActive", || json!({ "type": "boolean" })),
    ("expires_at", "expiresAt", || json!({ "type": ["string", "null"] })),
    ("max_clicks", "maxClicks", || json!({ "type": ["integer", "null"] })),
    ("tags", "tags", || json!({ "type": ["array", "null"], "items": { "type": "string" } })),
];

fn text() -> Value {
    json!({ "type": "string" })
}

fn link_update_body() -> Value {
    let properties: Map<String, Value> =
        LINK_UPDATE_FIELDS.iter().map(|(key, _, schema)| ((*key).to_owned(), schema())).collect();
    json!({ "type": "object", "properties": properties })
}

/// The body of `PUT /api/sites/{id}`: each key is a field of the update
/// input; absent leaves it, `null` clears what can be cleared.
const SITE_UPDATE_FIELDS: [(&str, SchemaFn); 10] = [
    ("name", text),
    ("domain", text),
    ("trackingMode", || json!({ "type": "string", "enum": ["cookie", "cookieless"] })),
    ("firstPartyDomain", text),
    ("retentionDays", || json!({ "type": ["integer", "null"], "minimum": 1, "maximum": i32::MAX })),
    ("respectDoNotTrack", || json!({ "type": "boolean" })),
    ("gravatar", || json!({ "type": "boolean" })),
    ("hostingAsns", asn_list),
    ("ispAsns", asn_list),
    // The tz database's names, exactly as the service accepts them.
    ("timezone", || {
        let names: Vec<&str> = chrono_tz::TZ_VARIANTS.iter().map(|zone| zone.name()).collect();
        json!({ "type": "string", "enum": names, "description": "IANA time zone name, such as Europe/Berlin" })
    }),
];

fn asn_list() -> Value {
    json!({ "type": "array", "maxItems": 1000, "items": { "type": "integer", "minimum": 1, "maximum": u32::MAX } })
}

fn site_update_body() -> Value {
    let properties: Map<String, Value> =
        SITE_UPDATE_FIELDS.iter().map(|(key, schema)| ((*key).to_owned(), schema())).collect();
    json!({ "type": "object", "properties": properties })
}

/// `POST /api/v2/query`'s body: Plausible's Stats API v2 query.
fn explore_body() -> Value {
    let texts = json!({ "type": "array", "items": { "type": "string" } });
    json!({
        "type": "object",
        "required": ["site_id", "metrics", "date_range"],
        "properties": {
            "site_id": { "type": ["string", "integer"], "description": "The site's domain or id" },
            "metrics": texts,
            "date_range": {
                "oneOf": [
                    { "type": "string" },
                    { "type": "array", "items": { "type": "string" }, "minItems": 2, "maxItems": 2 }
                ]
            },
            "dimensions": texts,
            "filters": { "type": "array" },
            "order_by": { "type": "array", "items": { "type": "array" } },
            "include": { "type": "object" },
            "pagination": {
                "type": "object",
                "properties": { "limit": { "type": "integer" }, "offset": { "type": "integer" } }
            }
        }
    })
}

/// The body's snake_case keys become `ExploreInput`'s; values pass as they are
/// and the service checks them, naming the body's field.
const EXPLORE_FIELDS: [(&str, &str); 8] = [
    ("site_id", "site"),
    ("metrics", "metrics"),
    ("date_range", "dateRange"),
    ("dimensions", "dimensions"),
    ("filters", "filters"),
    ("order_by", "orderBy"),
    ("include", "include"),
    ("pagination", "pagination"),
];

fn explore_input(body: Map<String, Value>) -> AppResult<Map<String, Value>> {
    if let Some(unknown) = body.keys().find(|key| !EXPLORE_FIELDS.iter().any(|(known, _)| known == *key)) {
        return Err(AppError::validation(unknown, "is not a query field"));
    }
    let mut input = Map::new();
    for (key, field) in EXPLORE_FIELDS {
        match body.get(key) {
            None | Some(Value::Null) => {}
            // The site may be named by its numeric id.
            Some(Value::Number(id)) if key == "site_id" => {
                input.insert(field.to_owned(), Value::from(id.to_string()));
            }
            Some(value) => {
                input.insert(field.to_owned(), value.clone());
            }
        }
    }
    if !input.contains_key("site") {
        return Err(AppError::validation("site_id", "is required: the site's domain or id"));
    }
    let mut variables = Map::new();
    variables.insert("query".to_owned(), Value::Object(input));
    Ok(variables)
}

/// Plausible's rows carry `comparison` only when comparisons were asked.
fn plausible_rows(mut answer: Value) -> Value {
    if let Some(rows) = answer.get_mut("results").and_then(Value::as_array_mut) {
        for row in rows.iter_mut().filter_map(Value::as_object_mut) {
            if row.get("comparison").is_some_and(Value::is_null) {
                row.remove("comparison");
            }
        }
    }
    answer
}

fn explore_field(path: &str) -> Option<String> {
    let field = path.strip_prefix("query.")?;
    // `filters[0]` keeps its item: the body's key, then the rest of the path.
    let (name, rest) = field.split_at(field.find(['.', '[']).unwrap_or(field.len()));
    EXPLORE_FIELDS.iter().find(|(_, input)| *input == name).map(|(key, _)| format!("{key}{rest}"))
}

/// A field of the `input` variable is the body's field of the same name.
fn input_field(path: &str) -> Option<String> {
    path.strip_prefix("input.").map(str::to_owned)
}

fn link_update_field(path: &str) -> Option<String> {
    let field = path.strip_prefix("input.")?;
    let (name, rest) = field.split_at(field.find(['.', '[']).unwrap_or(field.len()));
    LINK_UPDATE_FIELDS.iter().find(|(_, input, _)| *input == name).map(|(key, _, _)| format!("{key}{rest}"))
}

fn site_update_input(body: Map<String, Value>) -> AppResult<Map<String, Value>> {
    let input: Map<String, Value> = SITE_UPDATE_FIELDS
        .iter()
        .filter_map(|(key, _)| body.get(*key).map(|value| ((*key).to_owned(), value.clone())))
        .collect();
    let mut variables = Map::new();
    variables.insert("input".to_owned(), Value::Object(input));
    Ok(variables)
}

fn link_update_input(mut body: Map<String, Value>) -> AppResult<Map<String, Value>> {
    match body.get("tags") {
        None | Some(Value::Array(_)) => {}
        Some(Value::Null) => {
            body.insert("tags".to_owned(), Value::Array(Vec::new()));
        }
        Some(_) => return Err(AppError::validation("tags", "must be an array of strings")),
    }
    let input: Map<String, Value> = LINK_UPDATE_FIELDS
        .iter()
        .filter_map(|(key, field, _)| body.get(*key).map(|value| ((*field).to_owned(), value.clone())))
        .collect();
    let mut variables = Map::new();
    variables.insert("input".to_owned(), Value::Object(input));
    Ok(variables)
}

pub const OPERATIONS: &[Operation] = &[
    Operation {
        document: doc!("sign_up"),
        output: Output::Field("signUp"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        public: true,
        ..op("POST", "/api/auth/sign-up/email", "signUp", "auth", "Create an account and sign in")
    },
    Operation {
        document: doc!("sign_in"),
        output: Output::Field("signIn"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        public: true,
        ..op("POST", "/api/auth/sign-in/email", "signIn", "auth", "Sign in; sets the session cookie")
    },
    Operation {
        document: doc!("sign_out"),
        output: Output::Field("signOut"),
        ..op("POST", "/api/auth/sign-out", "signOut", "auth", "End the session")
    },
    Operation {
        document: doc!("get_session"),
        output: Output::Field("session"),
        public: true,
        ..op("GET", "/api/auth/get-session", "getSession", "auth", "The current session and user, or null")
    },
    Operation {
        document: doc!("update_user"),
        body: Body::Mapped {
            schema: super::auth::update_user_body,
            map: super::auth::update_user_input,
            field: |path| Some(path.to_owned()),
        },
        ..op("POST", "/api/auth/update-user", "updateUser", "auth", "Change the user's name or image")
    },
    Operation {
        document: doc!("change_email"),
        output: Output::Field("changeEmail"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/auth/change-email", "changeEmail", "auth", "Change the user's email")
    },
    Operation {
        document: doc!("change_password"),
        output: Output::Field("changePassword"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/auth/change-password", "changePassword", "auth", "Change the password")
    },
    Operation {
        document: doc!("delete_user"),
        output: Output::Field("deleteUser"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/auth/delete-user", "deleteUser", "auth", "Delete the account")
    },
    Operation {
        document: doc!("request_password_reset"),
        output: Output::Field("requestPasswordReset"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        public: true,
        ..op(
            "POST",
            "/api/auth/request-password-reset",
            "requestPasswordReset",
            "auth",
            "Email a password reset link; the same answer whether or not the address has an account",
        )
    },
    Operation {
        document: doc!("reset_password"),
        output: Output::Field("resetPassword"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        public: true,
        ..op("POST", "/api/auth/reset-password", "resetPassword", "auth", "Set a new password with a reset token")
    },
    Operation {
        document: doc!("send_verification_email"),
        output: Output::Field("sendVerificationEmail"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        public: true,
        ..op(
            "POST",
            "/api/auth/send-verification-email",
            "sendVerificationEmail",
            "auth",
            "Email a new verification link to an unverified address",
        )
    },
    Operation {
        document: doc!("verify_email"),
        output: Output::Field("verifyEmail"),
        query: &[param("token", Kind::Text, true)],
        public: true,
        ..op("GET", "/api/auth/verify-email", "verifyEmail", "auth", "Verify an address with the emailed token")
    },
    Operation {
        document: doc!("profile"),
        ..op("GET", "/api/profile", "profile", "account", "The signed-in user's profile")
    },
    Operation {
        document: doc!("sites_list"),
        ..op("GET", "/api/sites", "listSites", "sites", "Sites the caller can reach")
    },
    Operation {
        document: doc!("site_create"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/sites", "createSite", "sites", "Add a site (admins)")
    },
    Operation {
        document: doc!("site_update"),
        path_param: Some(SITE_PATH_ID),
        body: Body::Mapped { schema: site_update_body, map: site_update_input, field: input_field },
        ..op("PUT", "/api/sites/{id}", "updateSite", "sites", "Change a site (admins)")
    },
    Operation {
        document: doc!("site_delete"),
        output: Output::Field("deleteSite"),
        path_param: Some(SITE_PATH_ID),
        ..op("DELETE", "/api/sites/{id}", "deleteSite", "sites", "Remove a site and its data (admins)")
    },
    Operation {
        document: doc!("identity"),
        output: Output::Field("identity"),
        query: &[param("tracker_vid", Kind::Text, true), OPTIONAL_SITE_ID],
        ..op("GET", "/api/identify", "identity", "identify", "The latest identity of a visitor")
    },
    Operation {
        document: doc!("identify"),
        output: Output::Field("identify"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/identify", "identify", "identify", "Link a visitor to a known person")
    },
    Operation {
        document: doc!("conversion_record"),
        output: Output::Field("recordConversion"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op(
            "POST",
            "/api/conversions",
            "recordConversion",
            "revenue",
            "Record a server-side conversion (a closed deal, a payment); idempotent on external_id",
        )
    },
    Operation {
        document: doc!("links_list"),
        output: Output::Field("links"),
        query: &[OPTIONAL_SITE_ID],
        ..op("GET", "/api/links", "listLinks", "links", "Tracking links with click counts")
    },
    Operation {
        document: doc!("link_create"),
        output: Output::Field("createLink"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op("POST", "/api/links", "createLink", "links", "Create a tracking link")
    },
    Operation {
        document: doc!("check_slug"),
        output: Output::Field("checkSlug"),
        query: &[param("slug", Kind::Text, true), OPTIONAL_SITE_ID],
        ..op("GET", "/api/links/check-slug", "checkSlug", "links", "Whether a slug is free")
    },
    Operation {
        document: doc!("link_update"),
        path_param: Some(TEXT_ID),
        body: Body::Mapped { schema: link_update_body, map: link_update_input, field: link_update_field },
        ..op("PUT", "/api/links/{id}", "updateLink", "links", "Change the fields given")
    },
    Operation {
        document: doc!("link_delete"),
        output: Output::Field("deleteLink"),
        path_param: Some(TEXT_ID),
        ..op("DELETE", "/api/links/{id}", "deleteLink", "links", "Delete a link")
    },
    Operation {
        document: doc!("link_analytics"),
        output: Output::Field("linkAnalytics"),
        query: &[
            OPTIONAL_SITE_ID,
            param("range", Kind::Text, false),
            param("slug", Kind::Text, false),
            param("campaign", Kind::Text, false),
            param("source", Kind::Text, false),
        ],
        ..op(
            "GET",
            "/api/link-analytics",
            "linkAnalytics",
            "links",
            "Human clicks grouped by country, city, campaign, source and day",
        )
    },
    Operation {
        document: doc!("live_stream"),
        output: Output::Field("liveStream"),
        query: &[SITE_ID],
        ..op("GET", "/api/visitors", "liveVisitors", "visitors", "Visitors and events of the last 24 hours")
    },
    Operation {
        document: doc!("visitor_list"),
        output: Output::Field("visitors"),
        query: &[
            SITE_ID,
            Param { name: "limit", variable: "first", kind: Kind::Int, required: false },
            param("timeRange", Kind::Text, false),
            param("filter", Kind::Text, false),
            // The lead desk's additions (design §19); the spec's answer is unchanged.
            Param { name: "q", variable: "search", kind: Kind::Text, required: false },
            param("sort", Kind::Text, false),
            param("order", Kind::Text, false),
            param("page", Kind::Int, false),
            param("status", Kind::Text, false),
            param("hot", Kind::Bool, false),
            param("country", Kind::Text, false),
            param("channel", Kind::Text, false),
            param("campaign", Kind::Text, false),
            param("link", Kind::Text, false),
            param("visited", Kind::Text, false),
            param("account", Kind::Text, false),
            param("minScore", Kind::Int, false),
            param("form", Kind::Bool, false),
        ],
        csv: Some(super::hooks::visitors_csv),
        ..op("GET", "/api/visitor", "listVisitors", "visitors", "Scored visitors")
    },
    Operation {
        document: doc!("accounts_list"),
        output: Output::Field("accounts"),
        query: &[
            SITE_ID,
            param("timeRange", Kind::Text, false),
            Param { name: "q", variable: "search", kind: Kind::Text, required: false },
            param("sort", Kind::Text, false),
            param("hot", Kind::Bool, false),
            param("excluded", Kind::Bool, false),
            Param { name: "limit", variable: "first", kind: Kind::Int, required: false },
            param("page", Kind::Int, false),
        ],
        ..op("GET", "/api/accounts", "listAccounts", "accounts", "The companies behind the visitors, ranked")
    },
    Operation {
        document: doc!("account"),
        output: Output::Field("account"),
        path_param: Some(param("key", Kind::Text, true)),
        query: &[SITE_ID],
        ..op("GET", "/api/accounts/{key}", "account", "accounts", "One account with its people")
    },
    Operation {
        document: doc!("visitor_profile"),
        output: Output::Field("visitor"),
        path_param: Some(TEXT_ID),
        query: &[SITE_ID],
        ..op("GET", "/api/visitor/{id}", "visitorProfile", "visitors", "One visitor's profile")
    },
    Operation {
        document: doc!("erase_visitor"),
        output: Output::Field("eraseVisitor"),
        path_param: Some(TEXT_ID),
        query: &[SITE_ID],
        ..op("DELETE", "/api/visitor/{id}", "eraseVisitor", "privacy", "Erase a visitor and every trace (admins)")
    },
    Operation {
        path_param: Some(TEXT_ID),
        query: &[SITE_ID],
        hook: Some(Hook { route: super::hooks::export_visitor, answer: super::hooks::export_schema }),
        ..op(
            "GET",
            "/api/visitor/{id}/export",
            "exportVisitor",
            "privacy",
            "Download every stored fact about a visitor as JSON (admins)",
        )
    },
    Operation {
        document: doc!("stats"),
        output: Output::Field("stats"),
        query: &[SITE_ID, param("timeRange", Kind::Text, false)],
        ..op("GET", "/api/stats", "stats", "visitors", "Overview statistics")
    },
    Operation {
        document: doc!("explore"),
        output: Output::Shaped("explore", plausible_rows),
        body: Body::Mapped { schema: explore_body, map: explore_input, field: explore_field },
        ..op(
            "POST",
            "/api/v2/query",
            "explore",
            "visitors",
            "Explore: Plausible's Stats API v2 query (metrics, dimensions, filters, ranges, comparisons)",
        )
    },
    Operation {
        document: doc!("funnel_report"),
        output: Output::Field("funnelReport"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op(
            "POST",
            "/api/v2/funnel",
            "funnelReport",
            "visitors",
            "A funnel's visitors, conversion and drop-off per step (a saved funnel_id, or goal names as steps)",
        )
    },
    Operation {
        document: doc!("attribution"),
        output: Output::Field("attributionReport"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op(
            "POST",
            "/api/v2/attribution",
            "attributionReport",
            "revenue",
            "Leads, conversions and revenue credited to channels, sources, campaigns or links (first touch, last touch, linear)",
        )
    },
    Operation {
        document: doc!("explorer"),
        output: Output::Field("explorer"),
        query: &[
            SITE_ID,
            param("range", Kind::Text, false),
            param("from", Kind::Text, false),
            param("to", Kind::Text, false),
            param("compare", Kind::Text, false),
            param("filters", Kind::Text, false),
            param("panel", Kind::Text, false),
        ],
        csv: Some(super::hooks::explorer_csv),
        ..op(
            "GET",
            "/api/explorer",
            "explorer",
            "visitors",
            "The explorer page's reads: totals, series and panels; with panel and format=csv, that panel as CSV",
        )
    },
    Operation {
        document: doc!("session"),
        output: Output::Field("trackedSession"),
        path_param: Some(TEXT_ID),
        query: &[SITE_ID],
        ..op("GET", "/api/session/{id}", "trackedSession", "visitors", "One session and its timeline")
    },
    Operation {
        document: doc!("webhook_info"),
        output: Output::Field("webhookInfo"),
        ..op("GET", "/api/webhook", "webhookInfo", "webhooks", "Payload types and an example request")
    },
    Operation {
        document: doc!("webhook_send"),
        output: Output::Field("sendWebhook"),
        body: Body::Variables { except: NO_EXCEPTIONS },
        ..op(
            "POST",
            "/api/webhook",
            "sendWebhook",
            "webhooks",
            "Push a visitor's profile to a target, or preview it with dry_run",
        )
    },
];
