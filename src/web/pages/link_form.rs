//! The link form shared by creating (`/links`) and editing (`/links/<id>`):
//! every field the API takes, read from the form into `LinkInput` or
//! `LinkUpdateInput`, and filled back from what was typed or stored.

use serde_json::{Map, Value, json};

use crate::{
    error::{AppError, AppResult},
    time,
    web::forms::{FormInput, FormState, Input, input},
};

/// The link form's inputs, each filling a field of `$input` (creating and
/// editing alike), with the labels `link_fields.html` shows.
pub const INPUTS: [Input; 11] = [
    input("destination", "Destination URL", "input.destinationUrl"),
    input("slug", "Slug", "input.slug"),
    input("campaign", "Campaign", "input.campaign"),
    input("source", "Source", "input.source"),
    input("medium", "Medium", "input.medium"),
    input("content", "Content", "input.content"),
    input("notes", "Notes", "input.notes"),
    input("link_type", "Type", "input.linkType"),
    input("tags", "Tags", "input.tags"),
    input("expires_at", "Expires (UTC)", "input.expiresAt"),
    input("max_clicks", "Most clicks", "input.maxClicks"),
];

/// The form's values as shown.
pub struct LinkFields {
    pub destination: String,
    pub slug: String,
    pub campaign: String,
    pub source: String,
    pub medium: String,
    pub content: String,
    pub notes: String,
    pub link_type: String,
    /// Comma-separated.
    pub tags: String,
    /// `YYYY-MM-DDTHH:MM` in UTC, as `<input type="datetime-local">` takes it.
    pub expires_at: String,
    pub max_clicks: String,
    pub active: bool,
}

impl Default for LinkFields {
    fn default() -> Self {
        LinkFields {
            destination: String::new(),
            slug: String::new(),
            campaign: String::new(),
            source: String::new(),
            medium: String::new(),
            content: String::new(),
            notes: String::new(),
            link_type: "content".to_owned(),
            tags: String::new(),
            expires_at: String::new(),
            max_clicks: String::new(),
            active: true,
        }
    }
}

/// An ISO timestamp as the form's `datetime-local` value (UTC, minutes).
pub fn local_value(iso: &str) -> String {
    time::parse_iso(iso).map(|ms| time::iso(ms).chars().take(16).collect()).unwrap_or_default()
}

impl LinkFields {
    /// What was typed into form `action`, or `stored` when it was not sent.
    pub fn from_state(state: &FormState, action: &str, stored: LinkFields) -> LinkFields {
        if !state.sent(action) {
            return stored;
        }
        let value = |name: &str| state.value(action, name);
        LinkFields {
            destination: value("destination"),
            slug: value("slug"),
            campaign: value("campaign"),
            source: value("source"),
            medium: value("medium"),
            content: value("content"),
            notes: value("notes"),
            link_type: value("link_type"),
            tags: value("tags"),
            expires_at: value("expires_at"),
            max_clicks: value("max_clicks"),
            active: matches!(value("active").as_str(), "1" | "on" | "true"),
        }
    }

    /// The form as the API's input object. Creating leaves empty labels
    /// out; editing sends them, so emptying a field clears it.
    pub fn read(input: &FormInput, creating: bool) -> AppResult<Map<String, Value>> {
        let mut fields = Map::new();
        fields.insert("destinationUrl".to_owned(), json!(input.text("destination")));
        let labels = [
            ("slug", "slug"),
            ("campaign", "campaign"),
            ("source", "source"),
            ("medium", "medium"),
            ("content", "content"),
            ("notes", "notes"),
            ("link_type", "linkType"),
        ];
        for (name, api) in labels {
            let value = input.text(name);
            if !(creating && value.is_empty()) {
                fields.insert(api.to_owned(), json!(value));
            }
        }
        let tags: Vec<String> =
            input.text("tags").split(',').map(str::trim).filter(|tag| !tag.is_empty()).map(str::to_owned).collect();
        fields.insert("tags".to_owned(), json!(tags));
        fields.insert("expiresAt".to_owned(), expires_at(&input.text("expires_at"))?);
        let max_clicks = input.text("max_clicks");
        let max_clicks = if max_clicks.is_empty() {
            Value::Null
        } else {
            json!(max_clicks.parse::<i64>().map_err(|_| AppError::validation("max_clicks", "must be a whole number"))?)
        };
        fields.insert("maxClicks".to_owned(), max_clicks);
        fields.insert("isActive".to_owned(), json!(input.flag("active")?));
        Ok(fields)
    }
}

/// The expiry as the API's timestamp: a form's `datetime-local` value is
/// UTC (the form says so); a full ISO timestamp is taken as it is.
fn expires_at(raw: &str) -> AppResult<Value> {
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    let iso = if raw.len() == 16 { format!("{raw}:00Z") } else { raw.to_owned() };
    let ms = time::parse_iso(&iso)
        .ok_or_else(|| AppError::validation("expires_at", "must be a date and time (YYYY-MM-DDTHH:MM, UTC)"))?;
    Ok(json!(time::iso(ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_values_become_utc_timestamps_or_errors() {
        let cases = [
            ("", Some(Value::Null)),
            ("2030-01-02T03:04", Some(json!("2030-01-02T03:04:00.000Z"))),
            ("2030-01-02T03:04:05Z", Some(json!("2030-01-02T03:04:05.000Z"))),
            ("2030-01-02T03:04:05+01:00", Some(json!("2030-01-02T02:04:05.000Z"))),
            ("next tuesday", None),
            ("2030-13-02T03:04", None),
        ];
        for (raw, expected) in cases {
            assert_eq!(expires_at(raw).ok(), expected, "{raw}");
        }
    }
}
