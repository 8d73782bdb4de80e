use sea_orm::entity::prelude::*;

/// One identify call; a visitor's identity is its latest row.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize)]
#[sea_orm(table_name = "identities")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub visitor_id: i64,
    pub tracker_vid: String,
    pub user_id: Option<String>,
    pub email: Option<String>,
    pub name: Option<String>,
    pub company: Option<String>,
    pub phone: Option<String>,
    /// JSON object.
    pub traits: String,
    pub source: String,
    pub source_detail: Option<String>,
    pub identified_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::visitor::Entity", from = "Column::VisitorId", to = "super::visitor::Column::Id")]
    Visitor,
}

impl Related<super::visitor::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Visitor.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
