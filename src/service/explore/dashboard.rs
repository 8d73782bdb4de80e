//! The explorer page's reads (design §17): totals and a time series with
//! the previous period, and one breakdown per panel, all Explore queries
//! under the same range and filters, answered on one snapshot.

use std::sync::Arc;

use sea_orm::DatabaseConnection;
use serde_json::{Value, json};

use chrono_tz::Tz;
use sea_orm::ConnectionTrait;

use entity::site;

use super::{
    Answer, answer,
    answer::Known,
    breakdowns::{self, Shared},
    figures::{Groups, Scope},
    frame,
    query::{self, Dimension, Metric},
    rollups,
    taken::Taken,
    visit_copy::VisitCopies,
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::{
        access,
        analytics::{desk::neutralised, snapshot},
        sites,
    },
};

/// A panel: its key (the dimension), its title, the metric it ranks by.
pub struct PanelSpec {
    pub group: &'static str,
    pub title: &'static str,
    pub dimension: &'static str,
    pub metric: &'static str,
}

const fn panel(group: &'static str, title: &'static str, dimension: &'static str, metric: &'static str) -> PanelSpec {
    PanelSpec { group, title, dimension, metric }
}

/// Every panel of the page, grouped as its cards show them.
pub const PANELS: [PanelSpec; 17] = [
    panel("Sources", "Channels", "visit:channel", "visitors"),
    panel("Sources", "Sources", "visit:source", "visitors"),
    panel("Sources", "UTM sources", "visit:utm_source", "visitors"),
    panel("Sources", "UTM mediums", "visit:utm_medium", "visitors"),
    panel("Sources", "UTM campaigns", "visit:utm_campaign", "visitors"),
    panel("Pages", "Top pages", "event:page", "visitors"),
    panel("Pages", "Entry pages", "visit:entry_page", "visits"),
    panel("Pages", "Exit pages", "visit:exit_page", "visits"),
    panel("Locations", "Countries", "visit:country", "visitors"),
    panel("Locations", "Regions", "visit:region", "visitors"),
    panel("Locations", "Cities", "visit:city", "visitors"),
    panel("Devices", "Devices", "visit:device", "visitors"),
    panel("Devices", "Browsers", "visit:browser", "visitors"),
    panel("Devices", "Operating systems", "visit:os", "visitors"),
    panel("Goals and events", "Goals", "event:goal", "visitors"),
    panel("Goals and events", "Events", "event:name", "events"),
    panel("Links", "Tracking links", "visit:link", "clicks"),
];

/// The tiles' metrics, in order.
pub const TOTALS: [&str; 8] = [
    "visitors",
    "visits",
    "pageviews",
    "views_per_visit",
    "bounce_rate",
    "visit_duration",
    "identified_visitors",
    "hot_leads",
];

/// Rows a panel shows on the page; its full view shows up to `FULL_ROWS`.
pub const PANEL_ROWS: u64 = 9;
pub const FULL_ROWS: u64 = 1_000;

/// What the page asks: the range (a Plausible name, or `custom` with
/// dates), whether to compare, the filters (Plausible's JSON), and one
/// panel to show in full.
#[derive(Default)]
pub struct DashboardAsk<'a> {
    pub range: Option<&'a str>,
    pub from: Option<&'a str>,
    pub to: Option<&'a str>,
    pub compare: Option<&'a str>,
    pub filters: Option<&'a str>,
    pub panel: Option<&'a str>,
}

pub struct PanelAnswer {
    pub spec: &'static PanelSpec,
    pub answer: Answer,
}

pub struct Dashboard {
    /// The range as the page names it, and its dates in the site's zone.
    pub range: String,
    pub totals: Answer,
    pub series: Answer,
    pub panels: Vec<PanelAnswer>,
    /// Whether `series` and `totals` carry the previous period.
    pub compared: bool,
    pub timezone: String,
}

/// The `date_range` a page's range and dates name; `range` is the field at fault.
fn date_range(ask: &DashboardAsk<'_>) -> AppResult<(String, Value)> {
    match ask.range.map(str::trim).filter(|range| !range.is_empty()).unwrap_or("30d") {
        "custom" => {
            // Reported on `range`: without it the page falls back to its default.
            let (Some(from), Some(to)) = (ask.from, ask.to) else {
                return Err(AppError::validation("range", "a custom range needs both a from and a to date"));
            };
            for (name, date) in [("from", from), ("to", to)] {
                if chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_err() {
                    return Err(AppError::validation("range", format!("{name} must be a date such as 2026-01-31")));
                }
            }
            if from > to {
                return Err(AppError::validation("range", "the to date must not be before the from date"));
            }
            Ok(("custom".to_owned(), json!([from, to])))
        }
        named => Ok((named.to_owned(), json!(named))),
    }
}

fn filters(ask: &DashboardAsk<'_>) -> AppResult<Value> {
    match ask.filters.map(str::trim).filter(|text| !text.is_empty()) {
        None => Ok(json!([])),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(filters @ Value::Array(_)) => Ok(filters),
            _ => Err(AppError::validation("filters", "must be a JSON array of filters")),
        },
    }
}

/// Checks and runs one body, naming page fields for what the page sent.
fn parsed(body: &Value) -> AppResult<query::Query> {
    query::parse(body).map_err(|err| match err.field.as_deref() {
        Some("date_range") => err.renamed("range".to_owned()),
        Some(field) if field.starts_with("filters") => err.renamed("filters".to_owned()),
        _ => err,
    })
}

/// The explorer's answers for the viewer's site.
pub async fn dashboard(
    db: &DatabaseConnection,
    viewer: &Viewer,
    site_id: i64,
    ask: DashboardAsk<'_>,
    (now, copies): (i64, Option<Arc<VisitCopies>>),
) -> AppResult<Dashboard> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let zone = sites::timezone(&site);
    let (range, date_range) = date_range(&ask)?;
    let filters = filters(&ask)?;
    let compared = !matches!(ask.compare.map(str::trim), Some("off" | "false" | "0"));
    let comparisons = if compared { json!({ "mode": "previous_period" }) } else { Value::Null };
    let base = |metrics: Value, dimensions: Value, limit: u64| {
        json!({
            "metrics": metrics, "date_range": date_range, "dimensions": dimensions, "filters": filters,
            "pagination": { "limit": limit },
        })
    };
    let mut totals = base(json!(TOTALS), json!([]), 1);
    totals["include"] = json!({ "comparisons": comparisons });
    let mut series = base(json!(["visitors", "pageviews"]), json!(["time"]), query::MAX_LIMIT);
    series["include"] = json!({ "comparisons": comparisons, "time_labels": true });
    let totals_query = parsed(&totals)?;
    let series_query = parsed(&series)?;
    let chosen: Vec<&'static PanelSpec> = match ask.panel.map(str::trim).filter(|panel| !panel.is_empty()) {
        None => PANELS.iter().collect(),
        Some(key) => vec![
            PANELS
                .iter()
                .find(|spec| spec.dimension == key)
                .ok_or_else(|| AppError::validation("panel", "is not a panel"))?,
        ],
    };
    let limit = if ask.panel.is_some() { FULL_ROWS } else { PANEL_ROWS };
    let mut panel_queries = Vec::with_capacity(chosen.len());
    for spec in chosen {
        let mut metrics = vec![spec.metric];
        // The second figure is a share: of the visitors, or for a goal its
        // conversion rate.
        match (spec.dimension, spec.metric) {
            ("event:goal", _) => metrics.push("conversion_rate"),
            (_, "visitors") => metrics.push("percentage"),
            _ => {}
        }
        let mut body = base(json!(metrics), json!([spec.dimension]), limit);
        body["include"] = json!({ "total_rows": true });
        // A click has no pages or visits: the links panel shows only under
        // filters a click can follow (campaign, country, device...).
        if spec.dimension == "visit:link" && !clicks_filterable(&filters) {
            continue;
        }
        panel_queries.push((spec, parsed(&body)?));
    }
    let txn = snapshot(db).await?;
    // Every query of the page reads this snapshot: each span's stretch, the
    // visit copy and its tail are taken once.
    let taken = Taken::of(copies);
    // The tiles, the chart and the visit panels on one side; the event
    // panels' groups, counted over the event copy, on the other. Counts run
    // on the copies' counting threads (`visit_copy::counting`), so the two
    // sides count on two cores at once (at 1M events the page went from
    // 54 to 33 ms p50 with the reads below run beside the counts).
    let visit_side = async {
        // The chart's cut visits are read while the pass counts. Without
        // filters the chart is read from the active hours, which need none.
        let warm = async {
            if series_query.filters.is_empty() {
                return Ok(());
            }
            frame::warm(&txn, &site, zone, &series_query, now, &taken).await
        };
        let (shared, warmed) =
            tokio::join!(shared_pass(&txn, &site, zone, (&totals_query, &panel_queries), &taken, now), warm);
        warmed?;
        let shared = shared?;
        let whole = shared.whole().sharing(&taken);
        let totals = answer::build(&txn, &site, zone, &totals_query, now, &filters, whole).await?;
        let series = Known::default().sharing(&taken);
        let series = answer::build(&txn, &site, zone, &series_query, now, &filters, series).await?;
        AppResult::Ok((shared, totals, series))
    };
    let event_side = async {
        let apart: Vec<_> = panel_queries.iter().filter(|(spec, _)| counted_apart(spec)).collect();
        // The events the page's filters keep are found once, then each
        // panel groups them at once.
        if let Some((_, query)) = apart.first() {
            frame::warm_events(&txn, &site, zone, query, now, &taken).await?;
        }
        let groups = apart.iter().map(|(spec, query)| async {
            AppResult::Ok((spec.dimension, frame::groups(&txn, &site, zone, query, now, &taken).await?))
        });
        futures_util::future::try_join_all(groups).await
    };
    let (visit_side, event_side) = tokio::join!(visit_side, event_side);
    let ((shared, totals, series), mut apart) = (visit_side?, event_side?);
    let mut panels = Vec::with_capacity(panel_queries.len());
    for (spec, query) in &panel_queries {
        let mut known = shared.known(query).sharing(&taken);
        if let Some(at) = apart.iter().position(|(dimension, _)| *dimension == spec.dimension) {
            known.groups = Some(apart.swap_remove(at).1);
        }
        let answer = answer::build(&txn, &site, zone, query, now, &filters, known).await?;
        panels.push(PanelAnswer { spec, answer });
    }
    txn.commit().await?;
    Ok(Dashboard { range, totals, series, panels, compared, timezone: site.timezone })
}

/// Whether a panel's groups are read beside the others' (`dashboard`):
/// an event panel's, counted over the event copy.
fn counted_apart(spec: &PanelSpec) -> bool {
    spec.dimension.starts_with("event:")
}

/// The panels' visit breakdowns, read in one pass, by dimension; none
/// when the rollups answer each panel.
struct SharedPass {
    dimensions: Vec<Dimension>,
    counts: Option<Shared>,
}

impl SharedPass {
    /// The tiles' figures for the range itself (the earlier period is read
    /// on its own).
    fn whole(&self) -> Known<'static> {
        let Some(counts) = &self.counts else { return Known::default() };
        let groups = Groups::from([(Vec::new(), counts.whole.clone())]);
        Known { groups: Some(groups), total: Some(counts.whole.visitors), taken: None }
    }

    /// What a panel's query can take from the pass: its groups when it is
    /// one of its breakdowns and counts only visits, and the whole.
    fn known(&self, query: &query::Query) -> Known<'static> {
        let Some(counts) = &self.counts else { return Known::default() };
        let counted = query.metrics.iter().all(|metric| SHARED_METRICS.contains(metric));
        let at = query.dimensions.first().and_then(|dimension| self.dimensions.iter().position(|d| d == dimension));
        let groups = at.filter(|_| counted && query.dimensions.len() == 1).map(|at| counts.groups[at].clone());
        Known { groups, total: Some(counts.whole.visitors), taken: None }
    }
}

/// The metrics the shared pass counts per breakdown (its whole also counts
/// identified and hot visitors, for the tiles).
const SHARED_METRICS: [Metric; 8] = [
    Metric::Visitors,
    Metric::Visits,
    Metric::Pageviews,
    Metric::Events,
    Metric::Percentage,
    Metric::BounceRate,
    Metric::VisitDuration,
    Metric::ViewsPerVisit,
];

/// Reads every panel's visit breakdown, and the tiles' figures, in one pass.
async fn shared_pass(
    db: &impl ConnectionTrait,
    site: &site::Model,
    zone: Tz,
    (page, panels): (&query::Query, &[(&'static PanelSpec, query::Query)]),
    taken: &Taken,
    now: i64,
) -> AppResult<SharedPass> {
    let dimensions: Vec<Dimension> = panels
        .iter()
        .filter(|(_, query)| query.metrics.iter().all(|metric| SHARED_METRICS.contains(metric)))
        .filter_map(|(_, query)| query.dimensions.first())
        .filter(|dimension| breakdowns::shareable(dimension))
        .cloned()
        .collect();
    let span = frame::span_of(db, site.id, zone, page, now).await?;
    let goals = taken.goals(db, site.id).await?;
    let scope = Scope::of(site, now, goals, taken);
    if page.filters.is_empty() && rollups::holds(db, &scope, span).await? {
        // Each panel and the tiles read the per-value rollups on their own,
        // each a few rows, where the pass would read every visit.
        return Ok(SharedPass { dimensions: Vec::new(), counts: None });
    }
    let counts = breakdowns::visit_breakdowns(db, &scope, &dimensions, &page.filters, span).await?;
    Ok(SharedPass { dimensions, counts: Some(counts) })
}

/// The one panel a full view asked for, as CSV: its dimension and metrics
/// as the header, every row, formula-like cells neutralised.
pub fn panel_csv(dashboard: &Dashboard) -> AppResult<(String, String)> {
    let Some(panel) = dashboard.panels.first().filter(|_| dashboard.panels.len() == 1) else {
        return Err(AppError::validation("panel", "a CSV download is of one panel: name it"));
    };
    let mut out = csv::Writer::from_writer(Vec::new());
    let metrics = panel.answer.query["metrics"].as_array().cloned().unwrap_or_default();
    let mut header = vec![panel.spec.dimension.to_owned()];
    header.extend(metrics.iter().filter_map(Value::as_str).map(str::to_owned));
    out.write_record(&header).map_err(AppError::internal)?;
    for row in &panel.answer.results {
        let cells = row.dimensions.iter().chain(&row.metrics).map(|cell| match cell {
            Value::String(text) => neutralised(text).into_owned(),
            Value::Null => String::new(),
            other => other.to_string(),
        });
        out.write_record(cells.collect::<Vec<_>>()).map_err(AppError::internal)?;
    }
    let bytes = out.into_inner().map_err(AppError::internal)?;
    let name = format!("{}-{}.csv", panel.spec.dimension.replace(':', "-"), dashboard.range);
    Ok((name, String::from_utf8_lossy(&bytes).into_owned()))
}

/// Whether every filter names a dimension a click has, so the links panel
/// can follow the page's filters.
fn clicks_filterable(filters: &Value) -> bool {
    let body = json!({ "metrics": ["clicks"], "date_range": "7d", "filters": filters });
    query::parse(&body).is_ok()
}
