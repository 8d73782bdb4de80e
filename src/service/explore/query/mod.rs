//! What Explore is asked (design §17), in Plausible's Stats API v2 shapes:
//! metrics, dimensions, filters, a date range, order, what to include and a
//! page. Parsing is pure: a body that names an unknown metric, joins a
//! metric with a dimension it cannot go with, or holds a bad regex is
//! refused with the field at fault and the reason, before any SQL.

mod filter;
mod parse;
#[cfg(test)]
mod tests;

pub use filter::{Condition, Filter, Operator};
pub use parse::{MAX_SPAN_DAYS, clicks_can_split, parse, parse_date_range};

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
