use sea_orm::entity::prelude::*;

/// Visitors by the UTC hour they were last seen in, the channel and campaign
/// of their latest visit (last touch), whether they ever submitted a form,
/// and whether they are bots. The batch writer moves a visitor between rows
/// as `visitor_hours` does, so the lead desk counts these filters by hour
/// instead of by visitor (design §19).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "visitor_touch_hours")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub is_bot: bool,
    /// Epoch milliseconds of the hour's start.
    pub hour: i64,
    /// The latest visit's channel; empty before the first visit.
    pub channel: String,
    /// The latest visit's `utm_campaign`; empty when it had none.
    pub campaign: String,
    /// Whether the visitor has submitted a form.
    pub submitted_form: bool,
    pub visitors: i64,
    /// Of `visitors`, those identified.
    pub identified: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
