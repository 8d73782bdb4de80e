//! Org API keys for server-to-server callers (`Authorization: Bearer lt_...`).

use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};

use entity::api_key;

use super::access;
use crate::{
    auth::{Role, Viewer, token},
    cluster::{AccessRevoked, Cluster},
    error::{AppError, AppResult},
    time::{MINUTE_MS, now_ms},
};

const MAX_NAME_LEN: usize = 100;
const PREFIX_LEN: usize = 10;

/// The viewer for a key, or none when the key is unknown or revoked.
pub async fn authenticate(db: &impl ConnectionTrait, key: &str) -> AppResult<Option<Viewer>> {
    if !key.starts_with(token::API_KEY_PREFIX) {
        return Ok(None);
    }
    let Some(found) = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(token::hash_token(key)))
        .filter(api_key::Column::RevokedAt.is_null())
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let now = now_ms();
    // Recording every use would turn each API read into a write.
    if found.last_used_at.is_none_or(|last| now - last > MINUTE_MS) {
        let mut active: api_key::ActiveModel = found.clone().into();
        active.last_used_at = Set(Some(now));
        active.update(db).await?;
    }
    Ok(Some(Viewer::ApiKey { org_id: found.org_id, key_id: found.id }))
}

/// Returns the key in plain text (shown once) and its stored record.
pub async fn create(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    org_id: i64,
    name: &str,
) -> AppResult<(String, api_key::Model)> {
    access::find_org(db, viewer, org_id, Role::Admin).await?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN {
        return Err(AppError::validation("name", format!("must be 1 to {MAX_NAME_LEN} characters")));
    }
    let key = token::new_api_key();
    let record = api_key::ActiveModel {
        org_id: Set(org_id),
        name: Set(name.to_owned()),
        prefix: Set(key.chars().take(PREFIX_LEN).collect()),
        key_hash: Set(token::hash_token(&key)),
        created_by: Set(viewer.user_id()),
        created_at: Set(now_ms()),
        last_used_at: Set(None),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok((key, record))
}

pub async fn list(db: &impl ConnectionTrait, viewer: &Viewer, org_id: i64) -> AppResult<Vec<api_key::Model>> {
    access::find_org(db, viewer, org_id, Role::Admin).await?;
    Ok(api_key::Entity::find()
        .filter(api_key::Column::OrgId.eq(org_id))
        .order_by_asc(api_key::Column::Id)
        .all(db)
        .await?)
}

/// Revokes a key; sockets opened with it close on every instance.
pub async fn revoke(
    db: &impl ConnectionTrait,
    cluster: &Cluster,
    viewer: &Viewer,
    key_id: i64,
) -> AppResult<api_key::Model> {
    let key = api_key::Entity::find_by_id(key_id).one(db).await?.ok_or_else(|| AppError::not_found("API key"))?;
    access::find_org(db, viewer, key.org_id, Role::Admin).await.map_err(|err| {
        if err.code == crate::error::ErrorCode::NotFound { AppError::not_found("API key") } else { err }
    })?;
    if key.revoked_at.is_some() {
        return Ok(key);
    }
    let mut active: api_key::ActiveModel = key.into();
    active.revoked_at = Set(Some(now_ms()));
    let revoked = active.update(db).await?;
    cluster.access_revoked(AccessRevoked::ApiKey { key_id }).await;
    Ok(revoked)
}
