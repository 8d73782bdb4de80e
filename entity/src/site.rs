use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sites")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub org_id: i64,
    pub name: String,
    pub domain: String,
    /// Globally unique; the first path segment of a short link.
    pub slug: String,
    /// `cookie` or `cookieless`.
    pub tracking_mode: String,
    pub first_party_domain: Option<String>,
    /// JSON array of path patterns that count as high-value views.
    pub high_value_patterns: String,
    pub hot_threshold: i32,
    pub created_at: i64,
    /// Days visitor-level data is kept; `None` keeps it all.
    pub retention_days: Option<i32>,
    /// The latest cutoff a retention purge applied (epoch milliseconds):
    /// rollups are exact only for ranges that start at or after it.
    pub purged_before: Option<i64>,
    /// Whether `DNT: 1` or `Sec-GPC: 1` means "do not track this browser".
    pub respect_do_not_track: bool,
    /// Whether pages show Gravatar images; off shows initials and sends
    /// nothing about a lead to a third party.
    pub gravatar: bool,
    /// JSON array of network numbers (ASNs) the site adds to the shipped
    /// hosting list: their traffic is bot traffic.
    pub hosting_asns: String,
    /// JSON array of ASNs the site adds to the shipped ISP list: no account.
    pub isp_asns: String,
    /// IANA time zone name; Explore's calendar boundaries follow it.
    pub timezone: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::org::Entity", from = "Column::OrgId", to = "super::org::Column::Id")]
    Org,
}

impl Related<super::org::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Org.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
