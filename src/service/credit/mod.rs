//! The attribution report (design §20): which channels, sources, campaigns
//! and tracking links brought leads, conversions and money. Over a date
//! range, each lead (a visitor's first identification), each server-side
//! conversion tied to a visitor and each event carrying revenue is credited
//! to that visitor's visits by first touch, last touch or linear (`model`),
//! and summed per group, revenue per currency.

pub mod model;
mod sql;

use sea_orm::ConnectionTrait;
use serde_json::Value;

use super::{
    access,
    explore::{
        figures::first_event,
        query::{DateRange, parse_date_range},
        range,
    },
    money::Money,
    sites,
    visit_groups::{self, VisitGroup},
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
};
use model::{Model, Sums, Tally};

/// What the report groups by: where the credited visit came from.
pub type By = VisitGroup;

/// `channel`, `source`, `campaign` or `link`, refused as `by` otherwise.
pub fn parse_by(name: &str) -> AppResult<By> {
    VisitGroup::parse(name).ok_or_else(|| AppError::validation("by", "must be channel, source, campaign or link"))
}

impl Model {
    pub fn parse(name: &str) -> AppResult<Model> {
        match name {
            "first_touch" => Ok(Model::FirstTouch),
            "last_touch" => Ok(Model::LastTouch),
            "linear" => Ok(Model::Linear),
            _ => Err(AppError::validation("model", "must be first_touch, last_touch or linear")),
        }
    }
}

pub struct CreditAsk {
    pub site_id: i64,
    pub model: Model,
    pub by: By,
    /// Explore's `date_range`.
    pub date_range: Value,
}

/// One group's credit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Credited {
    pub value: String,
    /// Visitors first identified in the range, as credited.
    pub leads: f64,
    pub conversions: f64,
    /// Per currency, by code.
    pub revenue: Vec<Money>,
}

pub struct CreditReport {
    pub site_id: i64,
    pub model: Model,
    pub by: By,
    pub from: i64,
    pub to: i64,
    /// Most conversions first, then most leads.
    pub rows: Vec<Credited>,
    pub total: Credited,
}

/// The model's tallies over the span, each named as its group shows.
async fn tallies(
    db: &impl ConnectionTrait,
    site_id: i64,
    span: range::Span,
    model: Model,
    by: By,
) -> AppResult<Vec<Tally>> {
    let statement = sql::tallies(db.get_database_backend(), site_id, span, model, by);
    let rows = db.query_all_raw(statement).await?;
    let mut read = Vec::with_capacity(rows.len());
    let mut links = Vec::new();
    for row in rows {
        let link: Option<i64> = row.try_get("", "link")?;
        links.extend(link);
        let tally = Tally {
            lead: row.try_get::<i64>("", "lead")? == 1,
            currency: row.try_get::<Option<String>>("", "currency")?.unwrap_or_default(),
            key: String::new(),
            parts: row.try_get("", "parts")?,
            credits: row.try_get("", "credits")?,
            minor: row.try_get::<Option<i64>>("", "minor")?.unwrap_or(0),
        };
        read.push((tally, row.try_get::<Option<String>>("", "grp")?, link));
    }
    let slugs = visit_groups::link_slugs(db, by, links).await?;
    Ok(read
        .into_iter()
        .map(|(tally, group, link)| {
            let value = match by {
                By::Link => link.and_then(|id| slugs.get(&id).cloned()),
                _ => group,
            };
            Tally { key: by.shown(value), ..tally }
        })
        .collect())
}

fn row(value: String, sums: Sums) -> Credited {
    let round = |n: f64| (n * 100.0).round() / 100.0;
    Credited {
        value,
        leads: round(sums.leads),
        conversions: round(sums.conversions),
        revenue: sums.revenue.into_iter().map(|(currency, minor)| Money { minor, currency }).collect(),
    }
}

pub async fn report(db: &impl ConnectionTrait, viewer: &Viewer, ask: CreditAsk, now: i64) -> AppResult<CreditReport> {
    let date_range = parse_date_range(Some(&ask.date_range))?;
    let (site, _) = access::site(db, viewer, ask.site_id, Role::Viewer).await?;
    let first = if date_range == DateRange::All { first_event(db, site.id).await? } else { None };
    let span = range::resolve(&date_range, sites::timezone(&site), now, first);
    let (groups, total) = model::sum(&tallies(db, site.id, span, ask.model, ask.by).await?);
    let mut rows: Vec<Credited> = groups.into_iter().map(|(value, sums)| row(value, sums)).collect();
    rows.sort_by(|a, b| {
        b.conversions
            .total_cmp(&a.conversions)
            .then_with(|| b.leads.total_cmp(&a.leads))
            .then_with(|| a.value.cmp(&b.value))
    });
    Ok(CreditReport {
        site_id: site.id,
        model: ask.model,
        by: ask.by,
        from: span.from,
        to: span.to,
        rows,
        total: row(String::new(), total),
    })
}
