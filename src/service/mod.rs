//! All business logic and all database access, one module per capability.
//! Tenant data is only ever reached through the scoped finders in `access`.

pub mod access;
pub mod accounts;
pub mod alerts;
pub mod analytics;
pub mod api_keys;
pub mod conversions;
pub mod credit;
pub mod delivery;
pub mod email;
pub mod explore;
pub mod funnels;
pub mod goals;
pub mod identify;
pub mod invitations;
pub mod link_stats;
pub mod links;
pub mod members;
pub mod money;
pub mod orgs;
mod parent_lock;
pub mod path_pattern;
pub mod people;
pub mod privacy;
pub mod profile;
pub mod salts;
pub mod saved_views;
pub mod scoring;
pub mod sessions;
pub mod sites;
pub mod tracking;
pub mod users;
pub mod visit_groups;
pub mod webhooks;
pub mod workspace;

use sea_orm::{DbErr, SqlErr};

/// Ids per `IN (...)` list, well inside every backend's parameter limit.
pub(crate) const IN_LIST_CHUNK: usize = 500;

/// A name as typed: trimmed, 1 to `max` characters, without control
/// characters; refused as `name` otherwise.
pub(crate) fn checked_name(raw: &str, max: usize) -> crate::error::AppResult<String> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > max || name.chars().any(char::is_control) {
        return Err(crate::error::AppError::validation(
            "name",
            format!("must be 1 to {max} characters, without control characters"),
        ));
    }
    Ok(name.to_owned())
}

/// Whether an insert or update failed on a unique constraint.
pub(crate) fn is_unique_violation(err: &DbErr) -> bool {
    matches!(err.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}
