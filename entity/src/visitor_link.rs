use sea_orm::entity::prelude::*;

/// A tracking link a visitor clicked, with the visitor's own last visit and
/// bot flag beside it: one row per visitor and link, kept by the batch
/// writer, so the lead desk counts a link's visitors in a range from an
/// index instead of testing every visitor of the range against its clicks.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "visitor_links")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub visitor_id: i64,
    pub link_id: i64,
    /// The visitor's `last_seen`, moved with it.
    pub last_seen: i64,
    /// The visitor's bot flag, moved with it.
    pub is_bot: bool,
    /// Epoch milliseconds of the visitor's latest click on the link, so
    /// retention drops the row with the link's last click of theirs.
    pub last_clicked: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
