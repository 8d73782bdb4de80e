//! Reads a query body: each part checked, the field at fault and the
//! reason named, before any SQL.

use serde_json::Value;

use super::*;
use crate::error::{AppError, AppResult};

fn bad(field: &str, reason: impl std::fmt::Display) -> AppError {
    AppError::validation(field, reason)
}

fn text<'a>(value: &'a Value, field: &str, what: &str) -> AppResult<&'a str> {
    value.as_str().ok_or_else(|| bad(field, format!("{what} must be a string")))
}

/// Reads a query body. `site_id` may be absent where the caller names the
/// site otherwise (GraphQL's `siteId`).
pub fn parse(body: &Value) -> AppResult<Query> {
    let Some(body) = body.as_object() else {
        return Err(bad("query", "must be a JSON object"));
    };
    const KNOWN: [&str; 8] =
        ["site_id", "metrics", "date_range", "dimensions", "filters", "order_by", "include", "pagination"];
    if let Some(unknown) = body.keys().find(|key| !KNOWN.contains(&key.as_str())) {
        return Err(bad(unknown, format!("is not a query field; the fields are {}", KNOWN.join(", "))));
    }
    let site = match body.get("site_id") {
        None | Some(Value::Null) => None,
        Some(Value::Number(id)) => Some(SiteRef::Id(id.as_i64().ok_or_else(|| bad("site_id", "is not a site id"))?)),
        Some(Value::String(domain)) if !domain.trim().is_empty() => Some(match domain.trim().parse::<i64>() {
            Ok(id) => SiteRef::Id(id),
            Err(_) => SiteRef::Domain(domain.trim().to_lowercase()),
        }),
        Some(_) => return Err(bad("site_id", "must be the site's domain or id")),
    };
    let metrics = parse_metrics(body.get("metrics"))?;
    let date_range = parse_date_range(body.get("date_range"))?;
    let dimensions = parse_dimensions(body.get("dimensions"))?;
    let filters = match body.get("filters") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(filters)) => {
            let mut leaves = 0;
            let parsed = filters
                .iter()
                .enumerate()
                .map(|(at, filter)| parse_filter(filter, &format!("filters[{at}]"), &mut leaves))
                .collect::<AppResult<Vec<_>>>()?;
            if leaves > MAX_FILTER_LEAVES {
                return Err(bad("filters", format!("at most {MAX_FILTER_LEAVES} conditions in all")));
            }
            parsed
        }
        Some(_) => return Err(bad("filters", "must be an array of filters")),
    };
    let order_by = parse_order_by(body.get("order_by"), &metrics, &dimensions)?;
    let include = parse_include(body.get("include"))?;
    let (limit, offset) = parse_pagination(body.get("pagination"))?;
    let query = Query { site, metrics, date_range, dimensions, filters, order_by, include, limit, offset };
    check_combinations(&query)?;
    Ok(query)
}

fn parse_metrics(value: Option<&Value>) -> AppResult<Vec<Metric>> {
    let Some(Value::Array(names)) = value else {
        return Err(bad("metrics", "is required: a non-empty array of metric names"));
    };
    if names.is_empty() {
        return Err(bad("metrics", "must name at least one metric"));
    }
    let mut metrics = Vec::with_capacity(names.len());
    for name in names {
        let name = text(name, "metrics", "each metric")?;
        let metric = Metric::parse(name).ok_or_else(|| bad("metrics", format!("Invalid metric \"{name}\"")))?;
        if metrics.contains(&metric) {
            return Err(bad("metrics", format!("Expected items to be unique but they were not: \"{name}\"")));
        }
        metrics.push(metric);
    }
    Ok(metrics)
}

fn parse_date(value: &str) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").ok()
}

pub fn parse_date_range(value: Option<&Value>) -> AppResult<DateRange> {
    const FIELD: &str = "date_range";
    match value {
        None | Some(Value::Null) => Err(bad(FIELD, "is required")),
        Some(Value::String(name)) => DateRange::parse_name(name).ok_or_else(|| {
            bad(FIELD, format!("Invalid date range \"{name}\": use day, 24h, 7d, 28d, 30d, 91d, month, 6mo, 12mo, year, all or [from, to]"))
        }),
        Some(Value::Array(ends)) if ends.len() == 2 => {
            let (Some(from), Some(to)) = (ends[0].as_str(), ends[1].as_str()) else {
                return Err(bad(FIELD, "must be two ISO 8601 dates or datetimes"));
            };
            if let (Some(from), Some(to)) = (parse_date(from), parse_date(to)) {
                if from > to {
                    return Err(bad(FIELD, format!("Invalid date range: {from} is after {to}")));
                }
                check_span(from, to)?;
                return Ok(DateRange::Dates(from, to));
            }
            match (chrono::DateTime::parse_from_rfc3339(from), chrono::DateTime::parse_from_rfc3339(to)) {
                (Ok(from), Ok(to)) if from <= to => {
                    check_span(from.date_naive(), to.date_naive())?;
                    Ok(DateRange::Instants(from, to))
                }
                (Ok(_), Ok(_)) => Err(bad(FIELD, "Invalid date range: the start is after the end")),
                _ => Err(bad(
                    FIELD,
                    format!(
                        "Invalid date range {}: use two dates (2024-01-31) or two ISO 8601 datetimes with an offset",
                        Value::Array(ends.clone())
                    ),
                )),
            }
        }
        Some(other) => Err(bad(FIELD, format!("Invalid date range {other}"))),
    }
}

/// The longest explicit range, in days: a century.
pub const MAX_SPAN_DAYS: i64 = 36_600;

/// An explicit range lies after 1970 and spans at most a century.
fn check_span(from: chrono::NaiveDate, to: chrono::NaiveDate) -> AppResult<()> {
    if from < chrono::NaiveDate::default() {
        return Err(bad("date_range", "Invalid date range: it must begin on 1970-01-01 or later"));
    }
    if (to - from).num_days() > MAX_SPAN_DAYS {
        return Err(bad("date_range", format!("Invalid date range: at most {MAX_SPAN_DAYS} days")));
    }
    Ok(())
}

fn parse_dimensions(value: Option<&Value>) -> AppResult<Vec<Dimension>> {
    let names = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(names)) => names,
        Some(_) => return Err(bad("dimensions", "must be an array of dimension names")),
    };
    if names.len() > MAX_DIMENSIONS {
        return Err(bad("dimensions", format!("at most {MAX_DIMENSIONS} dimensions")));
    }
    let mut dimensions = Vec::with_capacity(names.len());
    for name in names {
        let name = text(name, "dimensions", "each dimension")?;
        let dimension =
            Dimension::parse(name).ok_or_else(|| bad("dimensions", format!("Invalid dimension \"{name}\"")))?;
        if dimensions.contains(&dimension) {
            return Err(bad("dimensions", format!("Expected items to be unique but they were not: \"{name}\"")));
        }
        if dimension.is_time() && dimensions.iter().any(Dimension::is_time) {
            return Err(bad("dimensions", "Only one time dimension can be used in a query"));
        }
        dimensions.push(dimension);
    }
    Ok(dimensions)
}

fn parse_filter(value: &Value, field: &str, leaves: &mut usize) -> AppResult<Filter> {
    let Some(parts) = value.as_array().filter(|parts| !parts.is_empty()) else {
        return Err(bad(field, format!("Invalid filter {value}")));
    };
    let operator = text(&parts[0], field, "the operator")?;
    match operator {
        "and" | "or" => {
            let Some(Value::Array(inner)) = parts.get(1).filter(|_| parts.len() == 2) else {
                return Err(bad(field, format!("Invalid filter {value}: `{operator}` takes one array of filters")));
            };
            if inner.is_empty() {
                return Err(bad(field, format!("Invalid filter {value}: `{operator}` needs at least one filter")));
            }
            let inner = inner
                .iter()
                .enumerate()
                .map(|(at, filter)| parse_filter(filter, &format!("{field}[1][{at}]"), leaves))
                .collect::<AppResult<Vec<_>>>()?;
            Ok(if operator == "and" { Filter::And(inner) } else { Filter::Or(inner) })
        }
        "has_done" | "has_not_done" => {
            let (Some(inner), 2) = (parts.get(1), parts.len()) else {
                return Err(bad(field, format!("Invalid filter {value}: `{operator}` takes one filter")));
            };
            let inner = parse_filter(inner, &format!("{field}[1]"), leaves)?;
            let mut events_only = true;
            let mut nested = false;
            inner.conditions(&mut |condition| events_only &= condition.dimension.is_event());
            inner.behaviours(&mut nested);
            if !events_only {
                return Err(bad(
                    field,
                    "Invalid filters. Behavioral filters (has_done, has_not_done) can only be used with event dimension filters.",
                ));
            }
            if nested {
                return Err(bad(
                    field,
                    "Invalid filters. Behavioral filters (has_done, has_not_done) cannot be nested.",
                ));
            }
            Ok(Filter::HasDone { done: operator == "has_done", inner: Box::new(inner) })
        }
        "not" => {
            let (Some(inner), 2) = (parts.get(1), parts.len()) else {
                return Err(bad(field, format!("Invalid filter {value}: `not` takes one filter")));
            };
            Ok(Filter::Not(Box::new(parse_filter(inner, &format!("{field}[1]"), leaves)?)))
        }
        _ => {
            let operator = Operator::ALL
                .iter()
                .find(|(_, name)| *name == operator)
                .map(|(op, _)| *op)
                .ok_or_else(|| bad(field, format!("Unknown operator '{operator}'")))?;
            *leaves += 1;
            parse_condition(operator, parts, value, field).map(Filter::Condition)
        }
    }
}

fn parse_condition(operator: Operator, parts: &[Value], whole: &Value, field: &str) -> AppResult<Condition> {
    if !(3..=4).contains(&parts.len()) {
        return Err(bad(field, format!("Invalid filter {whole}: [operator, dimension, [values], modifiers?]")));
    }
    let name = text(&parts[1], field, "the dimension")?;
    let dimension = Dimension::parse(name).ok_or_else(|| bad(field, format!("Invalid filter dimension '{name}'")))?;
    if dimension.is_time() {
        return Err(bad(field, format!("Invalid filter dimension '{name}': filter by date_range instead")));
    }
    let Some(Value::Array(raw_values)) = parts.get(2) else {
        return Err(bad(field, format!("Invalid filter {whole}: the values must be an array")));
    };
    if raw_values.is_empty() || raw_values.len() > MAX_FILTER_VALUES {
        return Err(bad(field, format!("Invalid filter {whole}: between 1 and {MAX_FILTER_VALUES} values")));
    }
    let values = raw_values
        .iter()
        .map(|value| match value {
            Value::String(text) if text.chars().count() <= MAX_VALUE_LEN => Ok(text.clone()),
            Value::Number(number) => Ok(number.to_string()),
            _ => Err(bad(
                field,
                format!("Invalid filter {whole}: values are strings of at most {MAX_VALUE_LEN} characters"),
            )),
        })
        .collect::<AppResult<Vec<String>>>()?;
    let case_sensitive = match parts.get(3) {
        None => true,
        Some(Value::Object(_)) if matches!(operator, Operator::Matches | Operator::MatchesNot) => {
            return Err(bad(
                field,
                format!("Invalid filter {whole}: case_sensitive does not go with {}", operator.name()),
            ));
        }
        Some(Value::Object(modifiers)) => {
            if let Some(unknown) = modifiers.keys().find(|key| *key != "case_sensitive") {
                return Err(bad(field, format!("Invalid filter modifier '{unknown}'")));
            }
            match modifiers.get("case_sensitive") {
                None => true,
                Some(Value::Bool(flag)) => *flag,
                Some(_) => return Err(bad(field, "case_sensitive must be true or false")),
            }
        }
        Some(_) => return Err(bad(field, format!("Invalid filter {whole}: modifiers must be an object"))),
    };
    let patterns = if matches!(operator, Operator::Matches | Operator::MatchesNot) {
        values
            .iter()
            .map(|pattern| {
                regex::RegexBuilder::new(pattern)
                    .case_insensitive(!case_sensitive)
                    .size_limit(MAX_REGEX_BYTES)
                    .dfa_size_limit(MAX_REGEX_BYTES)
                    .build()
                    .map_err(|err| match err {
                        regex::Error::CompiledTooBig(_) => bad(field, format!("The regex '{pattern}' is too costly")),
                        _ => bad(field, format!("The regex '{pattern}' is invalid")),
                    })
            })
            .collect::<AppResult<Vec<_>>>()?
    } else {
        Vec::new()
    };
    Ok(Condition { operator, dimension, values, case_sensitive, patterns })
}

fn parse_order_by(
    value: Option<&Value>,
    metrics: &[Metric],
    dimensions: &[Dimension],
) -> AppResult<Vec<(OrderField, Direction)>> {
    const FIELD: &str = "order_by";
    let entries = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries,
        Some(_) => return Err(bad(FIELD, "must be an array of [field, direction] pairs")),
    };
    entries
        .iter()
        .map(|entry| {
            let (Some(name), Some(direction), Some(2)) = (
                entry.get(0).and_then(Value::as_str),
                entry.get(1).and_then(Value::as_str),
                entry.as_array().map(Vec::len),
            ) else {
                return Err(bad(FIELD, format!("Invalid order_by entry {entry}")));
            };
            let direction = match direction {
                "asc" => Direction::Asc,
                "desc" => Direction::Desc,
                _ => return Err(bad(FIELD, format!("Invalid order_by direction '{direction}': asc or desc"))),
            };
            let field = if let Some(metric) = Metric::parse(name).filter(|metric| metrics.contains(metric)) {
                OrderField::Metric(metric)
            } else if let Some(at) =
                Dimension::parse(name).and_then(|dimension| dimensions.iter().position(|known| *known == dimension))
            {
                OrderField::Dimension(at)
            } else {
                return Err(bad(
                    FIELD,
                    format!("Invalid order_by entry '{name}': it is not a metric or dimension of the query"),
                ));
            };
            Ok((field, direction))
        })
        .collect()
}

fn flag(options: &serde_json::Map<String, Value>, key: &str) -> AppResult<bool> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(_) => Err(bad("include", format!("{key} must be true or false"))),
    }
}

fn parse_include(value: Option<&Value>) -> AppResult<Include> {
    let options = match value {
        None | Some(Value::Null) => return Ok(Include::default()),
        Some(Value::Object(options)) => options,
        Some(_) => return Err(bad("include", "must be an object")),
    };
    const KNOWN: [&str; 4] = ["imports", "time_labels", "total_rows", "comparisons"];
    if let Some(unknown) = options.keys().find(|key| !KNOWN.contains(&key.as_str())) {
        return Err(bad("include", format!("'{unknown}' is not an include option; they are {}", KNOWN.join(", "))));
    }
    let comparisons = match options.get("comparisons") {
        None | Some(Value::Null) => None,
        Some(Value::Object(comparison)) => Some(match comparison.get("mode").and_then(Value::as_str) {
            Some("previous_period") => Comparison::PreviousPeriod,
            Some("year_over_year") => Comparison::YearOverYear,
            Some("custom") => {
                let dates = comparison.get("date_range").and_then(Value::as_array);
                let ends = dates
                    .filter(|dates| dates.len() == 2)
                    .and_then(|dates| Some((parse_date(dates[0].as_str()?)?, parse_date(dates[1].as_str()?)?)));
                match ends {
                    Some((from, to)) if from <= to => Comparison::Custom(from, to),
                    _ => {
                        return Err(bad(
                            "include",
                            "comparisons.date_range must be two dates, the first not after the second",
                        ));
                    }
                }
            }
            _ => return Err(bad("include", "comparisons.mode must be previous_period, year_over_year or custom")),
        }),
        Some(_) => return Err(bad("include", "comparisons must be an object with a mode")),
    };
    Ok(Include {
        imports: flag(options, "imports")?,
        time_labels: flag(options, "time_labels")?,
        total_rows: flag(options, "total_rows")?,
        comparisons,
    })
}

fn parse_pagination(value: Option<&Value>) -> AppResult<(u64, u64)> {
    let options = match value {
        None | Some(Value::Null) => return Ok((MAX_LIMIT, 0)),
        Some(Value::Object(options)) => options,
        Some(_) => return Err(bad("pagination", "must be an object with limit and offset")),
    };
    let number = |key: &str, default: u64| match options.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(value) => value.as_u64().ok_or_else(|| bad("pagination", format!("{key} must be a whole number"))),
    };
    let limit = number("limit", MAX_LIMIT)?;
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(bad("pagination", format!("limit must be between 1 and {MAX_LIMIT}")));
    }
    let offset = number("offset", 0)?;
    if offset > i64::MAX as u64 / 2 {
        return Err(bad("pagination", "offset is too large"));
    }
    Ok((limit, offset))
}

/// What Plausible refuses to combine, and what we do.
fn check_combinations(query: &Query) -> AppResult<()> {
    if query.has_event_dimension() {
        let session: Vec<&str> =
            query.metrics.iter().filter(|metric| metric.is_session_metric()).map(|metric| metric.name()).collect();
        if !session.is_empty() {
            let events: Vec<String> =
                query.dimensions.iter().filter(|dimension| dimension.is_event()).map(Dimension::name).collect();
            return Err(bad(
                "metrics",
                format!(
                    "Session metric(s) `{}` cannot be queried along with event dimension(s) `{}`",
                    session.join("`, `"),
                    events.join("`, `")
                ),
            ));
        }
    }
    if query.include.time_labels && !query.dimensions.iter().any(Dimension::is_time) {
        return Err(bad("include", "Invalid include.time_labels: requires a time dimension."));
    }
    if query.metrics.contains(&Metric::ConversionRate) && !query.has_goal() {
        return Err(bad(
            "metrics",
            "Metric `conversion_rate` can only be queried with event:goal filters or dimensions.",
        ));
    }
    if query.metrics.contains(&Metric::Clicks) {
        let mut fits = query.dimensions.iter().all(clicks_can_split);
        query.filters.iter().for_each(|filter| filter.conditions(&mut |c| fits &= clicks_can_split(&c.dimension)));
        if !fits {
            return Err(bad(
                "metrics",
                "Metric `clicks` goes only with time, visit:link, visit:utm_source, visit:utm_medium, \
                 visit:utm_campaign, visit:country, visit:region, visit:city, visit:device, visit:browser and visit:os",
            ));
        }
    }
    Ok(())
}

/// The dimensions a tracking-link click has.
pub fn clicks_can_split(dimension: &Dimension) -> bool {
    matches!(
        dimension,
        Dimension::Time(_)
            | Dimension::Visit(
                VisitProperty::Link
                    | VisitProperty::UtmSource
                    | VisitProperty::UtmMedium
                    | VisitProperty::UtmCampaign
                    | VisitProperty::Country
                    | VisitProperty::Region
                    | VisitProperty::City
                    | VisitProperty::CountryName
                    | VisitProperty::RegionName
                    | VisitProperty::CityName
                    | VisitProperty::Device
                    | VisitProperty::Browser
                    | VisitProperty::Os
            )
    )
}
