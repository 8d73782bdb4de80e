use sea_orm::entity::prelude::*;

/// `value_visitor_hours` summed by UTC day: how many `visitor_values` rows of
/// one dimension value have their latest hour in one UTC day. Kept by the
/// batch writer beside the hourly counts; read for a range's whole days.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "value_visitor_days")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// Which dimension: the writer's `RolledDimension` code.
    pub dimension: i16,
    /// The value, `''` for none.
    pub value: String,
    /// Epoch milliseconds of the UTC day's start.
    pub day: i64,
    pub visitors: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
