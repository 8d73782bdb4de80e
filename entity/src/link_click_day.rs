use sea_orm::entity::prelude::*;

/// Human clicks of one link in one UTC day, per the labels the clicks carried
/// and the place they came from. Link analytics reads these instead of the
/// clicks. A missing country or city is stored as "", so the key is unique on
/// both databases (NULLs never conflict).
#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "link_click_days")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    pub link_id: i64,
    /// Epoch milliseconds of the day's start (UTC).
    pub day: i64,
    pub slug: String,
    pub campaign: String,
    pub source: String,
    pub country: String,
    pub city: String,
    pub clicks: i64,
    /// The largest coordinates seen, as link analytics reports a city's.
    pub lat: Option<f64>,
    pub lon: Option<f64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
