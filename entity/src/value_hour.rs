use sea_orm::entity::prelude::*;

/// What one value of one Explore dimension counts in one UTC hour, kept by
/// the batch writer (design §17): for the whole site and each visit
/// dimension, the visits that began in the hour (only visits with human
/// events count); for `event:name`, the human events of the hour. Additive,
/// so a range's figures are the sum of its hours.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "value_hours")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// Which dimension: the writer's `RolledDimension` code.
    pub dimension: i16,
    /// The value, `''` for none.
    pub value: String,
    /// Epoch milliseconds of the hour's start.
    pub hour: i64,
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
