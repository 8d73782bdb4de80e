//! Scoped finders: the only way a request reaches tenant data. Each answers
//! NOT_FOUND for objects outside the viewer's orgs, so their existence never
//! leaks, and FORBIDDEN when the viewer's role is too weak.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::{member, org, site};

use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult, ErrorCode},
};

/// The ids of every org the viewer can see.
pub async fn visible_org_ids(db: &impl ConnectionTrait, viewer: &Viewer) -> AppResult<Vec<i64>> {
    match viewer {
        Viewer::ApiKey { org_id, .. } => Ok(vec![*org_id]),
        Viewer::User { user_id, .. } => Ok(member::Entity::find()
            .select_only()
            .column(member::Column::OrgId)
            .filter(member::Column::UserId.eq(*user_id))
            .into_tuple::<i64>()
            .all(db)
            .await?),
    }
}

/// The viewer's role in an org, or NOT_FOUND when they are not in it.
pub async fn role_in(db: &impl ConnectionTrait, viewer: &Viewer, org_id: i64) -> AppResult<Role> {
    match viewer {
        Viewer::ApiKey { org_id: key_org, .. } if *key_org == org_id => Ok(Role::API_KEY),
        Viewer::ApiKey { .. } => Err(AppError::not_found("organization")),
        Viewer::User { user_id, .. } => member::Entity::find()
            .filter(member::Column::OrgId.eq(org_id))
            .filter(member::Column::UserId.eq(*user_id))
            .one(db)
            .await?
            .map(|member| Role::parse(&member.role))
            .ok_or_else(|| AppError::not_found("organization")),
    }
}

pub fn require(role: Role, needed: Role) -> AppResult<()> {
    if role >= needed {
        Ok(())
    } else {
        Err(AppError::forbidden(format!("this needs the {} role or higher", needed.as_str())))
    }
}

/// The org, if the viewer belongs to it with at least `needed`.
pub async fn find_org(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    org_id: i64,
    needed: Role,
) -> AppResult<(org::Model, Role)> {
    let role = role_in(db, viewer, org_id).await?;
    require(role, needed)?;
    let org = org::Entity::find_by_id(org_id).one(db).await?.ok_or_else(|| AppError::not_found("organization"))?;
    Ok((org, role))
}

/// Every org the viewer belongs to, with its role there, in one query.
pub async fn orgs(db: &impl ConnectionTrait, viewer: &Viewer) -> AppResult<Vec<(org::Model, Role)>> {
    match viewer {
        Viewer::ApiKey { org_id, .. } => Ok(vec![find_org(db, viewer, *org_id, Role::Viewer).await?]),
        Viewer::User { user_id, .. } => Ok(memberships(db, *user_id)
            .await?
            .into_iter()
            .map(|(member, org)| (org, Role::parse(&member.role)))
            .collect()),
    }
}

/// A site the viewer can reach with at least `needed`.
pub async fn site(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    needed: Role,
) -> AppResult<(site::Model, Role)> {
    let site = site::Entity::find_by_id(site_id).one(db).await?.ok_or_else(|| AppError::not_found("site"))?;
    let role = match role_in(db, viewer, site.org_id).await {
        Err(err) if err.code == ErrorCode::NotFound => return Err(AppError::not_found("site")),
        other => other?,
    };
    require(role, needed)?;
    Ok((site, role))
}

/// Every site in the viewer's orgs, oldest first.
pub async fn sites(db: &impl ConnectionTrait, viewer: &Viewer) -> AppResult<Vec<site::Model>> {
    let org_ids = visible_org_ids(db, viewer).await?;
    Ok(site::Entity::find().filter(site::Column::OrgId.is_in(org_ids)).order_by_asc(site::Column::Id).all(db).await?)
}

/// The site used when a request names none: the viewer's oldest site.
pub async fn first_site(db: &impl ConnectionTrait, viewer: &Viewer) -> AppResult<site::Model> {
    let org_ids = visible_org_ids(db, viewer).await?;
    site::Entity::find()
        .filter(site::Column::OrgId.is_in(org_ids))
        .order_by_asc(site::Column::Id)
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("site"))
}

/// An explicit site id, or the viewer's first site when none is given.
pub async fn site_or_first(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: Option<i64>,
    needed: Role,
) -> AppResult<site::Model> {
    match site_id {
        Some(id) => Ok(site(db, viewer, id, needed).await?.0),
        None => {
            let site = first_site(db, viewer).await?;
            require(role_in(db, viewer, site.org_id).await?, needed)?;
            Ok(site)
        }
    }
}

/// The user's memberships with their orgs, oldest first.
pub async fn memberships(db: &impl ConnectionTrait, user_id: i64) -> AppResult<Vec<(member::Model, org::Model)>> {
    let rows = member::Entity::find()
        .filter(member::Column::UserId.eq(user_id))
        .find_also_related(org::Entity)
        .order_by_asc(member::Column::CreatedAt)
        .order_by_asc(member::Column::Id)
        .all(db)
        .await?;
    Ok(rows.into_iter().filter_map(|(member, org)| org.map(|org| (member, org))).collect())
}
