use sea_orm::entity::prelude::*;

/// One UTC hour in which a visitor had a human event (design §17). Each
/// such hour is counted with the visitor's previous one in
/// `active_hour_visitors`, which answers a range's visitors.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "visitor_active_hours")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub visitor_id: i64,
    /// Epoch milliseconds of the hour's start.
    #[sea_orm(primary_key, auto_increment = false)]
    pub hour: i64,
    pub site_id: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
