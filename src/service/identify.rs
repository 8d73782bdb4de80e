//! Identification: linking an anonymous visitor to a known person.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};

use entity::identity;

use super::{
    access,
    tracking::{IdentifyCommand, writer::Writer},
    users,
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    time::now_ms,
};

pub const MAX_ID_LEN: usize = 128;
pub const MAX_TEXT_LEN: usize = 256;
const MAX_TRAITS_BYTES: usize = 8192;
pub const DEFAULT_SOURCE: &str = "api";

/// Placeholder values that broken integrations send instead of an id.
pub fn is_junk_id(id: &str) -> bool {
    const JUNK: [&str; 12] = [
        "null",
        "undefined",
        "anonymous",
        "0",
        "none",
        "nil",
        "nan",
        "false",
        "true",
        "-1",
        "[object object]",
        "guest",
    ];
    let id = id.trim();
    id.is_empty() || JUNK.iter().any(|junk| id.eq_ignore_ascii_case(junk))
}

/// A visitor or user id: not junk, not too long, no control characters.
pub fn validate_id(field: &str, id: &str) -> AppResult<String> {
    if is_junk_id(id) {
        return Err(AppError::validation(field, "is missing or a placeholder such as null or undefined"));
    }
    if id.chars().count() > MAX_ID_LEN || id.chars().any(char::is_control) {
        return Err(AppError::validation(field, format!("must be at most {MAX_ID_LEN} printable characters")));
    }
    Ok(id.trim().to_owned())
}

fn optional_text(field: &str, value: Option<String>) -> AppResult<Option<String>> {
    match value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
        Some(text) if text.chars().count() > MAX_TEXT_LEN => {
            Err(AppError::validation(field, format!("must be at most {MAX_TEXT_LEN} characters")))
        }
        other => Ok(other),
    }
}

pub struct IdentifyInput {
    pub site_id: i64,
    pub tracker_vid: String,
    pub user_id: Option<String>,
    pub email: Option<String>,
    pub name: Option<String>,
    pub company: Option<String>,
    pub phone: Option<String>,
    pub traits: Option<serde_json::Value>,
    pub source: Option<String>,
    pub source_detail: Option<String>,
}

/// Identifies a visitor: checks the input and the caller's right, then has
/// the batch writer store it, answering once it is committed.
pub async fn identify(
    db: &impl ConnectionTrait,
    writer: &Writer,
    viewer: &Viewer,
    input: IdentifyInput,
) -> AppResult<IdentifyCommand> {
    let command = prepare(db, viewer, input).await?;
    writer.identify(command.clone()).await?;
    Ok(command)
}

/// Checks the input and the caller's right to identify on the site.
async fn prepare(db: &impl ConnectionTrait, viewer: &Viewer, input: IdentifyInput) -> AppResult<IdentifyCommand> {
    let tracker_vid = validate_id("tracker_vid", &input.tracker_vid)?;
    let user_id = match input.user_id.filter(|id| !id.trim().is_empty()) {
        Some(id) => Some(validate_id("user_id", &id)?),
        None => None,
    };
    let email = match input.email.filter(|email| !email.trim().is_empty()) {
        Some(email) => Some(users::validate_email("email", &email)?),
        None => None,
    };
    if user_id.is_none() && email.is_none() {
        return Err(AppError::validation("userId", "a user id or an email is required"));
    }
    let traits = match input.traits {
        None | Some(serde_json::Value::Null) => "{}".to_owned(),
        Some(value @ serde_json::Value::Object(_)) => value.to_string(),
        Some(_) => return Err(AppError::validation("traits", "must be an object")),
    };
    if traits.len() > MAX_TRAITS_BYTES {
        return Err(AppError::validation("traits", format!("must be at most {MAX_TRAITS_BYTES} bytes of JSON")));
    }
    let source = optional_text("source", input.source)?.unwrap_or_else(|| DEFAULT_SOURCE.to_owned());
    let (site, _) = access::site(db, viewer, input.site_id, Role::Member).await?;
    Ok(IdentifyCommand {
        site_id: site.id,
        tracker_vid,
        user_id,
        email,
        name: optional_text("name", input.name)?,
        company: optional_text("company", input.company)?,
        phone: optional_text("phone", input.phone)?,
        traits,
        source,
        source_detail: optional_text("source_detail", input.source_detail)?,
        identified_at: now_ms(),
    })
}

/// The visitor's latest identity on a site the viewer can read.
pub async fn latest(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    tracker_vid: &str,
) -> AppResult<Option<identity::Model>> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    Ok(identity::Entity::find()
        .filter(identity::Column::SiteId.eq(site.id))
        .filter(identity::Column::TrackerVid.eq(tracker_vid))
        .order_by_desc(identity::Column::IdentifiedAt)
        .order_by_desc(identity::Column::Id)
        .one(db)
        .await?)
}
