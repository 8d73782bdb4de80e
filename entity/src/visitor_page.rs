use sea_orm::entity::prelude::*;

/// A page a visitor viewed, and when they last did: one row per visitor and
/// page, kept by the batch writer, so the lead desk's `visited` filter reads
/// the visitors of a page instead of its pageviews.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "visitor_pages")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub visitor_id: i64,
    pub page: String,
    /// Epoch milliseconds of the visitor's latest pageview of the page.
    pub last_viewed: i64,
    /// The visitor's bot flag, kept here so a page's humans (or bots) are
    /// counted from an index alone.
    pub is_bot: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
