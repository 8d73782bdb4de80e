use sea_orm::entity::prelude::*;

/// A funnel of a site: goal steps done in order.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "funnels")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub name: String,
    /// The goals' ids, in order, as a JSON array.
    pub steps: String,
    /// Null: within one visit; else within this many days of the first step.
    pub window_days: Option<i32>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::site::Entity", from = "Column::SiteId", to = "super::site::Column::Id")]
    Site,
}

impl ActiveModelBehavior for ActiveModel {}
