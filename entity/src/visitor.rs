use sea_orm::entity::prelude::*;

/// One row per (site, tracker_vid), holding running aggregates.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel, serde::Serialize)]
#[sea_orm(table_name = "visitors")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub tracker_vid: String,
    /// `anonymous` or `identified`.
    pub status: String,
    pub identified_user_id: Option<String>,
    pub email: Option<String>,
    pub first_seen: i64,
    pub last_seen: i64,
    pub total_sessions: i32,
    pub total_pageviews: i32,
    pub total_events: i32,
    pub total_time_seconds: i64,
    pub clicks: i32,
    pub high_value_views: i32,
    pub form_submits: i32,
    pub score: i32,
    pub is_bot: bool,
    pub first_referrer: Option<String>,
    pub last_referrer: Option<String>,
    pub last_session_id: Option<i64>,
    pub country: Option<String>,
    pub city: Option<String>,
    pub region: Option<String>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub device_type: Option<String>,
    pub browser: Option<String>,
    pub os: Option<String>,
    /// The channel of the latest visit (last touch).
    pub last_channel: Option<String>,
    /// The `utm_campaign` of the latest visit.
    pub last_campaign: Option<String>,
    /// The path of the latest page view.
    pub last_page: Option<String>,
    /// The company this visitor belongs to (design §18): a web domain,
    /// `name:<company>` or `asn:<number>`.
    pub account_key: Option<String>,
    /// The account's name as shown.
    pub account_name: Option<String>,
    /// What the account was found from: `email`, `company` or `network`.
    pub account_source: Option<String>,
    /// The network (autonomous system) of the latest visit, and its holder.
    pub asn: Option<i64>,
    pub network: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::site::Entity", from = "Column::SiteId", to = "super::site::Column::Id")]
    Site,
}

impl Related<super::site::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Site.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
