use sea_orm::entity::prelude::*;

/// A company behind a site's visitors (design §18), keyed by its web domain,
/// `name:<company>` or `asn:<number>`. The batch writer keeps its figures as
/// it keeps the hourly rollups: each visitor with this account counted once,
/// moved when it changes account, taken out when erased or purged.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "accounts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub account_key: String,
    /// The name its latest visitor gave it (a company, a domain, a network's holder).
    pub name: String,
    pub visitors: i64,
    /// Of `visitors`, the identified ones.
    pub people: i64,
    pub sessions: i64,
    pub pageviews: i64,
    pub engaged_seconds: i64,
    pub high_value_views: i64,
    pub form_submits: i64,
    pub first_seen: i64,
    pub last_seen: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
