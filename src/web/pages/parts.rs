//! Pieces several pages show: bars, links to a visitor or a session, tabs.

use serde::Deserialize;

use crate::{
    enrich::geo::country_name,
    web::{chart, format, nav},
};

/// One row of a bar chart: the label is escaped by the template, the width is a number.
pub struct Bar {
    pub label: String,
    pub value: String,
    /// Width of the bar in percent of the largest, as SVG wants it.
    pub width: String,
}

pub fn bars(rows: Vec<(String, i64)>) -> Vec<Bar> {
    let widths = chart::bar_percentages(&rows.iter().map(|(_, value)| *value).collect::<Vec<_>>());
    rows.into_iter()
        .zip(widths)
        .map(|((label, value), width)| Bar { label, value: format::number(value), width: format!("{width:.1}") })
        .collect()
}

/// A figure in the row of totals.
pub struct Card {
    pub label: &'static str,
    pub value: String,
}

/// A titled table of bars.
pub struct BarPanel {
    pub title: &'static str,
    pub label_head: &'static str,
    pub value_head: &'static str,
    pub rows: Vec<Bar>,
    /// The labels are paths, which may wrap anywhere; other labels wrap
    /// between words only.
    pub paths: bool,
}

/// A link in a row of choices (time ranges).
pub struct Tab {
    pub label: &'static str,
    pub href: String,
    pub current: bool,
}

/// The settings pages, as tabs; the chosen site is kept.
pub fn settings_tabs(input: &super::page::PageInput, current: &str) -> Vec<Tab> {
    const PAGES: [(&str, &str); 6] = [
        ("/settings", "Sites"),
        ("/settings/goals", "Goals"),
        ("/settings/team", "Members and API keys"),
        ("/settings/webhooks", "Webhooks"),
        ("/settings/alerts", "Alerts"),
        ("/settings/account", "Account"),
    ];
    PAGES.iter().map(|(path, label)| Tab { label, href: input.with_site(path), current: *path == current }).collect()
}

/// `/visitor/<id>?site=N`.
pub fn visitor_href(site_id: i64, tracker_vid: &str) -> String {
    format!("/visitor/{}?site={site_id}", nav::encode_segment(tracker_vid))
}

/// `/session/<id>?site=N`.
pub fn session_href(site_id: i64, session_id: &str) -> String {
    format!("/session/{}?site={site_id}", nav::encode_segment(session_id))
}

/// `/talk/incoming?visitor=<id>&site=N`.
pub fn talk_href(site_id: i64, tracker_vid: &str) -> String {
    format!("/talk/incoming?visitor={}&site={site_id}", nav::encode(tracker_vid))
}

/// A visitor as every page names them (`person { displayName company }`,
/// the display rule of `service::people`).
#[derive(Deserialize, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub struct Person {
    pub display_name: String,
    pub company: Option<String>,
}

impl Person {
    /// "Ada Lovelace · Acme", for a log line with no room for a second column.
    pub fn with_company(&self) -> String {
        match self.company.as_deref().map(str::trim).filter(|company| !company.is_empty()) {
            Some(company) => format!("{} · {company}", self.display_name),
            None => self.display_name.clone(),
        }
    }
}

/// `City, Country` (the country by name), or what is known of it.
pub fn place(city: Option<&str>, country: Option<&str>) -> String {
    let country = country.map(country_name);
    let parts: Vec<&str> = [city, country].into_iter().flatten().map(str::trim).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() { "Unknown".to_owned() } else { parts.join(", ") }
}

/// A person's picture: their Gravatar image when the site turned Gravatar
/// on and they have one, else their initials, drawn here.
pub struct Avatar {
    pub image: Option<String>,
    pub initials: String,
}

impl Avatar {
    pub fn new(gravatar_on: bool, gravatar_url: Option<String>, person: &Person) -> Avatar {
        let image = gravatar_url.filter(|url| gravatar_on && url.starts_with("https://www.gravatar.com/"));
        Avatar { image, initials: initials(&person.display_name) }
    }
}

/// Up to two capital letters from the first letters of a name's words
/// ("Ada Lovelace" → "AL", "pat@example.com" → "P"); "?" when none is a letter.
pub fn initials(name: &str) -> String {
    let name = name.split('@').next().unwrap_or(name);
    let letters: String = name
        .split(|c: char| c.is_whitespace() || matches!(c, '.' | '_' | '-'))
        .filter_map(|word| word.chars().next())
        .filter(|c| c.is_alphabetic())
        .take(2)
        .flat_map(char::to_uppercase)
        .collect();
    if letters.is_empty() { "?".to_owned() } else { letters }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initials_take_the_first_letters_of_two_words() {
        let table = [
            ("Ada Lovelace", "AL"),
            ("ada king lovelace", "AK"),
            ("pat.smith@example.com", "PS"),
            ("u-42", "U"),
            ("Anonymous 1a2b3c4d", "A"),
            ("Émile Zola", "ÉZ"),
            ("42", "?"),
            ("", "?"),
        ];
        for (name, expected) in table {
            assert_eq!(initials(name), expected, "{name}");
        }
    }

    #[test]
    fn places_name_the_country() {
        assert_eq!(place(Some("Berlin"), Some("DE")), "Berlin, Germany");
        assert_eq!(place(None, Some("GB")), "United Kingdom");
        assert_eq!(place(None, None), "Unknown");
    }
}

/// A Relay connection's nodes.
#[derive(Deserialize)]
pub struct Nodes<T> {
    pub nodes: Vec<T>,
}

/// A labelled fact of a profile or a session.
pub struct Fact {
    pub label: &'static str,
    pub value: String,
}

impl Fact {
    /// Whether the value is a path, which may wrap anywhere (other values
    /// wrap between words).
    pub fn is_path(&self) -> bool {
        self.value.starts_with('/')
    }
}

/// A value that may be a link (only http(s) URLs are).
pub struct MaybeLink {
    pub text: String,
    pub href: Option<String>,
}

impl MaybeLink {
    pub fn url(text: Option<&str>) -> MaybeLink {
        let text = format::or_dash(text);
        MaybeLink { href: format::http_href(&text), text }
    }
}

/// What an event was, for a timeline: the custom event's name, else its kind.
pub fn what(kind: &str, event_name: &str) -> String {
    if kind == "pageview" || event_name.is_empty() { kind.to_owned() } else { event_name.to_owned() }
}

/// An option of a select, as the address has it.
pub struct Choice {
    pub value: &'static str,
    pub label: &'static str,
    pub selected: bool,
}

/// The options of a select, the one the address names selected.
pub fn choices(options: &[(&'static str, &'static str)], current: &str) -> Vec<Choice> {
    options.iter().map(|(value, label)| Choice { value, label, selected: *value == current }).collect()
}

/// The ranges a list of people or companies offers.
pub const LIST_RANGES: [(&str, &str); 4] =
    [("24h", "Last 24 hours"), ("7d", "Last 7 days"), ("30d", "Last 30 days"), ("all", "All time")];
