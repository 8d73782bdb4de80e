use sea_orm::entity::prelude::*;

/// A single-use token sent by email: a password reset or an address to
/// verify. Only its hash is stored.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "auth_tokens")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub user_id: i64,
    /// `reset_password` or `verify_email`.
    pub purpose: String,
    pub token_hash: String,
    /// The address the token was sent to.
    pub email: String,
    pub expires_at: i64,
    pub used_at: Option<i64>,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
