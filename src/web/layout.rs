//! What every page's frame shows: the title, the navigation, the site
//! switcher and who is signed in.

use serde::Deserialize;

use super::assets;

pub struct Layout {
    pub title: String,
    pub css: &'static str,
    pub favicon: &'static str,
    pub app_js: &'static str,
    /// Set on pages that stream (`/live`).
    pub live_js: Option<&'static str>,
    /// The signed-in frame; `None` on the sign-in forms and bare error pages.
    pub frame: Option<Frame>,
}

pub struct Frame {
    pub user: String,
    pub nav: Vec<NavLink>,
    /// The site's saved views of the lead desk.
    pub views: Vec<ViewLink>,
    pub sites: Vec<SiteOption>,
    /// Where switching the site leads: the same list page, or the overview
    /// from a page about one visitor or session.
    pub switch_next: String,
}

pub struct NavLink {
    pub href: String,
    pub label: &'static str,
    pub current: bool,
}

/// A saved view of the lead desk in the navigation.
pub struct ViewLink {
    pub href: String,
    pub label: String,
    pub current: bool,
}

/// A saved view as the page's `workspace { savedViews }` answers it.
#[derive(Deserialize)]
pub struct SavedViewData {
    pub id: String,
    pub name: String,
    pub query: String,
}

/// `/leads` showing a saved view: its query, the view's id, and the site
/// when the address chose it.
pub fn view_href(id: &str, query: &str, site_query: Option<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !query.is_empty() {
        parts.push(query.to_owned());
    }
    parts.push(format!("view={}", super::nav::encode(id)));
    if let Some(site) = site_query {
        parts.push(site.to_owned());
    }
    format!("/leads?{}", parts.join("&"))
}

pub struct SiteOption {
    pub id: i64,
    pub label: String,
    pub selected: bool,
}

/// The navigation's sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Overview,
    Live,
    Leads,
    Accounts,
    Funnels,
    Links,
    Settings,
}

const SECTIONS: [(Section, &str, &str); 7] = [
    (Section::Overview, "/", "Overview"),
    (Section::Live, "/live", "Live"),
    (Section::Leads, "/leads", "Leads"),
    (Section::Accounts, "/accounts", "Accounts"),
    (Section::Funnels, "/funnels", "Funnels"),
    (Section::Links, "/links", "Links"),
    (Section::Settings, "/settings", "Settings"),
];

/// The part of every page document the frame reads (`fragment Frame`).
#[derive(Deserialize, Default)]
pub struct FrameData {
    #[serde(default)]
    pub viewer: Option<ViewerData>,
    #[serde(default)]
    pub sites: Vec<SiteData>,
}

#[derive(Deserialize)]
pub struct ViewerData {
    pub name: String,
    pub email: String,
}

#[derive(Deserialize)]
pub struct SiteData {
    pub id: i64,
    pub name: String,
    pub domain: String,
}

impl Layout {
    /// A page without the signed-in frame.
    pub fn bare(title: impl Into<String>) -> Layout {
        Layout {
            title: title.into(),
            css: &assets::CSS,
            favicon: &assets::FAVICON,
            app_js: &assets::APP_JS,
            live_js: None,
            frame: None,
        }
    }

    /// A signed-in page. `site_query` is `site=N` when the view's site was
    /// chosen in the address, so the navigation keeps it.
    pub fn framed(
        title: impl Into<String>,
        data: FrameData,
        current: Option<Section>,
        site: Option<i64>,
        site_query: Option<&str>,
        switch_next: String,
    ) -> Layout {
        let user = data.viewer.map(|viewer| if viewer.name.trim().is_empty() { viewer.email } else { viewer.name });
        let nav = SECTIONS
            .iter()
            .map(|(section, path, label)| NavLink {
                href: match site_query {
                    Some(query) => format!("{path}?{query}"),
                    None => (*path).to_owned(),
                },
                label,
                current: current == Some(*section),
            })
            .collect();
        let sites = data
            .sites
            .into_iter()
            .map(|s| SiteOption {
                selected: Some(s.id) == site,
                label: if s.name == s.domain { s.name } else { format!("{} ({})", s.name, s.domain) },
                id: s.id,
            })
            .collect();
        let frame = Frame { user: user.unwrap_or_default(), nav, views: Vec::new(), sites, switch_next };
        Layout { frame: Some(frame), ..Layout::bare(title) }
    }

    /// Lists the site's saved views in the navigation; `current` is the
    /// view the leads page shows.
    pub fn add_views(&mut self, views: Vec<SavedViewData>, site_query: Option<&str>, current: Option<&str>) {
        if let Some(frame) = &mut self.frame {
            frame.views = views
                .into_iter()
                .map(|view| ViewLink {
                    href: view_href(&view.id, &view.query, site_query),
                    current: current == Some(view.id.as_str()),
                    label: view.name,
                })
                .collect();
        }
    }
}
