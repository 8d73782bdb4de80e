use sea_orm::entity::prelude::*;

/// How many times a site's kept attribution days were forgotten: a report
/// keeps the days it computed only if this did not move meanwhile.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "credit_generations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub site_id: i64,
    pub generation: i64,
    /// The forgettings that reached before yesterday (UTC): what Explore's
    /// visit copies follow.
    pub settled: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
