use sea_orm::entity::prelude::*;

/// One attempt to deliver a visitor export.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub org_id: i64,
    pub site_id: i64,
    pub user_id: Option<i64>,
    pub tracker_vid: String,
    pub webhook_type: String,
    /// The `webhook-id` header value.
    pub message_id: String,
    pub target_host: String,
    pub status_code: Option<i32>,
    pub success: bool,
    pub duration_ms: i64,
    pub error: Option<String>,
    pub created_at: i64,
    /// The alert delivery this attempt belongs to; none for `POST /api/webhook`.
    pub alert_delivery_id: Option<i64>,
    pub destination_id: Option<i64>,
    pub trigger: Option<String>,
    /// 1 for the first attempt of a delivery.
    pub attempt: i32,
    /// When the delivery is tried again; none when this attempt settled it.
    pub next_attempt_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
