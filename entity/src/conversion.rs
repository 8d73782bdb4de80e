use sea_orm::entity::prelude::*;

/// A server-side conversion (a closed deal, a payment), with its exact
/// amount in the currency's minor units.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize)]
#[sea_orm(table_name = "conversions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// None until the person it names is identified.
    pub visitor_id: Option<i64>,
    pub name: String,
    pub amount_minor: i64,
    /// ISO 4217 code.
    pub currency: String,
    pub occurred_at: i64,
    /// The sender's id for it (a deal's, a payment's): stored once per site.
    pub external_id: Option<String>,
    /// Lowercased; kept while the conversion waits for its person.
    pub email: Option<String>,
    pub user_id: Option<String>,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::site::Entity", from = "Column::SiteId", to = "super::site::Column::Id")]
    Site,
    #[sea_orm(belongs_to = "super::visitor::Entity", from = "Column::VisitorId", to = "super::visitor::Column::Id")]
    Visitor,
}

impl ActiveModelBehavior for ActiveModel {}
