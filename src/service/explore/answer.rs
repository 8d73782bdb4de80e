//! Turns counts into Plausible's answer: metric values with its rounding,
//! dimension labels, the default order, the page, comparisons with their
//! change, `meta` and the echoed query.

use std::cmp::Ordering;

use chrono_tz::Tz;
use sea_orm::ConnectionTrait;
use serde::Serialize;
use serde_json::{Map, Value, json};

use entity::site;

use super::{
    conversion,
    figures::{self, Ask, Counts, Groups, Key, Scope},
    frame::Frame,
    query::{Comparison as Mode, Dimension, Direction, Metric, OrderField, Query},
    range::{self, Buckets, Span},
    revenue, sql,
    taken::Taken,
};
use crate::error::AppResult;

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub dimensions: Vec<Value>,
    pub metrics: Vec<Value>,
    pub change: Vec<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub dimensions: Vec<Value>,
    pub metrics: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub results: Vec<Row>,
    pub meta: Value,
    pub query: Value,
}

fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

fn ratio(part: i64, whole: i64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

/// One metric of one group, as Plausible rounds it. `total` is the visitors
/// of the whole filtered query, for `percentage`.
fn metric_value(metric: Metric, counts: &Counts, total: i64) -> Value {
    match metric {
        Metric::Visitors => json!(counts.visitors),
        Metric::Visits => json!(counts.visits),
        Metric::Pageviews => json!(counts.pageviews),
        Metric::Events => json!(counts.events),
        Metric::ViewsPerVisit => json!(round(ratio(counts.pageviews, counts.visits), 2)),
        Metric::BounceRate => json!((ratio(counts.bounces, counts.visits) * 100.0).round() as i64),
        Metric::VisitDuration => json!(ratio(counts.seconds, counts.visits).round() as i64),
        Metric::Percentage if total == 0 => Value::Null,
        Metric::Percentage => json!(round(ratio(counts.visitors, total) * 100.0, 1)),
        Metric::ConversionRate => json!(round(ratio(counts.visitors, counts.base_visitors) * 100.0, 2)),
        Metric::TotalRevenue | Metric::AverageRevenue => revenue::value(metric, &counts.revenue),
        Metric::IdentifiedVisitors => json!(counts.identified),
        Metric::HotLeads => json!(counts.hot),
        Metric::Clicks => json!(counts.clicks),
    }
}

/// Plausible's change from the earlier figure: percent (rounded), points
/// for bounce rate, difference for conversion rate.
fn change(metric: Metric, old: &Value, new: &Value) -> Value {
    let (Some(old), Some(new)) = (revenue::number(old), revenue::number(new)) else { return Value::Null };
    match metric {
        Metric::BounceRate if old == 0.0 => Value::Null,
        Metric::BounceRate => json!((new - old).round() as i64),
        Metric::ConversionRate => json!(round(new - old, 1)),
        _ if old == 0.0 => json!(if new > 0.0 { 100 } else { 0 }),
        _ => json!(((new - old) / old * 100.0).round() as i64),
    }
}

fn label(dimension: &Dimension, key: &Key, buckets: Option<&Buckets>) -> Value {
    match key {
        Key::Bucket(bucket) => json!(buckets.map(|buckets| buckets.label(*bucket)).unwrap_or_default()),
        Key::Text(text) => json!(sql::shown(dimension, text.as_deref())),
    }
}

/// The order asked for, or Plausible's: time first, then the first metric, most first.
fn order(query: &Query) -> Vec<(OrderField, Direction)> {
    if !query.order_by.is_empty() {
        return query.order_by.clone();
    }
    let mut order = Vec::new();
    if let Some(at) = query.dimensions.iter().position(Dimension::is_time) {
        order.push((OrderField::Dimension(at), Direction::Asc));
    }
    order.push((OrderField::Metric(query.metrics[0]), Direction::Desc));
    order
}

fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(_) | Value::Object(_), Value::Number(_) | Value::Object(_)) => revenue::number(a)
            .unwrap_or_default()
            .partial_cmp(&revenue::number(b).unwrap_or_default())
            .unwrap_or(Ordering::Equal),
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        _ => a.as_str().unwrap_or_default().cmp(b.as_str().unwrap_or_default()),
    }
}

struct Built {
    key: Vec<Key>,
    row: Row,
}

fn echo_range(span: Span, zone: Tz) -> Value {
    let format = |ms: i64| {
        chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
            .unwrap_or_default()
            .with_timezone(&zone)
            .format("%Y-%m-%dT%H:%M:%S%:z")
            .to_string()
    };
    json!([format(span.from), format((span.to - 1).max(span.from) / 1000 * 1000)])
}

fn echo(
    query: &Query,
    site: &site::Model,
    dimensions: &[Dimension],
    order: &[(OrderField, Direction)],
    span: Span,
    zone: Tz,
    body_filters: &Value,
) -> Value {
    let order_by: Vec<Value> = order
        .iter()
        .map(|(field, direction)| {
            let name = match field {
                OrderField::Metric(metric) => metric.name().to_owned(),
                OrderField::Dimension(at) => dimensions[*at].name(),
            };
            json!([name, if *direction == Direction::Asc { "asc" } else { "desc" }])
        })
        .collect();
    let mut include = Map::new();
    if query.include.imports {
        include.insert("imports".to_owned(), json!(true));
    }
    if query.include.time_labels {
        include.insert("time_labels".to_owned(), json!(true));
    }
    if query.include.total_rows {
        include.insert("total_rows".to_owned(), json!(true));
    }
    if let Some(mode) = &query.include.comparisons {
        include.insert(
            "comparisons".to_owned(),
            match mode {
                Mode::PreviousPeriod => json!({"mode": "previous_period"}),
                Mode::YearOverYear => json!({"mode": "year_over_year"}),
                Mode::Custom(from, to) => json!({"mode": "custom", "date_range": [from.to_string(), to.to_string()]}),
            },
        );
    }
    json!({
        "site_id": site.domain,
        "metrics": query.metrics.iter().map(|metric| metric.name()).collect::<Vec<_>>(),
        "date_range": echo_range(span, zone),
        "filters": body_filters,
        "dimensions": dimensions.iter().map(Dimension::name).collect::<Vec<_>>(),
        "order_by": order_by,
        "include": include,
        "pagination": {"limit": query.limit, "offset": query.offset},
    })
}

/// Counts of the query's own range already read elsewhere (the explorer's
/// shared pass): its groups, and the whole `percentage` divides by; and the
/// what its snapshot has taken (for the page's other queries).
#[derive(Default)]
pub struct Known<'a> {
    pub groups: Option<Groups>,
    pub total: Option<i64>,
    pub taken: Option<&'a Taken>,
}

impl Known<'_> {
    /// The same counts, on a snapshot whose takings `taken` keeps.
    pub fn sharing(self, taken: &Taken) -> Known<'_> {
        Known { groups: self.groups, total: self.total, taken: Some(taken) }
    }
}

/// Answers a parsed query over `db` (one snapshot), taking what `known`
/// holds instead of reading it.
pub async fn build(
    db: &impl ConnectionTrait,
    site: &site::Model,
    zone: Tz,
    query: &Query,
    now: i64,
    body_filters: &Value,
    known: Known<'_>,
) -> AppResult<Answer> {
    let Frame { span, dimensions, time_grain, buckets } = Frame::of(db, site.id, zone, query, now).await?;
    let own = Taken::default();
    let taken = known.taken.unwrap_or(&own);
    let goals = taken.goals(db, site.id).await?;
    conversion::check_goals_exist(&query.filters, goals)?;
    let scope = Scope::of(site, now, goals, taken);
    let ask = Ask { dimensions: &dimensions, filters: &query.filters, metrics: &query.metrics };
    // `percentage`'s whole: the visitors of the same filters, ungrouped.
    let whole_ask = Ask { dimensions: &[], filters: &query.filters, metrics: &[Metric::Visitors] };
    let groups = match known.groups {
        Some(groups) => groups,
        None => conversion::groups(db, &scope, ask, span, buckets.as_ref()).await?,
    };
    let total = if let (true, Some(total)) = (query.metrics.contains(&Metric::Percentage), known.total) {
        total
    } else if query.metrics.contains(&Metric::Percentage) {
        let whole = figures::groups(db, &scope, whole_ask, span, None).await?;
        whole.values().map(|counts| counts.visitors).sum()
    } else {
        0
    };
    let row_of = |key: &[Key], counts: &Counts, total: i64, buckets: Option<&Buckets>| Row {
        dimensions: dimensions.iter().zip(key).map(|(dimension, key)| label(dimension, key, buckets)).collect(),
        metrics: query.metrics.iter().map(|metric| metric_value(*metric, counts, total)).collect(),
        comparison: None,
    };
    let mut built: Vec<Built> = if dimensions.is_empty() {
        let counts = groups.values().next().cloned().unwrap_or_default();
        vec![Built { key: Vec::new(), row: row_of(&[], &counts, total, None) }]
    } else {
        groups
            .iter()
            .map(|(key, counts)| Built { key: key.clone(), row: row_of(key, counts, total, buckets.as_ref()) })
            .collect()
    };

    if let Some(mode) = &query.include.comparisons {
        let earlier = range::comparison(span, mode, zone);
        let earlier_buckets = time_grain.map(|grain| Buckets::new(grain, earlier, zone));
        let time_at = dimensions.iter().position(Dimension::is_time);
        // With one time dimension every bucket gets a row, as Plausible fills them.
        if let (Some(buckets), true) = (&buckets, dimensions.len() == 1 && time_at.is_some()) {
            for bucket in buckets.all(span) {
                let key = vec![Key::Bucket(bucket)];
                if !built.iter().any(|b| b.key == key) {
                    built.push(Built { row: row_of(&key, &Counts::default(), total, Some(buckets)), key });
                }
            }
        }
        let old_groups = conversion::groups(db, &scope, ask, earlier, earlier_buckets.as_ref()).await?;
        let old_total = if query.metrics.contains(&Metric::Percentage) {
            let whole = figures::groups(db, &scope, whole_ask, earlier, None).await?;
            whole.values().map(|counts| counts.visitors).sum()
        } else {
            0
        };
        let first_bucket = buckets.as_ref().and_then(|b| b.all(span).first().copied()).unwrap_or_default();
        let old_first = earlier_buckets.as_ref().and_then(|b| b.all(earlier).first().copied()).unwrap_or_default();
        for entry in &mut built {
            // The n-th bucket of the range meets the n-th of the earlier one.
            let old_key: Vec<Key> = entry
                .key
                .iter()
                .map(|key| match key {
                    Key::Bucket(bucket) => Key::Bucket(bucket - first_bucket + old_first),
                    other => other.clone(),
                })
                .collect();
            let old_counts = old_groups.get(&old_key).cloned().unwrap_or_default();
            let old = row_of(&old_key, &old_counts, old_total, earlier_buckets.as_ref());
            let changes = query
                .metrics
                .iter()
                .zip(old.metrics.iter().zip(&entry.row.metrics))
                .map(|(metric, (old, new))| change(*metric, old, new))
                .collect();
            entry.row.comparison =
                Some(Comparison { dimensions: old.dimensions, metrics: old.metrics, change: changes });
        }
    }

    let order = order(query);
    built.sort_by(|a, b| {
        for (field, direction) in &order {
            let (x, y) = match field {
                OrderField::Metric(metric) => {
                    let at = query.metrics.iter().position(|m| m == metric).unwrap_or_default();
                    (&a.row.metrics[at], &b.row.metrics[at])
                }
                OrderField::Dimension(at) => match (&a.key[*at], &b.key[*at]) {
                    (Key::Bucket(x), Key::Bucket(y)) => {
                        let found = x.cmp(y);
                        if found != Ordering::Equal {
                            return if *direction == Direction::Asc { found } else { found.reverse() };
                        }
                        continue;
                    }
                    _ => (&a.row.dimensions[*at], &b.row.dimensions[*at]),
                },
            };
            let found = compare_values(x, y);
            if found != Ordering::Equal {
                return if *direction == Direction::Asc { found } else { found.reverse() };
            }
        }
        // Ties: by the dimension values, so pages are stable.
        a.key.cmp(&b.key)
    });
    let total_rows = built.len();
    let results: Vec<Row> = built
        .into_iter()
        .skip(usize::try_from(query.offset).unwrap_or(usize::MAX))
        .take(usize::try_from(query.limit).unwrap_or(usize::MAX))
        .map(|entry| entry.row)
        .collect();

    let mut meta = Map::new();
    if query.include.imports {
        meta.insert("imports_included".to_owned(), json!(false));
        meta.insert("imports_skip_reason".to_owned(), json!("no_imported_data"));
    }
    if query.include.time_labels
        && let Some(buckets) = &buckets
    {
        let labels: Vec<String> = buckets.all(span).into_iter().map(|bucket| buckets.label(bucket)).collect();
        meta.insert("time_labels".to_owned(), json!(labels));
    }
    if query.include.total_rows {
        meta.insert("total_rows".to_owned(), json!(total_rows));
    }
    if revenue::asked(&query.metrics) {
        let warnings = revenue::warnings(query, groups.values().map(|counts| &counts.revenue));
        if !warnings.is_empty() {
            meta.insert("metric_warnings".to_owned(), Value::Object(warnings));
        }
    }
    Ok(Answer {
        results,
        meta: Value::Object(meta),
        query: echo(query, site, &dimensions, &order, span, zone, body_filters),
    })
}
