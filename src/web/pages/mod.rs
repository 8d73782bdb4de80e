//! The web app's pages as one table, like the REST routes: each row names
//! its path, its GraphQL document, where its site and object id come from,
//! the query parameters it takes and the function that renders it. One
//! generic handler (`frame`) serves every row.

mod account;
mod alerts;
mod hooks;
mod leads;
mod link;
mod link_form;
mod links;
mod live;
mod overview;
mod parts;
mod session;
mod settings;
mod talk;
mod team;
pub mod visitor;
mod visitor_view;

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    forms::{Form, FormState},
    layout::{Layout, Section},
};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
};

macro_rules! document {
    ($name:literal) => {
        concat!(include_str!(concat!("../documents/", $name, ".graphql")), include_str!("../documents/frame.graphql"))
    };
}

/// Where a page's site comes from when the address has no `?site=`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SiteFrom {
    /// The signed-in user's current site.
    Current,
    /// The most recently active readable site that has the page's visitor,
    /// so the links in webhook payloads work without a site.
    Visitor,
    /// The site of the page's link.
    Link,
    /// The current site, and the page works without one (settings, where
    /// the first site is made).
    CurrentOrNone,
}

/// Where a page's object id comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum IdFrom {
    /// The `{id}` path segment.
    Path,
    /// A required query parameter.
    Query(&'static str),
}

/// A query parameter and how it fills the document's variables; a value it
/// cannot take is a 400 page.
pub struct Param {
    pub name: &'static str,
    pub fill: fn(Option<&str>, &mut Map<String, Value>) -> AppResult<()>,
}

/// What a render function knows besides the document's answer.
pub struct PageInput {
    /// 0 when the page works without a site and there is none.
    pub site_id: i64,
    pub has_site: bool,
    /// `site=N` when the address chose the site, to keep it in links.
    pub site_query: Option<String>,
    pub query: HashMap<String, String>,
    pub now: i64,
    /// What a form of the page's forms table just did.
    pub form: FormState,
    /// The org the page is about and the viewer's role in it, for pages
    /// that show only the actions the role allows.
    pub access: Option<Access>,
    pub base_url: String,
}

/// The org of the page's site (else the viewer's primary org) and the
/// viewer's role in it. The server checks every action anyway; this only
/// decides which buttons are shown.
#[derive(Clone)]
pub struct Access {
    pub org_id: String,
    pub role: Role,
}

impl PageInput {
    /// `path`, with `?site=N` when the address chose the site, for links
    /// and forms that keep it.
    pub fn with_site(&self, path: &str) -> String {
        match &self.site_query {
            Some(query) => format!("{path}?{query}"),
            None => path.to_owned(),
        }
    }

    /// The viewer's role, viewer when unknown.
    pub fn role(&self) -> Role {
        self.access.as_ref().map_or(Role::Viewer, |access| access.role)
    }
}

impl PageInput {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str).filter(|value| !value.is_empty())
    }
}

/// Fills the template from the answer (the frame's fields already taken out).
pub type Render = fn(Layout, &PageInput, Value) -> AppResult<String>;

pub struct Page {
    pub path: &'static str,
    pub document: &'static str,
    /// The navigation entry it belongs to; pages about one object have none.
    pub section: Option<Section>,
    pub site: SiteFrom,
    pub id: Option<IdFrom>,
    pub params: &'static [Param],
    pub render: Render,
    /// Whether the page needs the viewer's org and role (`PageInput::access`,
    /// and the document variables `orgId`, `orgMember`, `orgAdmin`).
    pub access: bool,
    /// The forms posted to the page's path.
    pub forms: &'static [Form],
}

/// `range`: passed on; the document's fields accept `24h`, `7d` or `30d`
/// (the leads list also `all`) and refuse the rest with VALIDATION_ERROR.
const RANGE: Param = Param {
    name: "range",
    fill: |raw, variables| {
        variables.insert("range".to_owned(), raw.map_or(Value::Null, |text| Value::String(text.to_owned())));
        Ok(())
    },
};

/// A checkbox: absent, empty, `0` or `false` is off; `1`, `on` or `true` is on.
pub fn flag(name: &str, raw: Option<&str>) -> AppResult<bool> {
    match raw.map(str::trim) {
        None | Some("" | "0" | "false") => Ok(false),
        Some("1" | "on" | "true") => Ok(true),
        Some(_) => Err(AppError::validation(name, "must be 1 or 0")),
    }
}

pub const OVERVIEW: Page = Page {
    path: "/",
    document: document!("overview"),
    section: Some(Section::Overview),
    site: SiteFrom::Current,
    id: None,
    params: &[RANGE],
    render: overview::render,
    access: false,
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
    access: false,
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
    access: false,
    forms: &[],
};

pub const VISITOR: Page = Page {
    path: "/visitor/{id}",
    document: document!("visitor"),
    section: None,
    site: SiteFrom::Visitor,
    id: Some(IdFrom::Path),
    params: &[],
    render: visitor::render,
    access: true,
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
    access: false,
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
    access: false,
    forms: &[],
};

pub const LINKS: Page = Page {
    path: "/links",
    document: document!("links"),
    section: Some(Section::Links),
    site: SiteFrom::Current,
    id: None,
    params: &links::PARAMS,
    render: links::render,
    access: true,
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
    access: true,
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
    access: true,
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
    access: true,
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
    access: true,
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
    access: true,
    forms: &alerts::FORMS,
};

pub const ACCOUNT: Page = Page {
    path: "/settings/account",
    document: document!("account"),
    section: Some(Section::Settings),
    site: SiteFrom::CurrentOrNone,
    id: None,
    params: &[],
    render: account::render,
    access: true,
    forms: &account::FORMS,
};

pub const PAGES: [&Page; 13] =
    [&OVERVIEW, &LIVE, &LEADS, &VISITOR, &SESSION, &TALK, &LINKS, &LINK, &SETTINGS, &TEAM, &HOOKS, &ALERTS, &ACCOUNT];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_take_checkbox_values_and_refuse_the_rest() {
        let cases = [
            (None, Ok(false)),
            (Some(""), Ok(false)),
            (Some("0"), Ok(false)),
            (Some("on"), Ok(true)),
            (Some("1"), Ok(true)),
            (Some("true"), Ok(true)),
            (Some("yes please"), Err(())),
        ];
        for (raw, expected) in cases {
            assert_eq!(flag("hot", raw).map_err(|_| ()), expected, "{raw:?}");
        }
    }

    #[test]
    fn every_page_document_names_the_frame_fragment_once() {
        for page in PAGES {
            assert_eq!(page.document.matches("fragment Frame on Query").count(), 1, "{}", page.path);
            assert!(page.document.contains("...Frame"), "{}", page.path);
        }
    }
}
