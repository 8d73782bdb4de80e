use sea_orm::entity::prelude::*;

/// One value of one Explore dimension a visitor had, with the UTC hour of
/// their latest human event that had it (design §17): a range that runs to
/// now counts a value's visitors as the rows whose hour is in it, one row
/// per visitor, with no distinct count over their visits or events.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "visitor_values")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub visitor_id: i64,
    /// Which dimension: the writer's `RolledDimension` code.
    #[sea_orm(primary_key, auto_increment = false)]
    pub dimension: i16,
    /// The value, `''` for none.
    #[sea_orm(primary_key, auto_increment = false)]
    pub value: String,
    pub site_id: i64,
    /// Epoch milliseconds of the hour of the visitor's latest human event
    /// with this value.
    pub last_hour: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
