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
pub mod webhooks;
pub mod workspace;

use sea_orm::{DbErr, SqlErr};

/// Ids per `IN (...)` list, well inside every backend's parameter limit.
pub(crate) const IN_LIST_CHUNK: usize = 500;

/// Whether an insert or update failed on a unique constraint.
pub(crate) fn is_unique_violation(err: &DbErr) -> bool {
    matches!(err.sql_err(), Some(SqlErr::UniqueConstraintViolation(_)))
}
