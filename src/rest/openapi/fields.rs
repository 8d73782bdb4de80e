//! JSON Schemas that state the services' input rules exactly, so that what
//! the document calls valid is what the server accepts. Services trim with
//! Rust's `char::is_whitespace`, which is not JSON Schema's `\s`, so the
//! patterns spell that set out.

use serde_json::{Value, json};

use crate::{
    auth::password,
    service::{identify, links, sites, users},
    webhook::guard,
};

/// Unicode White_Space: what `str::trim` removes.
const WS: &str = r"\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";
/// C0, DEL and C1: refused in names, ids and URLs.
const CONTROLS: &str = r"\x00-\x1f\x7f-\x9f";

/// No NUL character, which no text input takes (PostgreSQL cannot store it;
/// `graphql::nul`).
const NO_NUL: &str = r"^[^\x00]*$";

/// Any text without the NUL character.
pub fn any_text() -> Value {
    json!({ "type": "string", "pattern": NO_NUL })
}

/// A string whose trimmed form has `min..=max` characters.
fn trimmed(min: usize, max: usize) -> String {
    let core = match max {
        0 => String::new(),
        1 => format!(r"[^{WS}\x00]"),
        _ => format!(r"[^{WS}\x00]([^\x00]{{0,{}}}[^{WS}\x00])?", max - 2),
    };
    let core = if min == 0 { format!("({core})?") } else { core };
    format!("^[{WS}]*{core}[{WS}]*$")
}

/// Search text: at most `max` characters once trimmed, or empty.
pub fn search_text(max: usize) -> Value {
    json!({ "type": "string", "pattern": trimmed(0, max) })
}

/// A page pattern (a path, or `*` first), at most `max` characters once
/// trimmed, or empty.
pub fn path_pattern(max: usize) -> Value {
    let rest = format!(r"([^\x00]{{0,{}}}[^{WS}\x00])?", max - 2);
    json!({ "type": "string", "pattern": format!("^[{WS}]*([/*]{rest})?[{WS}]*$") })
}

/// A two-letter country code in either case, or empty.
pub fn country_code() -> Value {
    json!({ "type": "string", "pattern": format!("^[{WS}]*([A-Za-z]{{2}})?[{WS}]*$") })
}

/// One of `values` once trimmed; empty (the default) too when `empty` says so.
pub fn choice(values: &[&str], empty: bool) -> Value {
    let optional = if empty { "?" } else { "" };
    json!({ "type": "string", "pattern": format!("^[{WS}]*({}){optional}[{WS}]*$", values.join("|")) })
}

/// A person's name: at most 100 characters as sent, no control characters,
/// not blank.
pub fn person_name() -> Value {
    json!({
        "type": "string",
        "maxLength": users::MAX_NAME_LEN,
        "pattern": format!("^[^{CONTROLS}]*[^{WS}{CONTROLS}][^{CONTROLS}]*$"),
    })
}

pub fn email() -> Value {
    json!({ "type": "string", "format": "email", "maxLength": users::MAX_EMAIL_LEN })
}

/// A new password; sign-in takes any string and answers 401 when it is wrong.
pub fn new_password() -> Value {
    json!({ "type": "string", "minLength": password::MIN_LEN, "maxLength": password::MAX_LEN, "pattern": NO_NUL })
}

/// An http(s) URL, or empty to remove it.
pub fn image() -> Value {
    json!({
        "type": "string",
        "maxLength": users::MAX_URL_LEN,
        "pattern": format!("^(https?://[^{WS}{CONTROLS}]+)?$"),
    })
}

/// A path on this site (a same-origin absolute URL is accepted too).
pub fn callback_url() -> Value {
    let char = format!(r"[^{WS}{CONTROLS}\\]");
    json!({ "type": "string", "maxLength": users::MAX_URL_LEN, "pattern": format!(r"^/([^/{WS}{CONTROLS}\\]{char}*)?$") })
}

/// A site's name on creation: empty means the domain.
pub fn new_site_name() -> Value {
    json!({ "type": "string", "pattern": trimmed(0, sites::MAX_NAME_LEN) })
}

pub fn site_name() -> Value {
    json!({ "type": "string", "pattern": trimmed(1, sites::MAX_NAME_LEN) })
}

/// A host name (a URL works too: its host is kept).
pub fn host() -> Value {
    json!({ "type": "string", "format": "hostname", "minLength": 1, "maxLength": 253 })
}

/// A host name, or empty to clear it.
pub fn optional_host() -> Value {
    json!({ "type": "string", "anyOf": [host(), { "type": "string", "maxLength": 0 }] })
}

/// A visitor or user id: printable, not blank, at most 128 characters, and
/// not a placeholder such as `null`, `undefined` or `0`.
pub fn visitor_id() -> Value {
    json!({
        "type": "string",
        "maxLength": identify::MAX_ID_LEN,
        "pattern": format!("^[^{CONTROLS}]*[^{WS}{CONTROLS}][^{CONTROLS}]*$"),
        "not": { "enum": ["null", "undefined", "anonymous", "0", "none", "nil", "nan", "false", "true", "-1", "[object object]", "guest"] },
    })
}

/// A visitor id, or blank for none.
pub fn optional_id() -> Value {
    json!({ "anyOf": [visitor_id(), { "type": "string", "pattern": format!("^[{WS}]*$") }] })
}

/// An email, or blank for none.
pub fn optional_email() -> Value {
    json!({ "anyOf": [email(), { "type": "string", "pattern": format!("^[{WS}]*$") }] })
}

/// Free text of at most `max` characters once trimmed.
pub fn text(max: usize) -> Value {
    json!({ "type": "string", "pattern": trimmed(0, max) })
}

pub fn label() -> Value {
    text(links::MAX_LABEL_LEN)
}

/// The slug characters, 1 to `links::MAX_SLUG_LEN` of them.
fn slug_pattern() -> String {
    format!("[A-Za-z0-9_-]{{1,{}}}", links::MAX_SLUG_LEN)
}

/// A link's slug; empty on creation picks one.
pub fn new_slug() -> Value {
    json!({ "type": "string", "pattern": format!("^[{WS}]*({})?[{WS}]*$", slug_pattern()) })
}

pub fn slug() -> Value {
    json!({ "type": "string", "pattern": format!("^[{WS}]*{}[{WS}]*$", slug_pattern()) })
}

/// A slug exactly, with nothing around it.
pub fn exact_slug() -> Value {
    json!({ "pattern": format!("^{}$", slug_pattern()) })
}

/// A link's notes.
pub fn notes() -> Value {
    text(links::MAX_NOTES_LEN)
}

pub fn link_type() -> Value {
    choice(&["content", "ad", "bio"], true)
}

pub fn tags() -> Value {
    json!({ "type": "array", "maxItems": links::MAX_TAGS, "items": { "type": "string", "pattern": trimmed(1, links::MAX_TAG_LEN) } })
}

/// An absolute http(s) URL naming a host: what every URL field accepts.
/// Address literals and private hosts are refused where a URL is called.
pub fn web_url() -> Value {
    json!({
        "type": "string",
        "maxLength": links::MAX_URL_LEN,
        "pattern": format!(r"^[{WS}]*https?://[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)*(/[\x21-\x7e]*)?[{WS}]*$"),
    })
}

/// A webhook target: an http(s) URL whose host is a name, an IPv4 address
/// or a bracketed IPv6 address, with an optional port, as the server takes
/// it; its limit counts bytes, so only ASCII whitespace may surround it.
/// Private, loopback and reserved addresses, which the SSRF guard refuses
/// when the hook is called, cannot be told apart by a pattern.
pub fn webhook_url() -> Value {
    let ws = r"[\t\n\x0b\x0c\r ]*";
    let label = "[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?";
    let host = format!(r"({label}(\.{label})*|\[[0-9A-Fa-f:.]+\])");
    let port = "(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?";
    json!({
        "type": "string",
        "maxLength": guard::MAX_URL_LEN,
        "pattern": format!(r"^{ws}https?://{host}{port}([/?#][\x21-\x7e]*)?{ws}$"),
    })
}

/// An ISO 8601 instant, or a date (midnight UTC).
pub fn instant() -> Value {
    // ASCII digits spelled out: `\d` is any Unicode digit to some engines.
    let date = "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])";
    let time = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-](0[0-9]|1[0-3]):[0-5][0-9])?";
    json!({ "type": "string", "pattern": format!("^[{WS}]*{date}(T{time})?[{WS}]*$") })
}
