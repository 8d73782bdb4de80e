//! The attribution report (design §20): which channels, sources, campaigns
//! and tracking links brought leads, conversions and money. Over a date
//! range, each lead (a visitor's first identification), each server-side
//! conversion tied to a visitor and each event carrying revenue is credited
//! to that visitor's visits by first touch, last touch or linear (`model`),
//! and summed per group, revenue per currency.

pub mod cache;
pub mod model;
mod sql;

use sea_orm::{ConnectionTrait, TransactionTrait};
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
    time::{DaySplit, Millis, day_split},
};
use model::{Model, RawTally, Sums, Tally};

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

    pub fn name(self) -> &'static str {
        match self {
            Model::FirstTouch => "first_touch",
            Model::LastTouch => "last_touch",
            Model::Linear => "linear",
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

/// The tallies of the outcomes in `ranges` under each of `models`,
/// computed from the rows in one statement.
async fn computed(
    db: &impl ConnectionTrait,
    site_id: i64,
    ranges: &[Millis],
    models: &[Model],
    by: By,
    only_link: Option<i64>,
) -> AppResult<Vec<(Model, RawTally)>> {
    if ranges.is_empty() || models.is_empty() {
        return Ok(Vec::new());
    }
    let statement = sql::tallies(db.get_database_backend(), site_id, ranges, models, by, only_link);
    let mut tallies = Vec::new();
    for row in db.query_all_raw(statement).await? {
        let code = row.try_get::<i64>("", "model")?;
        let Some(&model) = models.iter().find(|model| i64::from(model.code()) == code) else { continue };
        tallies.push((
            model,
            RawTally {
                day: row.try_get("", "day")?,
                lead: row.try_get::<i64>("", "lead")? == 1,
                currency: row.try_get::<Option<String>>("", "currency")?.unwrap_or_default(),
                grp: row.try_get("", "grp")?,
                link: row.try_get("", "link")?,
                parts: row.try_get("", "parts")?,
                credits: row.try_get("", "credits")?,
                minor: row.try_get::<Option<i64>>("", "minor")?.unwrap_or(0),
            },
        ));
    }
    Ok(tallies)
}

/// The tallies of one model, computed from the rows.
async fn computed_one(
    db: &impl ConnectionTrait,
    site_id: i64,
    ranges: &[Millis],
    (model, by): (Model, By),
    only_link: Option<i64>,
) -> AppResult<Vec<RawTally>> {
    let tallies = computed(db, site_id, ranges, &[model], by, only_link).await?;
    Ok(tallies.into_iter().map(|(_, tally)| tally).collect())
}

/// A span's closed whole UTC days, read from the kept days (`cache`; those
/// missing are computed for the whole site and kept), and the ranges left
/// to compute: the hours at its edges and the days not closed yet.
async fn kept_and_rest(
    db: &impl ConnectionTrait,
    keeper: &impl TransactionTrait,
    site_id: i64,
    span: range::Span,
    (model, by): (Model, By),
    now: i64,
) -> AppResult<(Vec<RawTally>, Vec<Millis>)> {
    let DaySplit { days, mut edges } = day_split(span.from, span.to);
    let mut kept = Vec::new();
    if let Some((first, last)) = days {
        let closed = cache::closed_until(now).clamp(first, last);
        if closed > first {
            let compute = |runs: Vec<Millis>| async move { computed_one(db, site_id, &runs, (model, by), None).await };
            kept = cache::tallies(db, keeper, site_id, model, by, (first, closed), compute).await?;
        }
        if closed < last {
            edges.push((closed, last));
        }
    }
    Ok((kept, edges))
}

/// The tallies, each named as its group shows.
async fn named(db: &impl ConnectionTrait, by: By, raw: Vec<RawTally>) -> AppResult<Vec<Tally>> {
    let slugs = visit_groups::link_slugs(db, by, raw.iter().filter_map(|tally| tally.link)).await?;
    Ok(raw
        .into_iter()
        .map(|tally| {
            let value = match by {
                By::Link => tally.link.and_then(|id| slugs.get(&id).cloned()),
                _ => tally.grp.clone(),
            };
            tally.named(by.shown(value))
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

/// The site the viewer may read and the span its `date_range` names.
async fn site_span(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    date_range: &Value,
    now: i64,
) -> AppResult<(i64, range::Span)> {
    let date_range = parse_date_range(Some(date_range))?;
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let first = if date_range == DateRange::All { first_event(db, site.id).await? } else { None };
    Ok((site.id, range::resolve(&date_range, sites::timezone(&site), now, first)))
}

/// The report; the closed days it computes are kept through `keeper`, a
/// connection that may write (`db` may be a read-only one).
pub async fn report(
    db: &impl ConnectionTrait,
    keeper: &impl TransactionTrait,
    viewer: &Viewer,
    ask: CreditAsk,
    now: i64,
) -> AppResult<CreditReport> {
    let (site_id, span) = site_span(db, viewer, ask.site_id, &ask.date_range, now).await?;
    let (mut raw, rest) = kept_and_rest(db, keeper, site_id, span, (ask.model, ask.by), now).await?;
    raw.extend(computed_one(db, site_id, &rest, (ask.model, ask.by), None).await?);
    let (groups, total) = model::sum(&named(db, ask.by, raw).await?);
    let mut rows: Vec<Credited> = groups.into_iter().map(|(value, sums)| row(value, sums)).collect();
    rows.sort_by(|a, b| {
        b.conversions
            .total_cmp(&a.conversions)
            .then_with(|| b.leads.total_cmp(&a.leads))
            .then_with(|| a.value.cmp(&b.value))
    });
    Ok(CreditReport {
        site_id,
        model: ask.model,
        by: ask.by,
        from: span.from,
        to: span.to,
        rows,
        total: row(String::new(), total),
    })
}

/// What one tracking link of the site brought under each model over
/// `date_range`: its row of each model's report by link. The closed days
/// come from that report's kept days (computed and kept for every link if
/// missing); the rest of the span from the outcomes of the visitors the link
/// brought alone, under the three models in one statement.
pub async fn brought_by_link(
    db: &impl ConnectionTrait,
    keeper: &impl TransactionTrait,
    viewer: &Viewer,
    site_id: i64,
    link_id: i64,
    date_range: &Value,
    now: i64,
) -> AppResult<Vec<(Model, Credited)>> {
    let (site_id, span) = site_span(db, viewer, site_id, date_range, now).await?;
    let mut raw: Vec<(Model, RawTally)> = Vec::new();
    let mut rest = Vec::new();
    for model in Model::ALL {
        // The span's split into days is the same under every model.
        let (kept, left) = kept_and_rest(db, keeper, site_id, span, (model, By::Link), now).await?;
        raw.extend(kept.into_iter().filter(|tally| tally.link == Some(link_id)).map(|tally| (model, tally)));
        rest = left;
    }
    raw.extend(computed(db, site_id, &rest, &Model::ALL, By::Link, Some(link_id)).await?);
    let mut brought = Vec::with_capacity(Model::ALL.len());
    for model in Model::ALL {
        // One group, the link's: no name needed.
        let own: Vec<Tally> =
            raw.iter().filter(|(of, _)| *of == model).map(|(_, tally)| tally.clone().named(String::new())).collect();
        let (groups, _) = model::sum(&own);
        let sums = groups.into_values().next().unwrap_or_default();
        brought.push((model, row(String::new(), sums)));
    }
    Ok(brought)
}
