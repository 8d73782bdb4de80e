use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "links")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub slug: String,
    pub destination_url: String,
    pub campaign: String,
    pub source: String,
    pub medium: String,
    pub content: String,
    pub notes: String,
    /// `content`, `ad` or `bio`.
    pub link_type: String,
    pub is_active: bool,
    pub expires_at: Option<i64>,
    pub max_clicks: Option<i64>,
    /// JSON array of strings.
    pub tags: String,
    pub human_clicks: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::site::Entity", from = "Column::SiteId", to = "super::site::Column::Id")]
    Site,
}

impl Related<super::site::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Site.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
