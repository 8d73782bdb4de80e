use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub visitor_id: i64,
    pub session_id: i64,
    /// `pageview`, `custom_event` or `ping`.
    pub event_type: String,
    /// Empty for pageviews.
    pub event_name: String,
    pub page: String,
    pub page_title: Option<String>,
    pub referrer: Option<String>,
    /// JSON object.
    pub props: String,
    pub engaged_ms: i64,
    pub is_bot: bool,
    pub timestamp: i64,
    /// The page's host; none on events stored before it was kept.
    pub hostname: Option<String>,
    /// A custom event's revenue, in the currency's minor units (cents).
    pub revenue_minor: Option<i64>,
    /// The revenue's ISO 4217 code.
    pub revenue_currency: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::tracked_session::Entity",
        from = "Column::SessionId",
        to = "super::tracked_session::Column::Id"
    )]
    TrackedSession,
    #[sea_orm(belongs_to = "super::visitor::Entity", from = "Column::VisitorId", to = "super::visitor::Column::Id")]
    Visitor,
}

impl Related<super::tracked_session::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::TrackedSession.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
