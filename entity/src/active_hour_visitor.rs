use sea_orm::entity::prelude::*;

/// How many visitors were active in one UTC hour with their previous active
/// hour at `previous_hour` (0 for none), from `visitor_active_hours`
/// (design §17). A range's visitors are the rows of its hours whose previous
/// hour lies before it; a time bucket's, those whose previous hour lies in
/// an earlier bucket. Kept by the batch writer with the active hours.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "active_hour_visitors")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// Epoch milliseconds of the hour's start.
    pub hour: i64,
    /// Epoch milliseconds of the visitors' previous active hour, 0 for none.
    pub previous_hour: i64,
    pub visitors: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
