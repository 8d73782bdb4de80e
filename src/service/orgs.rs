//! Orgs (tenants) and their memberships.

use base64::{Engine, engine::general_purpose::STANDARD};
use rand::RngCore;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect,
};

use entity::{member, org, user};

use super::parent_lock;
use crate::{
    auth::Role,
    cluster::{AccessRevoked, Changed, Cluster},
    error::{AppError, AppResult},
    time::now_ms,
};

/// A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes.
pub fn new_signing_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// Lower-case letters, digits and single dashes, at most `max` characters.
pub fn slugify(text: &str, max: usize) -> String {
    let mut slug = String::new();
    for ch in text.chars().flat_map(char::to_lowercase) {
        if ch.is_ascii_alphanumeric() {
            slug.push(ch);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= max {
            break;
        }
    }
    slug.trim_end_matches('-').to_owned()
}

/// Five random lower-case characters, for making a taken slug unique.
pub fn random_suffix() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..5).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

/// Sign-up gives every user an org of their own, which they own.
pub async fn create_personal(db: &impl ConnectionTrait, user: &user::Model) -> AppResult<org::Model> {
    let now = now_ms();
    let base = slugify(&user.name, 32);
    let base = if base.is_empty() { "org".to_owned() } else { base };
    let org = org::ActiveModel {
        name: Set(user.name.clone()),
        slug: Set(format!("{base}-{}", random_suffix())),
        signing_secret: Set(new_signing_secret()),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    member::ActiveModel {
        org_id: Set(org.id),
        user_id: Set(user.id),
        role: Set(Role::Owner.as_str().to_owned()),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(org)
}

/// The org a user acts in when a request names none: their oldest membership.
pub async fn primary(db: &impl ConnectionTrait, user_id: i64) -> AppResult<(member::Model, org::Model)> {
    super::access::memberships(db, user_id).await?.into_iter().next().ok_or_else(|| AppError::not_found("organization"))
}

/// Deletes every org where `user_id` is the only owner; the database cascades
/// to their members, keys, sites and all tracking data.
/// The orgs deleted, by id.
pub async fn delete_solely_owned(txn: &DatabaseTransaction, user_id: i64) -> AppResult<Vec<i64>> {
    let owned: Vec<i64> = member::Entity::find()
        .select_only()
        .column(member::Column::OrgId)
        .filter(member::Column::UserId.eq(user_id))
        .filter(member::Column::Role.eq(Role::Owner.as_str()))
        .order_by_asc(member::Column::OrgId)
        .into_tuple()
        .all(txn)
        .await?;
    let mut deleted = Vec::new();
    for org_id in owned {
        // As when an owner leaves: another owner leaving at the same moment
        // must see this one still there, or see the org gone.
        parent_lock::lock::<org::Entity>(txn, org_id).await?;
        let other_owners = member::Entity::find()
            .filter(member::Column::OrgId.eq(org_id))
            .filter(member::Column::Role.eq(Role::Owner.as_str()))
            .filter(member::Column::UserId.ne(user_id))
            .one(txn)
            .await?;
        if other_owners.is_none() {
            org::Entity::delete_by_id(org_id).exec(txn).await?;
            deleted.push(org_id);
        }
    }
    Ok(deleted)
}

/// Deletes an org with everything in it; its sites and links stop answering
/// on every instance. Owners only.
pub async fn delete(
    db: &impl ConnectionTrait,
    cluster: &Cluster,
    viewer: &crate::auth::Viewer,
    org_id: i64,
) -> AppResult<()> {
    super::access::find_org(db, viewer, org_id, Role::Owner).await?;
    org::Entity::delete_by_id(org_id).exec(db).await?;
    cluster.changed(Changed::All).await;
    cluster.access_revoked(AccessRevoked::Org { org_id }).await;
    Ok(())
}
