//! The attribution report (design §20): leads, conversions and revenue
//! credited to channels, sources, campaigns or tracking links. The service
//! checks.

use async_graphql::{Context, Json, Object, SimpleObject};
use serde_json::Value;

use super::{context::ContextExt, conversions::MoneyTotal, cost, types::Timestamp};
use crate::{
    error::AppResult,
    service::credit::{self, CreditAsk, Credited, model::Model},
    time::now_ms,
};

/// One group's credit.
#[derive(SimpleObject)]
pub struct AttributionRow {
    /// The channel, source, campaign or tracking link's slug; `(no visit)`
    /// for what happened before any visit.
    pub value: String,
    /// Visitors first identified in the range, as credited (2 decimals).
    pub leads: f64,
    /// Conversions and revenue events, as credited (2 decimals).
    pub conversions: f64,
    /// Exact per currency: the parts of every amount add up to it.
    pub revenue: Vec<MoneyTotal>,
}

impl From<Credited> for AttributionRow {
    fn from(row: Credited) -> Self {
        AttributionRow {
            value: row.value,
            leads: row.leads,
            conversions: row.conversions,
            revenue: row.revenue.into_iter().map(MoneyTotal).collect(),
        }
    }
}

/// What a tracking link brought under one model.
#[derive(SimpleObject)]
pub struct LinkCredit {
    /// `first_touch`, `last_touch` or `linear`.
    pub model: String,
    /// Visitors first identified in the range, as credited (2 decimals).
    pub leads: f64,
    /// Conversions and revenue events, as credited (2 decimals).
    pub conversions: f64,
    /// Exact per currency.
    pub revenue: Vec<MoneyTotal>,
}

impl From<(Model, Credited)> for LinkCredit {
    fn from((model, row): (Model, Credited)) -> Self {
        LinkCredit {
            model: model.name().to_owned(),
            leads: row.leads,
            conversions: row.conversions,
            revenue: row.revenue.into_iter().map(MoneyTotal).collect(),
        }
    }
}

#[derive(SimpleObject)]
pub struct AttributionReport {
    pub site_id: i64,
    /// `first_touch`, `last_touch` or `linear`.
    pub model: String,
    /// `channel`, `source`, `campaign` or `link`.
    pub by: String,
    pub from: Timestamp,
    pub to: Timestamp,
    /// Most conversions first, then most leads.
    pub rows: Vec<AttributionRow>,
    /// Every lead, conversion and amount of the range once.
    pub total: AttributionRow,
}

#[derive(Default)]
pub struct CreditQuery;

#[Object]
impl CreditQuery {
    /// Leads, conversions and revenue of a range credited to the visits
    /// before them: `model` `first_touch`, `last_touch` (default) or
    /// `linear`, grouped `by` `channel` (default), `source`, `campaign` or
    /// `link`, over Explore's `dateRange` (`30d` by default).
    #[graphql(
        complexity = "cost::explore(date_range.as_ref().map_or(&Value::from(\"30d\"), |r| &r.0), None) + child_complexity"
    )]
    async fn attribution_report(
        &self,
        ctx: &Context<'_>,
        site_id: i64,
        model: Option<String>,
        by: Option<String>,
        date_range: Option<Json<Value>>,
    ) -> AppResult<AttributionReport> {
        attribution_report(ctx, site_id, model, by, date_range.map(|range| range.0)).await
    }
}

/// The report as a function, which `workspace` also calls with its site.
pub(crate) async fn attribution_report(
    ctx: &Context<'_>,
    site_id: i64,
    model: Option<String>,
    by: Option<String>,
    date_range: Option<Value>,
) -> AppResult<AttributionReport> {
    let model_name = model.unwrap_or_else(|| "last_touch".to_owned());
    let by_name = by.unwrap_or_else(|| "channel".to_owned());
    let ask = CreditAsk {
        site_id,
        model: Model::parse(&model_name)?,
        by: credit::parse_by(&by_name)?,
        date_range: date_range.unwrap_or_else(|| Value::from("30d")),
    };
    let report = credit::report(&*ctx.db().await?, &ctx.app().db, ctx.viewer()?, ask, now_ms()).await?;
    Ok(AttributionReport {
        site_id: report.site_id,
        model: model_name,
        by: by_name,
        from: Timestamp(report.from),
        to: Timestamp(report.to),
        rows: report.rows.into_iter().map(AttributionRow::from).collect(),
        total: report.total.into(),
    })
}
