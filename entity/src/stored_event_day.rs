use sea_orm::entity::prelude::*;

/// How many events were stored for a site with a time in one UTC day: the
/// batch writer adds each batch's in its transaction, and nothing takes
/// them out. Read only as a difference between two snapshots (the print of
/// an Explore copy's tail on PostgreSQL), so it counts from when it was made.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "stored_event_days")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// Epoch milliseconds of the UTC day's start.
    pub day: i64,
    pub events: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
