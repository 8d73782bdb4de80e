use sea_orm::entity::prelude::*;

/// A redirect through a tracking link. The link's labels are copied so the
/// click keeps its attribution when the link is later edited.
#[derive(Clone, Debug, PartialEq, DeriveEntityModel, serde::Serialize)]
#[sea_orm(table_name = "link_clicks")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub link_id: i64,
    pub click_key: String,
    pub visitor_id: Option<i64>,
    pub tracker_vid: Option<String>,
    pub slug: String,
    pub campaign: String,
    pub source: String,
    pub medium: String,
    pub destination_url: String,
    /// The link's type when clicked: `content`, `ad` or `bio`.
    pub link_type: String,
    pub country: Option<String>,
    pub city: Option<String>,
    pub region: Option<String>,
    pub lat: Option<f64>,
    pub lon: Option<f64>,
    pub device_type: Option<String>,
    pub browser: Option<String>,
    pub os: Option<String>,
    pub referrer: Option<String>,
    pub is_bot: bool,
    pub created_at: i64,
    /// The network (autonomous system) the click came from, and its holder.
    pub asn: Option<i64>,
    pub network: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::link::Entity", from = "Column::LinkId", to = "super::link::Column::Id")]
    Link,
}

impl Related<super::link::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Link.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
