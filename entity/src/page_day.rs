use sea_orm::entity::prelude::*;

/// `page_hours` summed by UTC day: human pageviews and events of one page in
/// one UTC day, kept by the batch writer beside the hours. Explore's pages
/// over a range read its whole days here and only the edge hours there.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "page_days")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// Epoch milliseconds of the UTC day's start.
    pub day: i64,
    pub page: String,
    pub pageviews: i64,
    pub events: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
