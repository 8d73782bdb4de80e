use sea_orm::entity::prelude::*;

/// Where a site's alerts go, and what fires them.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "alert_destinations")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub org_id: i64,
    pub site_id: i64,
    pub name: String,
    pub url: String,
    pub webhook_type: String,
    /// became_hot, identified or form_submitted.
    pub trigger: String,
    pub include_journey: bool,
    pub include_events: bool,
    /// The admin's switch.
    pub enabled: bool,
    /// Why the service turned it off (24 hours of failures); cleared by an edit.
    pub disabled_reason: Option<String>,
    /// Start of the current run of failed attempts; none after a success.
    pub failing_since: Option<i64>,
    /// The latest failed attempt of that run.
    pub last_failed_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
