use sea_orm::entity::prelude::*;

/// What an admin decided about an account: another name, leaving it out of
/// the lists (their own company), or, for a network (`asn:<number>`), the
/// domain account it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "account_settings")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub account_key: String,
    /// Shown instead of the account's own name.
    pub display_name: Option<String>,
    pub excluded: bool,
    /// For a network: the key of the account it is part of.
    pub merged_into: Option<String>,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
