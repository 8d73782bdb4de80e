use sea_orm::entity::prelude::*;

/// One alert to deliver: the outbox row a trigger wrote, with where its
/// delivery stands. A visitor fires a destination at most once.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "alert_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub org_id: i64,
    pub site_id: i64,
    pub destination_id: i64,
    pub visitor_id: i64,
    pub tracker_vid: String,
    pub trigger: String,
    /// pending, delivered or failed.
    pub status: String,
    pub attempts: i32,
    /// When a pending delivery is due; while an attempt is in flight, when its claim lapses.
    pub next_attempt_at: Option<i64>,
    pub last_status_code: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: i64,
    pub delivered_at: Option<i64>,
    /// For `account_became_hot`: the account, which fires a destination once.
    pub account_key: Option<String>,
    /// For `converted`: the conversion, which fires a destination once.
    pub conversion_id: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
