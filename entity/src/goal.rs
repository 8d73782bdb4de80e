use sea_orm::entity::prelude::*;

/// A goal of a site: a pageview goal (`page_path`) or a custom event goal
/// (`event_name`, optionally with `prop_name` = `prop_value`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "goals")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// What Explore's `event:goal` shows; unique within the site.
    pub name: String,
    /// A path pattern where `*` stands for any run of characters.
    pub page_path: Option<String>,
    pub event_name: Option<String>,
    pub prop_name: Option<String>,
    pub prop_value: Option<String>,
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
