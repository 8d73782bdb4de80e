//! Org membership: who belongs to an org and with which role. Admins manage
//! members; only owners grant, change or take away the owner role; an org
//! always keeps at least one owner.

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder,
};

use entity::{member, org, user};

use super::{access, parent_lock};
use crate::{
    auth::{Role, Viewer},
    cluster::{AccessRevoked, Cluster},
    error::{AppError, AppResult, ErrorCode},
};

/// Parses a role name; anything else is a validation error.
pub fn parse_role(value: &str) -> AppResult<Role> {
    match value.trim() {
        "owner" => Ok(Role::Owner),
        "admin" => Ok(Role::Admin),
        "member" => Ok(Role::Member),
        "viewer" => Ok(Role::Viewer),
        _ => Err(AppError::validation("role", "must be owner, admin, member or viewer")),
    }
}

/// The org's members with their users, oldest first. Anyone in the org.
pub async fn list(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    org_id: i64,
) -> AppResult<Vec<(member::Model, user::Model)>> {
    access::find_org(db, viewer, org_id, Role::Viewer).await?;
    let rows = member::Entity::find()
        .filter(member::Column::OrgId.eq(org_id))
        .find_also_related(user::Entity)
        .order_by_asc(member::Column::CreatedAt)
        .order_by_asc(member::Column::Id)
        .all(db)
        .await?;
    Ok(rows.into_iter().filter_map(|(member, user)| user.map(|user| (member, user))).collect())
}

/// Admins manage members; touching the owner role takes an owner.
pub(super) async fn manager_role(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    org_id: i64,
    owner_involved: bool,
) -> AppResult<Role> {
    let (_, role) = access::find_org(db, viewer, org_id, Role::Admin).await?;
    if owner_involved {
        access::require(role, Role::Owner)?;
    }
    Ok(role)
}

async fn membership(db: &impl ConnectionTrait, org_id: i64, user_id: i64) -> AppResult<member::Model> {
    member::Entity::find()
        .filter(member::Column::OrgId.eq(org_id))
        .filter(member::Column::UserId.eq(user_id))
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("member"))
}

async fn owner_count(db: &impl ConnectionTrait, org_id: i64) -> AppResult<u64> {
    Ok(member::Entity::find()
        .filter(member::Column::OrgId.eq(org_id))
        .filter(member::Column::Role.eq(Role::Owner.as_str()))
        .count(db)
        .await?)
}

fn last_owner() -> AppError {
    AppError::new(ErrorCode::Conflict, "an org needs at least one owner; make someone else owner first")
}

pub async fn change_role(
    db: &DatabaseConnection,
    cluster: &Cluster,
    viewer: &Viewer,
    org_id: i64,
    user_id: i64,
    role: Role,
) -> AppResult<(member::Model, user::Model)> {
    access::find_org(db, viewer, org_id, Role::Admin).await?;
    // Under the org's lock, so two owners stepping down at once cannot both
    // count the other and leave the org without one.
    let txn = parent_lock::begin::<org::Entity>(db, org_id).await?;
    let current = membership(&txn, org_id, user_id).await?;
    let was_owner = Role::parse(&current.role) == Role::Owner;
    manager_role(&txn, viewer, org_id, was_owner || role == Role::Owner).await?;
    if was_owner && role != Role::Owner && owner_count(&txn, org_id).await? <= 1 {
        return Err(last_owner());
    }
    let mut active: member::ActiveModel = current.into();
    active.role = Set(role.as_str().to_owned());
    let member = active.update(&txn).await?;
    let user = user::Entity::find_by_id(user_id).one(&txn).await?.ok_or_else(|| AppError::not_found("member"))?;
    txn.commit().await?;
    // Their open sockets were opened with the old role.
    cluster.access_revoked(AccessRevoked::User { user_id }).await;
    Ok((member, user))
}

/// Removes a member. Anyone may leave an org; removing others takes an admin.
/// The member's open sockets close on every instance.
pub async fn remove(
    db: &DatabaseConnection,
    cluster: &Cluster,
    viewer: &Viewer,
    org_id: i64,
    user_id: i64,
) -> AppResult<()> {
    access::find_org(db, viewer, org_id, Role::Viewer).await?;
    let txn = parent_lock::begin::<org::Entity>(db, org_id).await?;
    let current = membership(&txn, org_id, user_id).await?;
    let is_owner = Role::parse(&current.role) == Role::Owner;
    if viewer.user_id() != Some(user_id) {
        manager_role(&txn, viewer, org_id, is_owner).await?;
    }
    if is_owner && owner_count(&txn, org_id).await? <= 1 {
        return Err(last_owner());
    }
    member::Entity::delete_by_id(current.id).exec(&txn).await?;
    txn.commit().await?;
    cluster.access_revoked(AccessRevoked::User { user_id }).await;
    Ok(())
}
