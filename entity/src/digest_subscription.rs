use sea_orm::entity::prelude::*;

/// A member's choice of a digest for one site.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "digest_subscriptions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub user_id: i64,
    pub site_id: i64,
    /// `daily` or `weekly`.
    pub frequency: String,
    /// The hash of the token in the digest's unsubscribe link.
    pub unsubscribe_hash: String,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
