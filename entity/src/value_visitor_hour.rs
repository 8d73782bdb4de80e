use sea_orm::entity::prelude::*;

/// How many `visitor_values` rows of one dimension value have their latest
/// hour at one UTC hour (design §17): a value's visitors since an hour are
/// the sum of its hours since then, a few rows, where counting the visitor
/// rows reads one index entry per visitor. Kept by the batch writer with the
/// visitor rows.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "value_visitor_hours")]
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
    pub visitors: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
