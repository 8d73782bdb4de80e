//! Which site a signed-in person is looking at in the web app: the one they
//! chose last (remembered on their user row), the site a visitor link
//! without a site belongs to, and, for a page, that site's org and the
//! viewer's role there (asked for only by the pages that need it).

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, JoinType, QueryFilter, QueryOrder, QuerySelect, RelationTrait,
    sea_query::Expr,
};

use entity::{org, site, user, visitor};

use super::{access, links, orgs};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult, ErrorCode},
};

/// The site to show: the remembered one while the viewer can still read it,
/// else their first site; `None` when they have no site at all. A remembered
/// site that was deleted or left behind with an org is simply skipped.
pub async fn current_site(db: &impl ConnectionTrait, viewer: &Viewer) -> AppResult<Option<site::Model>> {
    if let Some(user_id) = viewer.user_id() {
        let remembered: Option<Option<i64>> = user::Entity::find_by_id(user_id)
            .select_only()
            .column(user::Column::CurrentSiteId)
            .into_tuple()
            .one(db)
            .await?;
        if let Some(site_id) = remembered.flatten() {
            match access::site(db, viewer, site_id, Role::Viewer).await {
                Ok((site, _)) => return Ok(Some(site)),
                Err(err) if err.code == ErrorCode::NotFound => {}
                Err(err) => return Err(err),
            }
        }
    }
    match access::first_site(db, viewer).await {
        Ok(site) => Ok(Some(site)),
        Err(err) if err.code == ErrorCode::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Remembers `site_id` as the signed-in user's current site. Only a site they
/// can read is accepted (another org's is NOT_FOUND, as everywhere).
pub async fn select_site(db: &impl ConnectionTrait, viewer: &Viewer, site_id: i64) -> AppResult<site::Model> {
    let user_id = viewer.user_id().ok_or_else(|| AppError::forbidden("this needs a signed-in user, not an API key"))?;
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    user::Entity::update_many()
        .col_expr(user::Column::CurrentSiteId, Expr::value(site.id))
        .filter(user::Column::Id.eq(user_id))
        .exec(db)
        .await?;
    Ok(site)
}

/// Among the sites the viewer can read, the one whose visitor with this
/// `tracker_vid` was seen last. Webhook payloads link to a visitor without
/// naming a site, and a person may follow one visitor on several sites.
pub async fn site_of_visitor(db: &impl ConnectionTrait, viewer: &Viewer, tracker_vid: &str) -> AppResult<site::Model> {
    let org_ids = access::visible_org_ids(db, viewer).await?;
    // The unique (site_id, tracker_vid) index answers this with one lookup per site.
    site::Entity::find()
        .join(JoinType::InnerJoin, visitor::Relation::Site.def().rev())
        .filter(site::Column::OrgId.is_in(org_ids))
        .filter(visitor::Column::TrackerVid.eq(tracker_vid))
        .order_by_desc(visitor::Column::LastSeen)
        .order_by_asc(site::Column::Id)
        .one(db)
        .await?
        .ok_or_else(|| AppError::not_found("visitor"))
}

/// What a page is about, as its address names it.
#[derive(Debug, Default, Clone, Copy)]
pub struct Choice<'a> {
    /// `?site=N`: this site, whatever else is named.
    pub site: Option<i64>,
    /// A visitor without a site: the readable site that saw them last.
    pub visitor: Option<&'a str>,
    /// A link: its site.
    pub link: Option<i64>,
}

/// The site the address chose (NOT_FOUND when the viewer cannot read it),
/// else the visitor's or the link's site, else the current site; `None`
/// when the viewer has no site yet and the address named none.
pub async fn resolve_site(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    choice: Choice<'_>,
) -> AppResult<Option<site::Model>> {
    Ok(match choice {
        Choice { site: Some(site_id), .. } => Some(access::site(db, viewer, site_id, Role::Viewer).await?.0),
        Choice { visitor: Some(tracker_vid), .. } => Some(site_of_visitor(db, viewer, tracker_vid).await?),
        Choice { link: Some(link_id), .. } => Some(links::find(db, viewer, link_id, Role::Viewer).await?.1),
        Choice { .. } => current_site(db, viewer).await?,
    })
}

/// The org a page acts in, with the viewer's role there: the site's org,
/// else the viewer's primary org (an API key's own); `None` for a person in
/// no org.
pub async fn org_of(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site: Option<&site::Model>,
) -> AppResult<Option<(org::Model, Role)>> {
    Ok(match (site, viewer) {
        (Some(site), _) => Some(access::find_org(db, viewer, site.org_id, Role::Viewer).await?),
        (None, Viewer::ApiKey { org_id, .. }) => Some(access::find_org(db, viewer, *org_id, Role::Viewer).await?),
        (None, Viewer::User { user_id, .. }) => match orgs::primary(db, *user_id).await {
            Ok((member, org)) => Some((org, Role::parse(&member.role))),
            Err(err) if err.code == ErrorCode::NotFound => None,
            Err(err) => Err(err)?,
        },
    })
}
