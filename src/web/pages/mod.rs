//! The web app's pages as one table, like the REST routes: each row names
//! its path, its GraphQL document, where its site and object id come from,
//! the query parameters it takes and the function that renders it. One
//! generic handler (`frame`) serves every row.

mod account;
mod accounts;
mod alerts;
mod explorer_view;
mod funnels;
mod goals;
mod hooks;
mod leads;
mod leads_views;
mod link;
mod link_form;
mod links;
mod live;
mod overview;
mod page;
mod pager;
mod parts;
mod revenue_view;
mod session;
mod settings;
mod talk;
mod team;
pub mod visitor;
mod visitor_view;

use serde_json::Value;

use crate::error::AppResult;

pub use self::page::{Access, FILTER, IdFrom, Page, PageInput, Param, SiteFrom};
use super::layout::Section;

macro_rules! document {
    ($name:literal) => {
        concat!(include_str!(concat!("../documents/", $name, ".graphql")), include_str!("../documents/frame.graphql"))
    };
}

/// `range`: passed on; the document's fields accept `24h`, `7d` or `30d`
/// (the leads list also `all`) and refuse the rest with VALIDATION_ERROR.
const RANGE: Param = Param {
    name: "range",
    label: "",
    fill: |raw, variables| {
        variables.insert("range".to_owned(), raw.map_or(Value::Null, |text| Value::String(text.to_owned())));
        Ok(())
    },
};

/// One part of the explorer's input (`$explorer`), from the parameter of the same name.
fn explorer_part(
    name: &'static str,
    raw: Option<&str>,
    variables: &mut serde_json::Map<String, Value>,
) -> AppResult<()> {
    let input = variables.entry("explorer").or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Value::Object(input) = input {
        // Filled without a value (a refused one taken back) leaves the part out.
        match raw {
            Some(raw) => input.insert(name.to_owned(), Value::String(raw.to_owned())),
            None => input.remove(name),
        };
    }
    Ok(())
}

/// The explorer's parameters, each a part of its input; the range also
/// picks the hottest leads' window (the list's own ranges, else 30 days).
const EXPLORER_PARAMS: [Param; 6] = [
    Param {
        name: "range",
        label: "Range",
        fill: |raw, variables| {
            explorer_part("range", raw, variables)?;
            let leads = raw.filter(|range| ["24h", "7d", "30d", "all"].contains(range)).unwrap_or("30d");
            variables.insert("leadsRange".to_owned(), Value::String(leads.to_owned()));
            Ok(())
        },
    },
    Param { name: "from", label: "From", fill: |raw, variables| explorer_part("from", raw, variables) },
    Param { name: "to", label: "To", fill: |raw, variables| explorer_part("to", raw, variables) },
    Param { name: "compare", label: "Compare", fill: |raw, variables| explorer_part("compare", raw, variables) },
    Param { name: "filters", label: "Filters", fill: |raw, variables| explorer_part("filters", raw, variables) },
    Param { name: "panel", label: "", fill: |raw, variables| explorer_part("panel", raw, variables) },
];

pub const OVERVIEW: Page = Page {
    path: "/",
    document: document!("overview"),
    section: Some(Section::Overview),
    site: SiteFrom::Current,
    id: None,
    params: &EXPLORER_PARAMS,
    render: overview::render,
    forms: &[],
};

pub const LIVE: Page = Page {
    path: "/live",
    document: document!("live"),
    section: Some(Section::Live),
    site: SiteFrom::Current,
    id: None,
    params: &[],
    render: live::render,
    forms: &[],
};

pub const LEADS: Page = Page {
    path: "/leads",
    document: document!("leads"),
    section: Some(Section::Leads),
    site: SiteFrom::Current,
    id: None,
    params: &leads::PARAMS,
    render: leads::render,
    forms: &leads_views::FORMS,
};

pub const ACCOUNTS: Page = Page {
    path: "/accounts",
    document: document!("accounts"),
    section: Some(Section::Accounts),
    site: SiteFrom::Current,
    id: None,
    params: &accounts::PARAMS,
    render: accounts::render_list,
    forms: &[],
};

pub const ACCOUNT_DETAIL: Page = Page {
    path: "/accounts/{id}",
    document: document!("account_detail"),
    section: None,
    site: SiteFrom::Current,
    id: Some(IdFrom::Path),
    params: &[],
    render: accounts::render_one,
    forms: &accounts::FORMS,
};

pub const VISITOR: Page = Page {
    path: "/visitor/{id}",
    document: document!("visitor"),
    section: None,
    site: SiteFrom::Visitor,
    id: Some(IdFrom::Path),
    params: &[],
    render: visitor::render,
    forms: &visitor::FORMS,
};

pub const SESSION: Page = Page {
    path: "/session/{id}",
    document: document!("session"),
    section: None,
    site: SiteFrom::Current,
    id: Some(IdFrom::Path),
    params: &[],
    render: session::render,
    forms: &[],
};

pub const TALK: Page = Page {
    path: "/talk/incoming",
    document: document!("talk"),
    section: None,
    site: SiteFrom::Visitor,
    id: Some(IdFrom::Query("visitor")),
    params: &[],
    render: talk::render,
    forms: &[],
};

pub const FUNNELS: Page = Page {
    path: "/funnels",
    document: document!("funnels"),
    section: Some(Section::Funnels),
    site: SiteFrom::Current,
    id: None,
    params: &funnels::PARAMS,
    render: funnels::render,
    forms: &funnels::FORMS,
};

pub const LINKS: Page = Page {
    path: "/links",
    document: document!("links"),
    section: Some(Section::Links),
    site: SiteFrom::Current,
    id: None,
    params: &links::PARAMS,
    render: links::render,
    forms: &links::FORMS,
};

pub const LINK: Page = Page {
    path: "/links/{id}",
    document: document!("link"),
    section: None,
    site: SiteFrom::Link,
    id: Some(IdFrom::Path),
    params: &[RANGE],
    render: link::render,
    forms: &link::FORMS,
};

pub const SETTINGS: Page = Page {
    path: "/settings",
    document: document!("settings"),
    section: Some(Section::Settings),
    site: SiteFrom::CurrentOrNone,
    id: None,
    params: &[],
    render: settings::render,
    forms: &settings::FORMS,
};

pub const TEAM: Page = Page {
    path: "/settings/team",
    document: document!("team"),
    section: Some(Section::Settings),
    site: SiteFrom::CurrentOrNone,
    id: None,
    params: &[],
    render: team::render,
    forms: &team::FORMS,
};

pub const HOOKS: Page = Page {
    path: "/settings/webhooks",
    document: document!("hooks"),
    section: Some(Section::Settings),
    site: SiteFrom::CurrentOrNone,
    id: None,
    params: &[],
    render: hooks::render,
    forms: &hooks::FORMS,
};

pub const ALERTS: Page = Page {
    path: "/settings/alerts",
    document: document!("alerts"),
    section: Some(Section::Settings),
    site: SiteFrom::Current,
    id: None,
    params: &[],
    render: alerts::render,
    forms: &alerts::FORMS,
};

pub const GOALS: Page = Page {
    path: "/settings/goals",
    document: document!("goals"),
    section: Some(Section::Settings),
    site: SiteFrom::Current,
    id: None,
    params: &[],
    render: goals::render,
    forms: &goals::FORMS,
};

pub const ACCOUNT: Page = Page {
    path: "/settings/account",
    document: document!("account"),
    section: Some(Section::Settings),
    site: SiteFrom::CurrentOrNone,
    id: None,
    params: &[],
    render: account::render,
    forms: &account::FORMS,
};

pub const PAGES: [&Page; 17] = [
    &OVERVIEW,
    &LIVE,
    &LEADS,
    &ACCOUNTS,
    &ACCOUNT_DETAIL,
    &VISITOR,
    &SESSION,
    &TALK,
    &FUNNELS,
    &LINKS,
    &LINK,
    &SETTINGS,
    &TEAM,
    &HOOKS,
    &ALERTS,
    &GOALS,
    &ACCOUNT,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_document_names_the_frame_fragment_once() {
        for page in PAGES {
            assert_eq!(page.document.matches("fragment Frame on Query").count(), 1, "{}", page.path);
            assert!(page.document.contains("...Frame"), "{}", page.path);
        }
    }

    /// One run per page: the document itself asks which site and org it is
    /// about, naming its visitor or link when the row says the site comes
    /// from one.
    #[test]
    fn every_page_document_answers_its_own_site_and_access() {
        for page in PAGES {
            assert_eq!(page.document.matches("workspace(siteId: $siteId").count(), 1, "{}", page.path);
            assert!(page.document.contains("...Place"), "{}", page.path);
            let names = |needle: &str| page.document.contains(needle);
            match page.site {
                SiteFrom::Visitor => assert!(names("trackerVid: $id"), "{}", page.path),
                SiteFrom::Link => assert!(names("linkId: $id"), "{}", page.path),
                SiteFrom::Current | SiteFrom::CurrentOrNone => {
                    assert!(!names("trackerVid:") && !names("linkId:"), "{}", page.path)
                }
            }
        }
    }
}
