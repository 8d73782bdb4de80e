use sea_orm::entity::prelude::*;

/// An invitation to join an org with a role, waiting for the invited person.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "invitations")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub org_id: i64,
    /// Lower case.
    pub email: String,
    /// `owner`, `admin`, `member` or `viewer`.
    pub role: String,
    pub invited_by: Option<i64>,
    pub token_hash: Option<String>,
    /// `pending`, `accepted`, `declined` or `canceled`.
    pub status: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub responded_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::org::Entity", from = "Column::OrgId", to = "super::org::Column::Id")]
    Org,
}

impl Related<super::org::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Org.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
