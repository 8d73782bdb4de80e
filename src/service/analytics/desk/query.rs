//! What the lead desk is asked: the filters, sort and page of a query,
//! checked and normalized from what the caller typed. Pure: the SQL that
//! answers it is `select`.

use super::super::{TimeRange, visitors};
pub use crate::service::path_pattern::PathPattern;
use crate::{
    enrich::source::CHANNELS,
    error::{AppError, AppResult},
};

/// The longest search text; longer is refused, not cut.
pub const MAX_SEARCH_LEN: usize = 200;
/// Deeper pages than this are refused: a cursor or page is a position, not a key.
pub const MAX_OFFSET: usize = 1_000_000;
/// The last page number any page size can reach within `MAX_OFFSET`.
pub const MAX_PAGE: i64 = (MAX_OFFSET as u64 / visitors::MAX_LIMIT) as i64 + 1;

/// What the list is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    #[default]
    Score,
    LastSeen,
    Pageviews,
    Time,
    Sessions,
}

impl SortKey {
    pub const NAMES: [&'static str; 5] = ["score", "last_seen", "pageviews", "time", "sessions"];

    pub fn parse(raw: Option<&str>) -> AppResult<Self> {
        Ok(match raw.map(str::trim).unwrap_or("") {
            "" | "score" => SortKey::Score,
            "last_seen" => SortKey::LastSeen,
            "pageviews" => SortKey::Pageviews,
            "time" => SortKey::Time,
            "sessions" => SortKey::Sessions,
            _ => return Err(AppError::validation("sort", format!("must be one of {}", Self::NAMES.join(", ")))),
        })
    }
}

/// `desc` (the default: most first) or `asc`.
pub fn parse_descending(raw: Option<&str>) -> AppResult<bool> {
    match raw.map(str::trim).unwrap_or("") {
        "" | "desc" => Ok(true),
        "asc" => Ok(false),
        _ => Err(AppError::validation("order", "must be asc or desc")),
    }
}

/// The narrowing a salesperson asks for; empty narrows nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeskFilter {
    /// Part of a name, email, company, user id or visitor id, any case.
    pub search: Option<String>,
    /// `identified` or `anonymous`.
    pub status: Option<String>,
    /// An ISO country code.
    pub country: Option<String>,
    /// The channel of the latest visit (last touch), one of `CHANNELS`.
    pub channel: Option<String>,
    /// The campaign (`utm_campaign`) of the latest visit, exactly.
    pub campaign: Option<String>,
    /// The slug of a tracking link the visitor clicked.
    pub link: Option<String>,
    /// The key of the visitor's account (design §18), such as `acme.com`.
    pub account: Option<String>,
    /// Pages the visitor viewed (in the list's range): a path where `*`
    /// stands for any run of characters.
    pub visited: Option<PathPattern>,
    /// Only visitors who submitted a form.
    pub form: bool,
    /// Only visitors whose score (recency included) reaches this.
    pub min_score: Option<i32>,
}

/// What the caller typed, before it is checked; every part optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeskInput<'a> {
    pub search: Option<&'a str>,
    pub status: Option<&'a str>,
    pub country: Option<&'a str>,
    pub channel: Option<&'a str>,
    pub campaign: Option<&'a str>,
    pub link: Option<&'a str>,
    pub account: Option<&'a str>,
    pub visited: Option<&'a str>,
    pub form: bool,
    pub min_score: Option<i64>,
}

/// The longest campaign, link slug or page pattern taken as a filter.
pub const MAX_FILTER_LEN: usize = 200;

impl DeskFilter {
    /// Checks and normalizes what the caller typed.
    pub fn new(input: DeskInput<'_>) -> AppResult<Self> {
        let text = |raw: Option<&str>| raw.map(str::trim).filter(|text| !text.is_empty()).map(str::to_owned);
        let bounded = |field: &str, raw: Option<&str>, most: usize| -> AppResult<Option<String>> {
            let value = text(raw);
            if value.as_ref().is_some_and(|value| value.chars().count() > most) {
                return Err(AppError::validation(field, format!("must be at most {most} characters")));
            }
            Ok(value)
        };
        let search = bounded("search", input.search, MAX_SEARCH_LEN)?;
        let status = text(input.status);
        if let Some(status) = &status
            && status != "identified"
            && status != "anonymous"
        {
            return Err(AppError::validation("status", "must be identified or anonymous"));
        }
        let country = text(input.country).map(|code| code.to_ascii_uppercase());
        if country.as_ref().is_some_and(|code| code.len() != 2 || !code.chars().all(|c| c.is_ascii_uppercase())) {
            return Err(AppError::validation("country", "must be a two-letter country code"));
        }
        let channel = match text(input.channel) {
            None => None,
            Some(typed) => {
                Some(CHANNELS.iter().find(|name| **name == typed).map(|name| (*name).to_owned()).ok_or_else(|| {
                    AppError::validation("channel", format!("must be one of {}", CHANNELS.join(", ")))
                })?)
            }
        };
        let campaign = bounded("campaign", input.campaign, MAX_FILTER_LEN)?;
        let link = bounded("link", input.link, MAX_FILTER_LEN)?;
        // Account keys are stored in lower case.
        let account = bounded("account", input.account, MAX_FILTER_LEN)?.map(|key| key.to_lowercase());
        let visited = bounded("visited", input.visited, MAX_FILTER_LEN)?
            .map(|typed| PathPattern::parse("visited", typed))
            .transpose()?;
        let min_score = match input.min_score {
            None => None,
            Some(score @ 0..=100) => Some(score as i32),
            Some(_) => return Err(AppError::validation("minScore", "must be between 0 and 100")),
        };
        Ok(DeskFilter {
            search,
            status,
            country,
            channel,
            campaign,
            link,
            account,
            visited,
            form: input.form,
            min_score,
        })
    }

    pub fn is_empty(&self) -> bool {
        *self == DeskFilter::default()
    }

    /// Where this filter's total is counted without reading visitors, when
    /// it can be: a country and a status from `visitor_hours`; a last
    /// touch's channel, campaign and form and a status from
    /// `visitor_touch_hours`; `visited` alone from the page index, `link`
    /// alone from the link index.
    pub fn total_from(&self) -> Option<TotalFrom<'_>> {
        if let Some(pattern) = &self.visited {
            let rest = DeskFilter { visited: None, ..self.clone() };
            return rest.is_empty().then_some(TotalFrom::PageViewers(pattern));
        }
        if let Some(slug) = &self.link {
            let rest = DeskFilter { link: None, ..self.clone() };
            return rest.is_empty().then_some(TotalFrom::LinkClickers(slug));
        }
        let rest =
            DeskFilter { country: None, status: None, channel: None, campaign: None, form: false, ..self.clone() };
        if !rest.is_empty() {
            return None;
        }
        let status = self.status.as_deref();
        let touched = self.channel.is_some() || self.campaign.is_some() || self.form;
        match (self.country.as_deref(), touched) {
            (country, false) => Some(TotalFrom::Country { country, status }),
            (None, true) => Some(TotalFrom::Touch {
                channel: self.channel.as_deref(),
                campaign: self.campaign.as_deref(),
                form: self.form,
                status,
            }),
            // No rollup holds a country beside a last touch.
            (Some(_), true) => None,
        }
    }
}

/// Where a filter's total is counted, each part only when given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TotalFrom<'a> {
    /// The hourly rollups by country (and identified).
    Country { country: Option<&'a str>, status: Option<&'a str> },
    /// The hourly rollups by last touch (and identified).
    Touch { channel: Option<&'a str>, campaign: Option<&'a str>, form: bool, status: Option<&'a str> },
    /// The visitors of the pages matching, from the page index.
    PageViewers(&'a PathPattern),
    /// The visitors who clicked the link with this slug, from the link index.
    LinkClickers(&'a str),
}

/// One page of the desk's list.
pub struct DeskQuery {
    pub site_id: i64,
    pub range: TimeRange,
    pub bots: bool,
    pub hot: bool,
    pub filter: DeskFilter,
    pub sort: SortKey,
    pub descending: bool,
    pub limit: u64,
    pub offset: u64,
}

impl DeskQuery {
    /// Whether the plain scored list answers it (the fast path).
    pub fn is_plain(&self) -> bool {
        self.filter.is_empty() && self.sort == SortKey::Score && self.descending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_checked_and_normalized() {
        let typed = DeskInput {
            search: Some("  acme "),
            status: Some("identified"),
            country: Some("de"),
            channel: Some(" Paid Search "),
            campaign: Some(" spring "),
            link: Some("ad-1"),
            account: Some(" Acme.COM "),
            visited: Some("/pricing*"),
            form: true,
            min_score: Some(40),
        };
        let ok = DeskFilter::new(typed).unwrap();
        assert_eq!(ok.search.as_deref(), Some("acme"));
        assert_eq!(ok.country.as_deref(), Some("DE"));
        assert_eq!(ok.channel.as_deref(), Some("Paid Search"));
        assert_eq!(ok.campaign.as_deref(), Some("spring"));
        assert_eq!(ok.account.as_deref(), Some("acme.com"));
        assert_eq!(ok.visited.as_ref().map(PathPattern::as_str), Some("/pricing*"));
        let blank = DeskInput { search: Some("  "), country: Some(""), channel: Some(" "), ..DeskInput::default() };
        assert!(DeskFilter::new(blank).unwrap().is_empty());
        let long = "x".repeat(MAX_SEARCH_LEN + 1);
        let input = DeskInput::default();
        let refused = [
            (DeskFilter::new(DeskInput { status: Some("hot"), ..input }), "status"),
            (DeskFilter::new(DeskInput { country: Some("Germany"), ..input }), "country"),
            (DeskFilter::new(DeskInput { channel: Some("Carrier pigeon"), ..input }), "channel"),
            (DeskFilter::new(DeskInput { channel: Some("paid search"), ..input }), "channel"),
            (DeskFilter::new(DeskInput { visited: Some("pricing"), ..input }), "visited"),
            (DeskFilter::new(DeskInput { campaign: Some(&long), ..input }), "campaign"),
            (DeskFilter::new(DeskInput { min_score: Some(101), ..input }), "minScore"),
            (DeskFilter::new(DeskInput { min_score: Some(-1), ..input }), "minScore"),
            (DeskFilter::new(DeskInput { search: Some(&long), ..input }), "search"),
        ];
        for (result, field) in refused {
            assert_eq!(result.err().and_then(|err| err.field), Some(field.to_owned()), "{field}");
        }
        assert_eq!(SortKey::parse(Some("time")).unwrap(), SortKey::Time);
        assert_eq!(SortKey::parse(Some("name")).err().and_then(|e| e.field), Some("sort".to_owned()));
        assert!(!parse_descending(Some("asc")).unwrap());
        assert!(parse_descending(Some("up")).is_err());
    }

    #[test]
    fn totals_come_from_a_rollup_or_the_page_index_when_they_can() {
        use TotalFrom::{Country, LinkClickers, PageViewers, Touch};
        let input = DeskInput::default();
        let table: Vec<(DeskInput<'_>, Option<TotalFrom<'_>>)> = vec![
            (input, Some(Country { country: None, status: None })),
            (DeskInput { country: Some("de"), ..input }, Some(Country { country: Some("DE"), status: None })),
            (
                DeskInput { status: Some("anonymous"), ..input },
                Some(Country { country: None, status: Some("anonymous") }),
            ),
            (
                DeskInput { country: Some("FR"), status: Some("identified"), ..input },
                Some(Country { country: Some("FR"), status: Some("identified") }),
            ),
            (
                DeskInput { channel: Some("Direct"), ..input },
                Some(Touch { channel: Some("Direct"), campaign: None, form: false, status: None }),
            ),
            (
                DeskInput { campaign: Some("brand"), form: true, status: Some("identified"), ..input },
                Some(Touch { channel: None, campaign: Some("brand"), form: true, status: Some("identified") }),
            ),
            (
                DeskInput { form: true, ..input },
                Some(Touch { channel: None, campaign: None, form: true, status: None }),
            ),
            (DeskInput { country: Some("FR"), channel: Some("Direct"), ..input }, None),
            (DeskInput { country: Some("FR"), form: true, ..input }, None),
            (DeskInput { status: Some("identified"), min_score: Some(10), ..input }, None),
            (DeskInput { channel: Some("Direct"), search: Some("acme"), ..input }, None),
            (DeskInput { link: Some("ad"), ..input }, Some(LinkClickers("ad"))),
            (DeskInput { link: Some("ad"), status: Some("identified"), ..input }, None),
            (DeskInput { visited: Some("/pricing"), status: Some("identified"), ..input }, None),
            (DeskInput { account: Some("acme.com"), ..input }, None),
        ];
        for (typed, counted) in table {
            let filter = DeskFilter::new(typed).unwrap();
            assert_eq!(filter.total_from(), counted, "{typed:?}");
        }
        let pricing = PathPattern::parse("visited", "/pricing*".to_owned()).unwrap();
        let filter = DeskFilter::new(DeskInput { visited: Some("/pricing*"), ..input }).unwrap();
        assert_eq!(filter.total_from(), Some(PageViewers(&pricing)));
    }
}
