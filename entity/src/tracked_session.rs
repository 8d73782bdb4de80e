use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, serde::Serialize)]
#[sea_orm(table_name = "tracked_sessions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub visitor_id: i64,
    pub tracker_vid: String,
    pub started_at: i64,
    pub ended_at: i64,
    pub duration_seconds: i64,
    pub pageview_count: i32,
    pub event_count: i32,
    pub entry_page: Option<String>,
    pub exit_page: Option<String>,
    pub referrer: Option<String>,
    pub channel: String,
    pub utm_source: Option<String>,
    pub utm_medium: Option<String>,
    pub utm_campaign: Option<String>,
    pub utm_content: Option<String>,
    pub utm_term: Option<String>,
    pub is_bot: bool,
    pub country: Option<String>,
    pub city: Option<String>,
    pub region: Option<String>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub device_type: Option<String>,
    pub browser: Option<String>,
    pub os: Option<String>,
    /// `utm_source`, else the referring host without `www.`; none when direct.
    pub source: Option<String>,
    /// The tracking link whose click started the visit.
    pub link_id: Option<i64>,
    /// `event_count` without the events marked as bot traffic.
    pub human_event_count: i32,
    /// `pageview_count` without the pageviews marked as bot traffic.
    pub human_pageview_count: i32,
    /// The hours of the visit's human events, as bits counted from the hour
    /// it began (bit `k`: `k` hours after it; a visit spans under 24 hours,
    /// so at most bits 0 to 24). Explore counts a visit in each time bucket
    /// it has a human event in from these (design §17).
    pub human_hours: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::visitor::Entity", from = "Column::VisitorId", to = "super::visitor::Column::Id")]
    Visitor,
}

impl Related<super::visitor::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Visitor.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
