use sea_orm::entity::prelude::*;

/// Sessions by the UTC hour they ended in, their channel and whether they are
/// bot sessions. The batch writer moves a session between rows as it grows,
/// so each session is counted in exactly one row.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "session_hours")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub is_bot: bool,
    /// Epoch milliseconds of the hour's start.
    pub hour: i64,
    pub channel: String,
    pub sessions: i64,
    /// The sum of the sessions' `duration_seconds`.
    pub seconds: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
