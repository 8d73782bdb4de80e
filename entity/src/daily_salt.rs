use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "daily_salts")]
pub struct Model {
    /// Days since the Unix epoch (UTC).
    #[sea_orm(primary_key, auto_increment = false)]
    pub day: i64,
    pub salt: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
