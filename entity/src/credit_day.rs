use sea_orm::entity::prelude::*;

/// One closed UTC day's attribution tallies for one model and grouping, as
/// the report computed them: `credits` credits of outcomes split into
/// `parts` parts, of one kind, currency and group, worth `minor` in all.
/// Kept only beside a `credit_day_fills` row, and forgotten with it.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "credit_days")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub site_id: i64,
    /// The attribution model's code.
    pub model: i16,
    /// The grouping's code (channel, source, campaign, link).
    pub grouping: i16,
    /// Epoch milliseconds of the UTC day's start.
    pub day: i64,
    /// A lead (no money), or a conversion in `currency`.
    pub lead: bool,
    /// Empty for a lead.
    pub currency: String,
    /// The channel, source or campaign; `None` when blank or by link.
    pub grp: Option<String>,
    /// The tracking link, by link.
    pub link_id: Option<i64>,
    pub parts: i64,
    pub credits: i64,
    pub minor: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
