use sea_orm::entity::prelude::*;

/// Visitors by the UTC hour they were last seen in, their country and whether
/// they are bots. The batch writer moves a visitor between rows as it returns,
/// so each visitor is counted in exactly one row.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "visitor_hours")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub is_bot: bool,
    /// Epoch milliseconds of the hour's start.
    pub hour: i64,
    /// The visitor's latest known country; empty when unknown.
    pub country: String,
    pub visitors: i64,
    /// Of `visitors`, those identified.
    pub identified: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
