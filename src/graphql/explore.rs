//! `explore`: Explore's query model (design §17) typed for GraphQL. The
//! input is Plausible's Stats API v2 body in camelCase; filters, order and
//! include keep Plausible's JSON shapes. `POST /api/v2/query` runs this
//! field with the body as it came.

use async_graphql::{Context, InputObject, Json, Object, SimpleObject};
use serde_json::{Map, Value};

use super::{context::ContextExt, cost};
use crate::{error::AppResult, service::explore, time::now_ms};

#[derive(InputObject)]
pub struct ExplorePagination {
    /// Rows per page, 1 to 10,000 (the default).
    pub limit: Option<i64>,
    pub offset: Option<i64>,
}

/// Plausible's Stats API v2 query.
#[derive(InputObject)]
pub struct ExploreInput {
    /// The site's domain or id, when the field's `siteId` is not given.
    pub site: Option<String>,
    /// `visitors`, `visits`, `pageviews`, `views_per_visit`, `bounce_rate`,
    /// `visit_duration`, `events`, `percentage`, `conversion_rate`,
    /// `total_revenue`, `average_revenue`, `identified_visitors`,
    /// `hot_leads`, `clicks`.
    pub metrics: Vec<String>,
    /// `day`, `24h`, `7d`, `28d`, `30d`, `91d`, `month`, `6mo`, `12mo`,
    /// `year`, `all`, or `[from, to]` as dates or ISO 8601 datetimes.
    pub date_range: Json<Value>,
    /// Such as `visit:source`, `event:page`, `time:day`.
    pub dimensions: Option<Vec<String>>,
    /// Plausible's filters: `["is", "visit:country", ["DE"]]`, nested with
    /// `["and", [...]]`, `["or", [...]]`, `["not", filter]`.
    pub filters: Option<Json<Value>>,
    /// `[["visitors", "desc"]]`.
    pub order_by: Option<Json<Value>>,
    /// `{"time_labels": true, "total_rows": true, "comparisons": {"mode": "previous_period"}}`.
    pub include: Option<Json<Value>>,
    pub pagination: Option<ExplorePagination>,
}

impl ExploreInput {
    /// The same query as Plausible's JSON body.
    fn body(&self) -> Value {
        let mut body = Map::new();
        if let Some(site) = &self.site {
            body.insert("site_id".to_owned(), Value::from(site.clone()));
        }
        body.insert("metrics".to_owned(), Value::from(self.metrics.clone()));
        body.insert("date_range".to_owned(), self.date_range.0.clone());
        if let Some(dimensions) = &self.dimensions {
            body.insert("dimensions".to_owned(), Value::from(dimensions.clone()));
        }
        for (key, value) in [("filters", &self.filters), ("order_by", &self.order_by), ("include", &self.include)] {
            if let Some(value) = value {
                body.insert(key.to_owned(), value.0.clone());
            }
        }
        if let Some(page) = &self.pagination {
            let mut pagination = Map::new();
            if let Some(limit) = page.limit {
                pagination.insert("limit".to_owned(), Value::from(limit));
            }
            if let Some(offset) = page.offset {
                pagination.insert("offset".to_owned(), Value::from(offset));
            }
            body.insert("pagination".to_owned(), Value::Object(pagination));
        }
        Value::Object(body)
    }
}

/// The earlier period's figures for a row, and each metric's change.
#[derive(SimpleObject)]
pub struct ExploreComparison {
    pub dimensions: Vec<Json<Value>>,
    pub metrics: Vec<Json<Value>>,
    /// Percent change (points for bounce rate); null where undefined.
    pub change: Vec<Json<Value>>,
}

#[derive(SimpleObject)]
pub struct ExploreRow {
    /// One value per dimension of the query, in its order.
    pub dimensions: Vec<Json<Value>>,
    /// One value per metric of the query, in its order.
    pub metrics: Vec<Json<Value>>,
    /// Present when `include.comparisons` asked for it.
    pub comparison: Option<ExploreComparison>,
}

#[derive(SimpleObject)]
pub struct ExploreResult {
    pub results: Vec<ExploreRow>,
    /// `time_labels`, `total_rows`, `imports_included`, `metric_warnings`, when asked or relevant.
    pub meta: Json<Value>,
    /// The query as it ran: the dates placed in the site's time zone, the order filled in.
    pub query: Json<Value>,
}

fn json_list(values: Vec<Value>) -> Vec<Json<Value>> {
    values.into_iter().map(Json).collect()
}

impl From<explore::Answer> for ExploreResult {
    fn from(answer: explore::Answer) -> Self {
        ExploreResult {
            results: answer
                .results
                .into_iter()
                .map(|row| ExploreRow {
                    dimensions: json_list(row.dimensions),
                    metrics: json_list(row.metrics),
                    comparison: row.comparison.map(|comparison| ExploreComparison {
                        dimensions: json_list(comparison.dimensions),
                        metrics: json_list(comparison.metrics),
                        change: json_list(comparison.change),
                    }),
                })
                .collect(),
            meta: Json(answer.meta),
            query: Json(answer.query),
        }
    }
}

#[derive(SimpleObject)]
pub struct ExplorerPanel {
    /// The card it sits in: `Sources`, `Pages`, `Locations`, `Devices`,
    /// `Goals and events`, `Links`.
    pub group: String,
    pub title: String,
    /// Its dimension, such as `visit:source`: the key of its full view.
    pub dimension: String,
    /// The metric it ranks by (with `percentage` beside `visitors`).
    pub metric: String,
    pub result: ExploreResult,
}

/// The explorer page's reads: totals and a time series (with the previous
/// period when compared), and one breakdown per panel.
#[derive(SimpleObject)]
pub struct Explorer {
    /// The range as asked: a Plausible name (`30d` by default) or `custom`.
    pub range: String,
    pub timezone: String,
    pub compared: bool,
    pub totals: ExploreResult,
    pub series: ExploreResult,
    pub panels: Vec<ExplorerPanel>,
}

impl From<explore::dashboard::Dashboard> for Explorer {
    fn from(dashboard: explore::dashboard::Dashboard) -> Self {
        Explorer {
            range: dashboard.range,
            timezone: dashboard.timezone,
            compared: dashboard.compared,
            totals: dashboard.totals.into(),
            series: dashboard.series.into(),
            panels: dashboard
                .panels
                .into_iter()
                .map(|panel| ExplorerPanel {
                    group: panel.spec.group.to_owned(),
                    title: panel.spec.title.to_owned(),
                    dimension: panel.spec.dimension.to_owned(),
                    metric: panel.spec.metric.to_owned(),
                    result: panel.answer.into(),
                })
                .collect(),
        }
    }
}

/// The explorer's arguments, as the page's address carries them.
#[derive(InputObject, Default)]
pub struct ExplorerInput {
    /// A Plausible range name (`30d` by default), or `custom` with `from` and `to`.
    pub range: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    /// `off` leaves out the previous period.
    pub compare: Option<String>,
    /// Plausible's filters as JSON text.
    pub filters: Option<String>,
    /// One panel's dimension, shown in full (up to 1,000 rows).
    pub panel: Option<String>,
}

impl ExplorerInput {
    /// What the dashboard is asked, borrowed from this input.
    pub fn ask(&self) -> explore::dashboard::DashboardAsk<'_> {
        explore::dashboard::DashboardAsk {
            range: self.range.as_deref(),
            from: self.from.as_deref(),
            to: self.to.as_deref(),
            compare: self.compare.as_deref(),
            filters: self.filters.as_deref(),
            panel: self.panel.as_deref(),
        }
    }

    pub fn cost(&self) -> usize {
        let range = match self.range.as_deref() {
            Some("custom") => serde_json::json!([self.from, self.to]),
            other => serde_json::json!(other.unwrap_or("30d")),
        };
        let compare = (self.compare.as_deref() != Some("off")).then(|| serde_json::json!({"comparisons": {}}));
        cost::explore(&range, compare.as_ref())
    }
}

/// `explorer` for a site.
pub async fn explorer(ctx: &Context<'_>, site_id: i64, input: ExplorerInput) -> AppResult<Explorer> {
    Ok(explore::dashboard::dashboard(
        &*ctx.db().await?,
        ctx.viewer()?,
        site_id,
        input.ask(),
        (now_ms(), Some(ctx.app().visit_copies.clone())),
    )
    .await?
    .into())
}

#[derive(Default)]
pub struct ExploreQuery;

#[Object]
impl ExploreQuery {
    /// Breakdowns, filters, ranges and comparisons of human traffic
    /// (Plausible's Stats API v2 model). The site is `siteId`, else the
    /// query's `site` (domain or id).
    #[graphql(
        complexity = "cost::explore(&query.date_range.0, query.include.as_ref().map(|i| &i.0)) + child_complexity"
    )]
    async fn explore(&self, ctx: &Context<'_>, site_id: Option<i64>, query: ExploreInput) -> AppResult<ExploreResult> {
        let body = query.body();
        let answer = explore::run(
            &*ctx.db().await?,
            ctx.viewer()?,
            site_id,
            &body,
            (now_ms(), Some(ctx.app().visit_copies.clone())),
        )
        .await?;
        Ok(answer.into())
    }

    /// The explorer page's reads for a site (design §17).
    #[graphql(
        complexity = "input.as_ref().map_or(cost::explore(&serde_json::json!(\"30d\"), None), ExplorerInput::cost) + child_complexity"
    )]
    async fn explorer(&self, ctx: &Context<'_>, site_id: i64, input: Option<ExplorerInput>) -> AppResult<Explorer> {
        explorer(ctx, site_id, input.unwrap_or_default()).await
    }
}
