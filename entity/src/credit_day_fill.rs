use sea_orm::entity::prelude::*;

/// A closed UTC day whose tallies of one model and grouping are kept in
/// `credit_days` (which may hold none for it).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "credit_day_fills")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub model: i16,
    pub grouping: i16,
    pub day: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
