//! The signed-in user's account profile.

use sea_orm::ConnectionTrait;

use entity::{org, user};

use super::{access, orgs, users};
use crate::{
    auth::{Role, Viewer},
    error::AppResult,
};

pub struct Profile {
    pub user: user::Model,
    pub tier: &'static str,
    pub max_sites: u32,
    pub site_count: u64,
    pub org: org::Model,
    pub role: Role,
    pub member_since: i64,
}

/// Every account is on the free tier; the site limit is MAX_SITES_PER_ACCOUNT.
pub const DEFAULT_TIER: &str = "free";

pub async fn get(db: &impl ConnectionTrait, viewer: &Viewer, user_id: i64, max_sites: u32) -> AppResult<Profile> {
    let user = users::find(db, user_id).await?;
    let (member, org) = orgs::primary(db, user_id).await?;
    let site_count = access::sites(db, viewer).await?.len() as u64;
    Ok(Profile {
        user,
        tier: DEFAULT_TIER,
        max_sites,
        site_count,
        org,
        role: Role::parse(&member.role),
        member_since: member.created_at,
    })
}
