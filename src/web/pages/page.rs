//! What a page is: the row type of the pages table and what its render
//! function is given. A leaf, so the page modules and the table that lists
//! them both depend on it and not on each other.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        forms::{Form, FormState},
        layout::{Layout, Section},
    },
};

/// Where a page's site comes from when the address has no `?site=`. The
/// page's document says it to `workspace` (`trackerVid: $id`, `linkId: $id`);
/// the forms say it to the `Place` document.
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

/// A query parameter and how it fills the document's variables. A value
/// the document refuses is shown beside the page's filter input of that
/// name, under its label, and the page shows what it can without it.
pub struct Param {
    pub name: &'static str,
    /// The filter input's label, for a refusal shown beside it; empty when
    /// the page has no input for it, and a refusal is the error page.
    pub label: &'static str,
    pub fill: fn(Option<&str>, &mut Map<String, Value>) -> AppResult<()>,
}

/// The `action` a refused filter is reported under in `PageInput::form`.
pub const FILTER: &str = "filter";

/// What a render function knows besides the document's answer.
pub struct PageInput {
    /// The site the page shows; `None` only on the pages that work
    /// without one (settings, where the first site is made).
    pub site_id: Option<i64>,
    /// `site=N` when the address chose the site, to keep it in links.
    pub site_query: Option<String>,
    pub query: HashMap<String, String>,
    pub now: i64,
    /// What a form of the page's forms table just did.
    pub form: FormState,
    /// The org the page is about and the viewer's role in it, for pages
    /// that show only the actions the role allows; `None` for a person in
    /// no org.
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

    /// The site the page shows; NOT_FOUND on a page that works without
    /// one and has none.
    pub fn site(&self) -> AppResult<i64> {
        self.site_id.ok_or_else(|| AppError::not_found("site"))
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
    /// The forms posted to the page's path.
    pub forms: &'static [Form],
}
