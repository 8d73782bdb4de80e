//! What Explore is asked (design §17), in Plausible's Stats API v2 shapes:
//! metrics, dimensions, filters, a date range, order, what to include and a
//! page. Parsing is pure: a body that names an unknown metric, joins a
//! metric with a dimension it cannot go with, or holds a bad regex is
//! refused with the field at fault and the reason, before any SQL.

use regex::Regex;
use serde_json::Value;

use crate::error::{AppError, AppResult};

/// Rows a page may hold, and the default page size (Plausible's).
pub const MAX_LIMIT: u64 = 10_000;
/// Dimensions one query may group by.
pub const MAX_DIMENSIONS: usize = 4;
/// Filters, counting every leaf of every `and`, `or` and `not`.
pub const MAX_FILTER_LEAVES: usize = 30;
/// Values one filter may list.
pub const MAX_FILTER_VALUES: usize = 200;
/// The longest value or pattern a filter takes.
pub const MAX_VALUE_LEN: usize = 1_000;
/// The compiled size a `matches` pattern may reach: a larger one is refused
/// as too costly, not run.
pub const MAX_REGEX_BYTES: usize = 256 * 1024;
/// The longest event property key.
pub const MAX_PROP_KEY_LEN: usize = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    Visitors,
    Visits,
    Pageviews,
    ViewsPerVisit,
    BounceRate,
    VisitDuration,
    Events,
    Percentage,
    ConversionRate,
    TotalRevenue,
    AverageRevenue,
    IdentifiedVisitors,
    HotLeads,
    Clicks,
}

impl Metric {
    pub const ALL: [Metric; 14] = [
        Metric::Visitors,
        Metric::Visits,
        Metric::Pageviews,
        Metric::ViewsPerVisit,
        Metric::BounceRate,
        Metric::VisitDuration,
        Metric::Events,
        Metric::Percentage,
        Metric::ConversionRate,
        Metric::TotalRevenue,
        Metric::AverageRevenue,
        Metric::IdentifiedVisitors,
        Metric::HotLeads,
        Metric::Clicks,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Visitors => "visitors",
            Metric::Visits => "visits",
            Metric::Pageviews => "pageviews",
            Metric::ViewsPerVisit => "views_per_visit",
            Metric::BounceRate => "bounce_rate",
            Metric::VisitDuration => "visit_duration",
            Metric::Events => "events",
            Metric::Percentage => "percentage",
            Metric::ConversionRate => "conversion_rate",
            Metric::TotalRevenue => "total_revenue",
            Metric::AverageRevenue => "average_revenue",
            Metric::IdentifiedVisitors => "identified_visitors",
            Metric::HotLeads => "hot_leads",
            Metric::Clicks => "clicks",
        }
    }

    fn parse(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|metric| metric.name() == name)
    }

    /// Metrics of whole visits: they cannot be split by what happened inside one.
    pub fn is_session_metric(self) -> bool {
        matches!(self, Metric::BounceRate | Metric::VisitDuration | Metric::ViewsPerVisit)
    }

    /// Whether the metric reads a group's distinct visitors.
    pub fn counts_visitors(self) -> bool {
        matches!(self, Metric::Visitors | Metric::Percentage | Metric::ConversionRate)
    }

    /// Whether the metric reads a group's distinct visits.
    pub fn counts_visits(self) -> bool {
        matches!(self, Metric::Visits | Metric::ViewsPerVisit | Metric::BounceRate | Metric::VisitDuration)
    }
}

/// What an event is grouped or filtered by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EventProperty {
    Page,
    Hostname,
    Name,
    Goal,
    Prop(String),
}

/// What a visit (session) is grouped or filtered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VisitProperty {
    EntryPage,
    ExitPage,
    Source,
    Referrer,
    Channel,
    UtmSource,
    UtmMedium,
    UtmCampaign,
    UtmContent,
    UtmTerm,
    Device,
    Browser,
    Os,
    Country,
    Region,
    City,
    /// The country's English name; region and city names are what is stored.
    CountryName,
    RegionName,
    CityName,
    Link,
}

impl VisitProperty {
    pub const ALL: [(VisitProperty, &'static str); 20] = [
        (VisitProperty::EntryPage, "entry_page"),
        (VisitProperty::ExitPage, "exit_page"),
        (VisitProperty::Source, "source"),
        (VisitProperty::Referrer, "referrer"),
        (VisitProperty::Channel, "channel"),
        (VisitProperty::UtmSource, "utm_source"),
        (VisitProperty::UtmMedium, "utm_medium"),
        (VisitProperty::UtmCampaign, "utm_campaign"),
        (VisitProperty::UtmContent, "utm_content"),
        (VisitProperty::UtmTerm, "utm_term"),
        (VisitProperty::Device, "device"),
        (VisitProperty::Browser, "browser"),
        (VisitProperty::Os, "os"),
        (VisitProperty::Country, "country"),
        (VisitProperty::Region, "region"),
        (VisitProperty::City, "city"),
        (VisitProperty::CountryName, "country_name"),
        (VisitProperty::RegionName, "region_name"),
        (VisitProperty::CityName, "city_name"),
        (VisitProperty::Link, "link"),
    ];
}

/// What the visitor behind a visit is grouped or filtered by (ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VisitorProperty {
    Status,
    Account,
}

/// The calendar a `time` dimension buckets by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grain {
    Hour,
    Day,
    Week,
    Month,
}

impl Grain {
    pub fn name(self) -> &'static str {
        match self {
            Grain::Hour => "hour",
            Grain::Day => "day",
            Grain::Week => "week",
            Grain::Month => "month",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dimension {
    Event(EventProperty),
    Visit(VisitProperty),
    Visitor(VisitorProperty),
    /// `time` (`None`: the grain follows the range) or `time:<grain>`.
    Time(Option<Grain>),
}

impl Dimension {
    pub fn parse(name: &str) -> Option<Dimension> {
        if let Some(grain) = name.strip_prefix("time") {
            return match grain {
                "" => Some(Dimension::Time(None)),
                ":hour" => Some(Dimension::Time(Some(Grain::Hour))),
                ":day" => Some(Dimension::Time(Some(Grain::Day))),
                ":week" => Some(Dimension::Time(Some(Grain::Week))),
                ":month" => Some(Dimension::Time(Some(Grain::Month))),
                _ => None,
            };
        }
        if let Some(key) = name.strip_prefix("event:props:") {
            // A quote or backslash could not be spelled in SQLite's JSON path.
            let valid = !key.is_empty() && key.chars().count() <= MAX_PROP_KEY_LEN && !key.contains(['"', '\\']);
            return valid.then(|| Dimension::Event(EventProperty::Prop(key.to_owned())));
        }
        if let Some(property) = name.strip_prefix("event:") {
            return Some(Dimension::Event(match property {
                "page" => EventProperty::Page,
                "hostname" => EventProperty::Hostname,
                "name" => EventProperty::Name,
                "goal" => EventProperty::Goal,
                _ => return None,
            }));
        }
        if let Some(property) = name.strip_prefix("visit:") {
            return VisitProperty::ALL
                .iter()
                .find(|(_, known)| *known == property)
                .map(|(found, _)| Dimension::Visit(*found));
        }
        match name {
            "visitor:status" => Some(Dimension::Visitor(VisitorProperty::Status)),
            "visitor:account" => Some(Dimension::Visitor(VisitorProperty::Account)),
            _ => None,
        }
    }

    /// The name a query spells this dimension with.
    pub fn name(&self) -> String {
        match self {
            Dimension::Time(None) => "time".to_owned(),
            Dimension::Time(Some(grain)) => format!("time:{}", grain.name()),
            Dimension::Event(EventProperty::Page) => "event:page".to_owned(),
            Dimension::Event(EventProperty::Hostname) => "event:hostname".to_owned(),
            Dimension::Event(EventProperty::Name) => "event:name".to_owned(),
            Dimension::Event(EventProperty::Goal) => "event:goal".to_owned(),
            Dimension::Event(EventProperty::Prop(key)) => format!("event:props:{key}"),
            Dimension::Visit(property) => {
                let name = VisitProperty::ALL.iter().find(|(known, _)| known == property).map(|(_, name)| *name);
                format!("visit:{}", name.unwrap_or_default())
            }
            Dimension::Visitor(VisitorProperty::Status) => "visitor:status".to_owned(),
            Dimension::Visitor(VisitorProperty::Account) => "visitor:account".to_owned(),
        }
    }

    pub fn is_event(&self) -> bool {
        matches!(self, Dimension::Event(_))
    }

    pub fn is_time(&self) -> bool {
        matches!(self, Dimension::Time(_))
    }
}

/// How a filter compares a dimension's value with the values it lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Is,
    IsNot,
    Contains,
    ContainsNot,
    Matches,
    MatchesNot,
}

impl Operator {
    const ALL: [(Operator, &'static str); 6] = [
        (Operator::Is, "is"),
        (Operator::IsNot, "is_not"),
        (Operator::Contains, "contains"),
        (Operator::ContainsNot, "contains_not"),
        (Operator::Matches, "matches"),
        (Operator::MatchesNot, "matches_not"),
    ];

    pub fn name(self) -> &'static str {
        Operator::ALL.iter().find(|(op, _)| *op == self).map(|(_, name)| *name).unwrap_or("is")
    }

    /// The operator that keeps what this one drops.
    pub fn negated(self) -> bool {
        matches!(self, Operator::IsNot | Operator::ContainsNot | Operator::MatchesNot)
    }
}

/// One comparison of a dimension with a list of values: a row passes when
/// any value matches (all fail for the negated operators).
impl Condition {
    /// `dimension` is exactly `value`.
    pub fn is(dimension: Dimension, value: &str) -> Condition {
        Condition {
            operator: Operator::Is,
            dimension,
            values: vec![value.to_owned()],
            case_sensitive: true,
            patterns: Vec::new(),
        }
    }

    /// Whether Rust decides which stored values pass (a regex, or a country
    /// name where the rows keep codes), leaving SQL a list of them.
    /// (A goal condition is decided over the site's goal names instead.)
    pub fn decided_in_rust(&self) -> bool {
        if self.dimension == Dimension::Event(EventProperty::Goal) {
            return false;
        }
        matches!(self.operator, Operator::Matches | Operator::MatchesNot)
            || self.dimension == Dimension::Visit(VisitProperty::CountryName)
    }

    /// Whether a stored value, as shown, passes the positive form of the
    /// operator (`is` for `is_not`...).
    pub fn keeps(&self, shown: &str) -> bool {
        let fold = |text: &str| if self.case_sensitive { text.to_owned() } else { text.to_lowercase() };
        let shown = fold(shown);
        match self.operator {
            Operator::Is | Operator::IsNot => self.values.iter().any(|value| fold(value) == shown),
            Operator::Contains | Operator::ContainsNot => self.values.iter().any(|value| shown.contains(&fold(value))),
            Operator::Matches | Operator::MatchesNot => self.patterns.iter().any(|pattern| pattern.is_match(&shown)),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Condition {
    pub operator: Operator,
    pub dimension: Dimension,
    pub values: Vec<String>,
    pub case_sensitive: bool,
    /// The compiled patterns of `matches` and `matches_not`.
    pub patterns: Vec<Regex>,
}

#[derive(Debug, Clone)]
pub enum Filter {
    Condition(Condition),
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
    /// Visits with (or, `done: false`, without) an event the inner filter
    /// keeps: Plausible's `has_done` and `has_not_done`.
    HasDone {
        done: bool,
        inner: Box<Filter>,
    },
}

impl Filter {
    /// Whether this filter reads only whole visits and their visitors: no
    /// event dimension, no behaviour.
    pub fn is_visit_level(&self) -> bool {
        let mut behaviour = false;
        self.behaviours(&mut behaviour);
        let mut events = false;
        self.conditions(&mut |condition| events |= condition.dimension.is_event());
        !behaviour && !events
    }

    /// Sets `found` when this filter is or holds a behavioural one.
    fn behaviours(&self, found: &mut bool) {
        match self {
            Filter::Condition(_) => {}
            Filter::HasDone { .. } => *found = true,
            Filter::And(all) | Filter::Or(all) => all.iter().for_each(|filter| filter.behaviours(found)),
            Filter::Not(inner) => inner.behaviours(found),
        }
    }

    /// Calls `each` on every condition, however deeply nested.
    pub fn conditions<'a>(&'a self, each: &mut impl FnMut(&'a Condition)) {
        match self {
            Filter::Condition(condition) => each(condition),
            Filter::And(all) | Filter::Or(all) => all.iter().for_each(|filter| filter.conditions(each)),
            Filter::Not(inner) | Filter::HasDone { inner, .. } => inner.conditions(each),
        }
    }
}

/// The window asked for, before the site's time zone and clock place it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DateRange {
    /// Today, from its midnight.
    Day,
    /// The 24 hours up to now.
    Hours24,
    /// The `n` days ending today (`7d`, `28d`, `30d`, `91d`).
    Days(u32),
    /// The `n` calendar months ending with this one (`6mo`, `12mo`).
    Months(u32),
    /// This calendar month, this year.
    Month,
    Year,
    /// From the site's first event to today.
    All,
    /// `[from, to]`: both dates (whole days, `to` included) or both datetimes.
    Dates(chrono::NaiveDate, chrono::NaiveDate),
    Instants(chrono::DateTime<chrono::FixedOffset>, chrono::DateTime<chrono::FixedOffset>),
}

/// The longest `Nd` and `Nmo` (Plausible's bounds).
pub const MAX_RANGE_DAYS: u32 = 5_000;
pub const MAX_RANGE_MONTHS: u32 = 100;

impl DateRange {
    fn parse_name(name: &str) -> Option<DateRange> {
        let count = |digits: &str, most: u32| digits.parse::<u32>().ok().filter(|n| (1..=most).contains(n));
        Some(match name {
            "day" => DateRange::Day,
            "24h" => DateRange::Hours24,
            "month" => DateRange::Month,
            "year" => DateRange::Year,
            "all" => DateRange::All,
            _ => match name.strip_suffix("mo") {
                Some(months) => DateRange::Months(count(months, MAX_RANGE_MONTHS)?),
                None => DateRange::Days(count(name.strip_suffix('d')?, MAX_RANGE_DAYS)?),
            },
        })
    }
}

/// What the comparison figures are measured over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparison {
    PreviousPeriod,
    YearOverYear,
    Custom(chrono::NaiveDate, chrono::NaiveDate),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Asc,
    Desc,
}

/// A field `order_by` names: one of the query's metrics or dimensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderField {
    Metric(Metric),
    Dimension(usize),
}

#[derive(Debug, Clone, Default)]
pub struct Include {
    pub imports: bool,
    pub time_labels: bool,
    pub total_rows: bool,
    pub comparisons: Option<Comparison>,
}

/// The site a body names: its domain, or its numeric id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteRef {
    Id(i64),
    Domain(String),
}

#[derive(Debug, Clone)]
pub struct Query {
    pub site: Option<SiteRef>,
    pub metrics: Vec<Metric>,
    pub date_range: DateRange,
    pub dimensions: Vec<Dimension>,
    pub filters: Vec<Filter>,
    pub order_by: Vec<(OrderField, Direction)>,
    pub include: Include,
    pub limit: u64,
    pub offset: u64,
}

impl Query {
    /// Whether any dimension or filter is about events (pages, names,
    /// properties) rather than whole visits.
    pub fn has_event_dimension(&self) -> bool {
        self.dimensions.iter().any(Dimension::is_event)
    }

    pub fn has_goal(&self) -> bool {
        let mut found = self.dimensions.contains(&Dimension::Event(EventProperty::Goal));
        self.filters.iter().for_each(|filter| {
            filter.conditions(&mut |condition| found |= condition.dimension == Dimension::Event(EventProperty::Goal))
        });
        found
    }
}

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refused(body: Value) -> (String, String) {
        let err = parse(&body).expect_err("refused");
        (err.field.unwrap_or_default(), err.message)
    }

    #[test]
    fn accepts_plausible_bodies() {
        let query = parse(&json!({
            "site_id": "example.com",
            "metrics": ["visitors", "pageviews", "bounce_rate"],
            "date_range": "7d",
            "dimensions": ["visit:country", "time:day"],
            "filters": [["is", "visit:browser", ["Chrome", "Firefox"]], ["not", ["contains", "visit:utm_campaign", ["spring"], {"case_sensitive": false}]]],
            "order_by": [["visitors", "desc"], ["time:day", "asc"]],
            "include": {"time_labels": true, "total_rows": true, "comparisons": {"mode": "previous_period"}},
            "pagination": {"limit": 5, "offset": 10}
        }))
        .expect("valid");
        assert_eq!(query.site, Some(SiteRef::Domain("example.com".to_owned())));
        assert_eq!(query.dimensions[1], Dimension::Time(Some(Grain::Day)));
        assert_eq!(query.order_by[1], (OrderField::Dimension(1), Direction::Asc));
        assert_eq!((query.limit, query.offset), (5, 10));
        assert_eq!(query.include.comparisons, Some(Comparison::PreviousPeriod));
        let Filter::Not(inner) = &query.filters[1] else { panic!("not") };
        let Filter::Condition(condition) = inner.as_ref() else { panic!("condition") };
        assert!(!condition.case_sensitive);
        let named = |range: &str| parse(&json!({"metrics": ["visits"], "date_range": range})).expect(range).date_range;
        assert_eq!(named("28d"), DateRange::Days(28));
        assert_eq!(named("6mo"), DateRange::Months(6));
        assert_eq!(named("24h"), DateRange::Hours24);
        assert_eq!(named("all"), DateRange::All);
        let dated = parse(&json!({"site_id": 3, "metrics": ["visits"], "date_range": ["2024-01-01", "2024-01-31"]}));
        assert!(matches!(dated.expect("dates").date_range, DateRange::Dates(_, _)));
        let timed =
            parse(&json!({"metrics": ["visits"], "date_range": ["2024-01-01T00:00:00+01:00", "2024-01-01T12:00:00Z"]}));
        assert!(matches!(timed.expect("instants").date_range, DateRange::Instants(_, _)));
    }

    #[test]
    fn refuses_bad_queries_naming_the_field() {
        let base = || json!({"site_id": "a.com", "metrics": ["visitors"], "date_range": "7d"});
        let with = |key: &str, value: Value| {
            let mut body = base();
            body[key] = value;
            body
        };
        let cases: Vec<(Value, &str, &str)> = vec![
            (with("metrics", json!(["visitorz"])), "metrics", "Invalid metric \"visitorz\""),
            (with("metrics", json!([])), "metrics", "at least one"),
            (with("metrics", json!(["visits", "visits"])), "metrics", "unique"),
            (with("dimensions", json!(["visit:nope"])), "dimensions", "Invalid dimension \"visit:nope\""),
            (with("dimensions", json!(["time:day", "time:hour"])), "dimensions", "one time dimension"),
            (with("dimensions", json!(["event:props:"])), "dimensions", "Invalid dimension"),
            (with("dimensions", json!(["a", "b", "c", "d", "e"])), "dimensions", "at most 4"),
            (with("date_range", json!("8x")), "date_range", "Invalid date range \"8x\""),
            (with("date_range", json!("0d")), "date_range", "Invalid date range"),
            (with("date_range", json!("5001d")), "date_range", "Invalid date range"),
            (with("date_range", json!("101mo")), "date_range", "Invalid date range"),
            (with("date_range", json!(["2024-02-01", "2024-01-01"])), "date_range", "after"),
            (with("date_range", json!(["2024-02-30", "2024-03-01"])), "date_range", "Invalid date range"),
            (with("date_range", json!(["2024-01-01T00:00:00", "2024-01-02T00:00:00"])), "date_range", "offset"),
            (with("date_range", json!(["yesterday", "today"])), "date_range", "Invalid date range"),
            (with("date_range", json!(["0001-01-01", "9999-12-31"])), "date_range", "1970-01-01 or later"),
            (with("date_range", json!(["1970-01-01", "9999-12-31"])), "date_range", "at most 36600 days"),
            (
                with("filters", json!([["matches", "event:page", ["^/a"], {"case_sensitive": false}]])),
                "filters[0]",
                "does not go with matches",
            ),
            (with("include", json!({"time_labels": true})), "include", "requires a time dimension"),
            (with("filters", json!([["equals", "visit:country", ["US"]]])), "filters[0]", "Unknown operator 'equals'"),
            (with("filters", json!([["is", "visit:planet", ["Mars"]]])), "filters[0]", "Invalid filter dimension"),
            (with("filters", json!([["is", "time:day", ["2024-01-01"]]])), "filters[0]", "date_range instead"),
            (with("filters", json!([["is", "visit:country", "US"]])), "filters[0]", "must be an array"),
            (with("filters", json!([["matches", "event:page", ["(unclosed"]]])), "filters[0]", "is invalid"),
            (with("filters", json!([["matches", "event:page", ["a{1000}{1000}"]]])), "filters[0]", "too costly"),
            (
                with("filters", json!([["and", [["is", "visit:os", ["Mac"]], ["oops"]]]])),
                "filters[0][1][1]",
                "Unknown operator 'oops'",
            ),
            (
                with("filters", json!([["has_done", ["is", "visit:country", ["DE"]]]])),
                "filters[0]",
                "only be used with event dimension filters",
            ),
            (
                with("filters", json!([["has_done", ["not", ["has_not_done", ["is", "event:page", ["/a"]]]]]])),
                "filters[0]",
                "cannot be nested",
            ),
            (with("order_by", json!([["pageviews", "desc"]])), "order_by", "not a metric or dimension"),
            (with("order_by", json!([["visitors", "up"]])), "order_by", "asc or desc"),
            (with("pagination", json!({"limit": 0})), "pagination", "between 1 and"),
            (with("include", json!({"comparisons": {"mode": "last_week"}})), "include", "comparisons.mode"),
            (with("include", json!({"colours": true})), "include", "not an include option"),
            (with("colour", json!("red")), "colour", "not a query field"),
            (
                json!({"metrics": ["bounce_rate"], "date_range": "7d", "dimensions": ["event:page"]}),
                "metrics",
                "Session metric(s) `bounce_rate` cannot be queried along with event dimension(s) `event:page`",
            ),
            (with("metrics", json!(["conversion_rate"])), "metrics", "event:goal"),
            (
                json!({"metrics": ["clicks"], "date_range": "7d", "dimensions": ["event:page"]}),
                "metrics",
                "Metric `clicks` goes only with",
            ),
            (json!({"metrics": ["visits"]}), "date_range", "is required"),
            (json!([1, 2]), "query", "JSON object"),
        ];
        for (body, field, reason) in cases {
            let (got_field, message) = refused(body.clone());
            assert_eq!(got_field, field, "{body}: {message}");
            assert!(message.contains(reason), "{body}: {message:?} should say {reason:?}");
        }
    }
}
