use sea_orm::entity::prelude::*;

/// `value_hours` summed by UTC day (design §17), kept by the batch writer in
/// the same statements' batch: a range's whole days read one row per value
/// and day instead of 24, so a dimension with many values (accounts, pages,
/// cities) costs its days, not its hours. The hours at a range's edges still
/// come from `value_hours`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "value_days")]
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
    pub visits: i64,
    /// Visits of at most one event.
    pub bounces: i64,
    /// Human pageviews.
    pub pageviews: i64,
    /// Human events.
    pub events: i64,
    /// The visits' lengths, summed.
    pub seconds: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
