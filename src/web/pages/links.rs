//! `/links`: the site's tracking links with their click counts, a search
//! and filters (campaign, source, tag, on or off), and the form that
//! creates one. The list is the site's whole `links` answer; the filters
//! narrow it here, so the counts above it stay the site's.

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    link_form::LinkFields,
    page::{PageInput, Param},
};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge, format,
        forms::{self, Done, Form, FormState},
        layout::Layout,
    },
};

/// The filters are read by `render`; none is a document variable.
pub const PARAMS: [Param; 0] = [];

const CREATE_LINK: &str = include_str!("../documents/create_link.graphql");

pub const FORMS: [Form; 1] = [Form {
    action: "create",
    document: CREATE_LINK,
    variables: |input| {
        let mut fields = LinkFields::read(input, true)?;
        fields.insert("siteId".to_owned(), json!(input.site()?));
        Ok(json!({ "input": Value::Object(fields) }))
    },
    inputs: &super::link_form::INPUTS,
    done: Done::Redirect(|input, answer| {
        let id = answer["createLink"]["link"]["id"].as_str().unwrap_or_default();
        let path = format!("/links/{}", crate::web::nav::encode_segment(id));
        forms::back_to(input, &path, "link-created")
    }),
}];

/// The page's reads, under the `workspace` that scopes them.
#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
struct Scoped {
    links: LinkList,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LinkList {
    stats: Stats,
    links: Vec<Link>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stats {
    total_links: i64,
    total_clicks: i64,
    clicks_today: i64,
    top_source: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Link {
    id: String,
    slug: String,
    destination_url: String,
    campaign: String,
    source: String,
    medium: String,
    link_type: String,
    is_active: bool,
    expires_at: Option<String>,
    max_clicks: Option<i64>,
    tags: Vec<String>,
    total_clicks: i64,
    clicks_today: i64,
    last_clicked_at: Option<String>,
    full_url: String,
}

pub struct Row {
    pub href: String,
    pub slug: String,
    pub full_url: String,
    /// An id for the copy button to name.
    pub copy_id: String,
    pub destination: String,
    pub labels: String,
    pub tags: Vec<String>,
    pub state: String,
    pub active: bool,
    pub total: String,
    pub today: String,
    pub last: String,
}

/// The filters as given, to fill the form again.
#[derive(Default)]
pub struct Filters {
    pub q: String,
    pub campaign: String,
    pub source: String,
    pub tag: String,
    pub active: String,
}

pub struct Choice {
    pub value: String,
    pub selected: bool,
}

#[derive(Template)]
#[template(path = "links.html")]
struct LinksPage<'a> {
    layout: Layout,
    site: Option<i64>,
    site_id: i64,
    /// The create form has no stored slug.
    current_slug: &'static str,
    notice: Option<&'static str>,
    can_edit: bool,
    cards: Vec<super::parts::Card>,
    filters: Filters,
    campaigns: Vec<Choice>,
    sources: Vec<Choice>,
    tags: Vec<Choice>,
    shown: String,
    rows: Vec<Row>,
    form: LinkFields,
    state: &'a FormState,
}

fn choices(values: impl Iterator<Item = String>, selected: &str) -> Vec<Choice> {
    let mut values: Vec<String> = values.filter(|value| !value.is_empty()).collect();
    values.sort();
    values.dedup();
    values.into_iter().map(|value| Choice { selected: value == selected, value }).collect()
}

/// Whether a link passes the filters; the search looks at the slug, the
/// destination, the labels and the tags, ignoring case.
fn matches(link: &Link, filters: &Filters) -> AppResult<bool> {
    let query = filters.q.to_lowercase();
    let found = query.is_empty()
        || [&link.slug, &link.destination_url, &link.campaign, &link.source, &link.medium]
            .iter()
            .any(|text| text.to_lowercase().contains(&query))
        || link.tags.iter().any(|tag| tag.to_lowercase().contains(&query));
    let active = match filters.active.as_str() {
        "" => true,
        "on" => link.is_active,
        "off" => !link.is_active,
        _ => return Err(AppError::validation("active", "must be on or off")),
    };
    Ok(found
        && active
        && (filters.campaign.is_empty() || link.campaign == filters.campaign)
        && (filters.source.is_empty() || link.source == filters.source)
        && (filters.tag.is_empty() || link.tags.contains(&filters.tag)))
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let param = |name: &str| input.param(name).unwrap_or_default().trim().to_owned();
    let filters = Filters {
        q: param("q"),
        campaign: param("campaign"),
        source: param("source"),
        tag: param("tag"),
        active: param("active"),
    };
    let list = answer.links;
    let campaigns = choices(list.links.iter().map(|l| l.campaign.clone()), &filters.campaign);
    let sources = choices(list.links.iter().map(|l| l.source.clone()), &filters.source);
    let tags = choices(list.links.iter().flat_map(|l| l.tags.clone()), &filters.tag);
    let mut rows = Vec::new();
    for link in &list.links {
        if !matches(link, &filters)? {
            continue;
        }
        let labels = [&link.campaign, &link.source, &link.medium, &link.link_type]
            .iter()
            .filter(|text| !text.is_empty())
            .map(|text| text.as_str())
            .collect::<Vec<_>>()
            .join(" · ");
        let mut state = if link.is_active { "On".to_owned() } else { "Off".to_owned() };
        if let Some(max) = link.max_clicks {
            state.push_str(&format!(", at most {}", format::count(max, "click", "clicks")));
        }
        if let Some(at) = &link.expires_at {
            state.push_str(&format!(", expires {}", format::when(at)));
        }
        rows.push(Row {
            href: input.with_site(&format!("/links/{}", crate::web::nav::encode_segment(&link.id))),
            slug: link.slug.clone(),
            full_url: link.full_url.clone(),
            copy_id: format!("short-{}", link.id),
            destination: link.destination_url.clone(),
            labels,
            tags: link.tags.clone(),
            state,
            active: link.is_active,
            total: format::number(link.total_clicks),
            today: format::number(link.clicks_today),
            last: link.last_clicked_at.as_deref().map_or_else(|| "never".to_owned(), |at| format::ago(at, input.now)),
        });
    }
    let stats = list.stats;
    let cards = vec![
        super::parts::Card { label: "Links", value: format::number(stats.total_links) },
        super::parts::Card { label: "Clicks", value: format::number(stats.total_clicks) },
        super::parts::Card { label: "Clicks today", value: format::number(stats.clicks_today) },
        super::parts::Card {
            label: "Top source",
            value: if stats.top_source.is_empty() { "—".to_owned() } else { stats.top_source },
        },
    ];
    layout.title = "Links".to_owned();
    let page = LinksPage {
        layout,
        site: input.site_query.as_ref().map(|_| site),
        site_id: site,
        current_slug: "",
        notice: forms::notice(input.param("done")),
        can_edit: input.role() >= Role::Member,
        cards,
        shown: format!("{} of {}", rows.len(), format::count(list.links.len() as i64, "link", "links")),
        filters,
        campaigns,
        sources,
        tags,
        rows,
        form: LinkFields::from_state(&input.form, "create", LinkFields::default()),
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}
