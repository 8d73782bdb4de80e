//! `/links/<id>`: one tracking link: its short URL to copy, its QR code,
//! its clicks by day as a chart with countries, cities, campaigns and
//! sources, the latest clicks with the visitor each was tied to, and the
//! forms that edit, turn off and delete it.

use askama::Template;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    link_form::{self, LinkFields},
    page::PageInput,
    parts::{self, BarPanel, Tab},
    revenue_view,
};
use crate::{
    auth::Role,
    enrich::geo::country_name,
    error::{AppError, AppResult},
    web::{
        bridge, chart, format,
        forms::{self, Done, Form, FormInput, FormState},
        layout::Layout,
        nav,
    },
};

const UPDATE_LINK: &str = include_str!("../documents/update_link.graphql");
const DELETE_LINK: &str = include_str!("../documents/delete_link.graphql");
/// The latest clicks shown (the document asks for as many).
const LATEST_CLICKS: usize = 100;

fn this_link(input: &FormInput, key: &str) -> String {
    let path = format!("/links/{}", nav::encode_segment(input.id.unwrap_or_default()));
    forms::back_to(input, &path, key)
}

pub const FORMS: [Form; 3] = [
    Form {
        action: "update",
        document: UPDATE_LINK,
        variables: |input| Ok(json!({ "id": input.id()?, "input": LinkFields::read(input, false)? })),
        inputs: &link_form::INPUTS,
        done: Done::Redirect(|input, _| this_link(input, "link-saved")),
    },
    Form {
        action: "toggle",
        document: UPDATE_LINK,
        variables: |input| Ok(json!({ "id": input.id()?, "input": { "isActive": input.flag("active")? } })),
        inputs: &[],
        done: Done::Redirect(|input, answer| {
            let on = answer["updateLink"]["isActive"].as_bool().unwrap_or(false);
            this_link(input, if on { "link-on" } else { "link-off" })
        }),
    },
    Form {
        action: "delete",
        document: DELETE_LINK,
        variables: |input| {
            input.confirmed()?;
            Ok(json!({ "id": input.id()? }))
        },
        inputs: &[forms::input("confirm", "Confirmation", "confirm")],
        done: Done::Redirect(|input, _| forms::back_to(input, "/links", "link-deleted")),
    },
];

#[derive(Deserialize)]
struct Answer {
    link: Link,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Link {
    id: String,
    site_id: i64,
    slug: String,
    destination_url: String,
    campaign: String,
    source: String,
    medium: String,
    content: String,
    notes: String,
    link_type: String,
    is_active: bool,
    expires_at: Option<String>,
    max_clicks: Option<i64>,
    tags: Vec<String>,
    created_at: String,
    total_clicks: i64,
    clicks_today: i64,
    last_clicked_at: Option<String>,
    full_url: String,
    brought: Vec<revenue_view::Credit>,
    analytics: Analytics,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Analytics {
    total: i64,
    by_day: Vec<Day>,
    by_country: Vec<Country>,
    by_city: Vec<City>,
    by_campaign: Vec<Campaign>,
    by_source: Vec<Source>,
    clicks: Vec<Click>,
}

#[derive(Deserialize)]
struct Day {
    date: String,
    clicks: i64,
}

#[derive(Deserialize)]
struct Country {
    country: Option<String>,
    clicks: i64,
}

#[derive(Deserialize)]
struct City {
    city: Option<String>,
    country: Option<String>,
    clicks: i64,
}

#[derive(Deserialize)]
struct Campaign {
    campaign: String,
    clicks: i64,
}

#[derive(Deserialize)]
struct Source {
    source: String,
    clicks: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Click {
    created_at: String,
    tracker_vid: String,
    person: Option<parts::Person>,
    country: Option<String>,
    city: Option<String>,
    source: String,
    campaign: String,
    referrer: Option<String>,
    device_type: Option<String>,
    browser: Option<String>,
}

pub struct ClickRow {
    pub at: String,
    /// The visitor's page, when the click was tied to one.
    pub visitor: Option<(String, String)>,
    pub place: String,
    pub labels: String,
    pub referrer: String,
    pub device: String,
}

pub struct DayRow {
    pub date: String,
    pub clicks: String,
}

#[derive(Template)]
#[template(path = "link.html")]
struct LinkPage<'a> {
    layout: Layout,
    site_id: i64,
    /// The leads, conversions and revenue the link brought, per model.
    brought: Vec<revenue_view::BroughtRow>,
    /// The stored slug, free for this link whatever is typed.
    current_slug: String,
    notice: Option<&'static str>,
    can_edit: bool,
    action_path: String,
    qr_src: String,
    slug: String,
    full_url: String,
    destination: String,
    facts: Vec<(&'static str, String)>,
    active: bool,
    tabs: Vec<Tab>,
    range_label: &'static str,
    total: String,
    chart: chart::LineChart,
    days: Vec<DayRow>,
    panels: Vec<BarPanel>,
    clicks: Vec<ClickRow>,
    clicks_note: String,
    form: LinkFields,
    state: &'a FormState,
}

const RANGES: [(&str, &str); 4] =
    [("7d", "Last 7 days"), ("30d", "Last 30 days"), ("90d", "Last 90 days"), ("all", "All time")];

fn stored_fields(link: &Link) -> LinkFields {
    LinkFields {
        destination: link.destination_url.clone(),
        slug: link.slug.clone(),
        campaign: link.campaign.clone(),
        source: link.source.clone(),
        medium: link.medium.clone(),
        content: link.content.clone(),
        notes: link.notes.clone(),
        link_type: link.link_type.clone(),
        tags: link.tags.join(", "),
        expires_at: link.expires_at.as_deref().map(link_form::local_value).unwrap_or_default(),
        max_clicks: link.max_clicks.map(|max| max.to_string()).unwrap_or_default(),
        active: link.is_active,
    }
}

fn labelled(value: Option<&str>) -> String {
    value.map(str::trim).filter(|text| !text.is_empty()).unwrap_or("Unknown").to_owned()
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let site = input.site()?;
    let answer: Answer = bridge::decode(data)?;
    let mut link = answer.link;
    let brought = revenue_view::brought(std::mem::take(&mut link.brought));
    // `?site=` naming another of the viewer's sites does not show this link under it.
    if link.site_id != site {
        return Err(AppError::not_found("link"));
    }
    let range = input.param("range").unwrap_or("7d");
    let range_label = RANGES.iter().find(|(value, _)| *value == range).map_or("Last 7 days", |(_, label)| label);
    let encoded = nav::encode_segment(&link.id);
    let page_path = input.with_site(&format!("/links/{encoded}"));
    let joiner = if input.site_query.is_some() { '&' } else { '?' };
    let tabs = RANGES
        .iter()
        .map(|(value, label)| Tab {
            label,
            href: format!("{page_path}{joiner}range={value}"),
            current: *value == range,
        })
        .collect();
    let stored = stored_fields(&link);
    let analytics = link.analytics;
    let labels: Vec<String> =
        analytics.by_day.iter().map(|day| day.date.get(5..).unwrap_or(&day.date).to_owned()).collect();
    let chart = chart::line_chart(
        &labels,
        &[("Clicks", "line-pageviews", analytics.by_day.iter().map(|d| d.clicks).collect())],
    );
    let panels = vec![
        BarPanel {
            title: "Countries",
            label_head: "Country",
            value_head: "Clicks",
            rows: parts::bars(
                analytics
                    .by_country
                    .into_iter()
                    .map(|c| (labelled(c.country.as_deref().map(country_name)), c.clicks))
                    .collect(),
            ),
            paths: false,
        },
        BarPanel {
            title: "Cities",
            label_head: "City",
            value_head: "Clicks",
            rows: parts::bars(
                analytics
                    .by_city
                    .into_iter()
                    .map(|c| (parts::place(c.city.as_deref(), c.country.as_deref()), c.clicks))
                    .collect(),
            ),
            paths: false,
        },
        BarPanel {
            title: "Campaigns",
            label_head: "Campaign",
            value_head: "Clicks",
            rows: parts::bars(
                analytics.by_campaign.into_iter().map(|c| (labelled(Some(&c.campaign)), c.clicks)).collect(),
            ),
            paths: false,
        },
        BarPanel {
            title: "Sources",
            label_head: "Source",
            value_head: "Clicks",
            rows: parts::bars(analytics.by_source.into_iter().map(|s| (labelled(Some(&s.source)), s.clicks)).collect()),
            paths: false,
        },
    ];
    let listed = usize::try_from(analytics.total).unwrap_or(0);
    let clicks = analytics
        .clicks
        .into_iter()
        .take(LATEST_CLICKS)
        .map(|click| ClickRow {
            at: format::ago(&click.created_at, input.now),
            visitor: click
                .person
                .as_ref()
                .map(|person| (parts::visitor_href(site, &click.tracker_vid), person.with_company())),
            place: parts::place(click.city.as_deref(), click.country.as_deref()),
            labels: [click.campaign, click.source]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(" · "),
            referrer: format::or_dash(click.referrer.as_deref()),
            device: [click.device_type, click.browser].into_iter().flatten().collect::<Vec<_>>().join(" · "),
        })
        .collect();
    let mut facts = vec![
        ("State", if link.is_active { "On".to_owned() } else { "Off: the short URL answers 410".to_owned() }),
        ("Clicks, all time", format::number(link.total_clicks)),
        ("Clicks today", format::number(link.clicks_today)),
        (
            "Last click",
            link.last_clicked_at.as_deref().map_or_else(|| "never".to_owned(), |at| format::ago(at, input.now)),
        ),
        ("Created", format::when(&link.created_at)),
    ];
    if let Some(max) = link.max_clicks {
        facts.push(("Most clicks", format::number(max)));
    }
    if let Some(at) = &link.expires_at {
        facts.push(("Expires", format::when(at)));
    }
    layout.title = format!("Link {}", link.slug);
    let page = LinkPage {
        layout,
        site_id: site,
        current_slug: link.slug.clone(),
        notice: forms::notice(input.param("done")),
        can_edit: input.role() >= Role::Member,
        action_path: page_path.clone(),
        qr_src: format!("/links/{encoded}/qr.svg"),
        slug: link.slug.clone(),
        full_url: link.full_url.clone(),
        destination: link.destination_url.clone(),
        active: link.is_active,
        form: LinkFields::from_state(&input.form, "update", stored),
        facts,
        tabs,
        range_label,
        total: format::count(analytics.total, "click", "clicks"),
        days: analytics
            .by_day
            .iter()
            .rev()
            .map(|d| DayRow { date: d.date.clone(), clicks: format::number(d.clicks) })
            .collect(),
        chart,
        panels,
        clicks,
        clicks_note: if listed > LATEST_CLICKS {
            format!("The latest {LATEST_CLICKS} of {} clicks listed.", format::number(listed as i64))
        } else {
            String::new()
        },
        brought,
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}
