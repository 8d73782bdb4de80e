use sea_orm::entity::prelude::*;

/// Human pageviews and events of one page in one UTC hour.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "page_hours")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// Epoch milliseconds of the hour's start.
    pub hour: i64,
    pub page: String,
    pub pageviews: i64,
    pub events: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
