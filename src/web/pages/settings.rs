//! `/settings`: the current site's settings (name, domain, tracking mode,
//! first-party domain, hot threshold, high-value pages, retention, Do Not
//! Track) with its tracking snippet to copy, a form to add a site, and
//! deleting the site. Without any site yet, only the form to add one.

use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{page::PageInput, parts};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge,
        forms::{self, Done, Form, FormInput, FormState, Input, input},
        layout::Layout,
    },
};

const CREATE_SITE: &str = include_str!("../documents/create_site.graphql");
const UPDATE_SITE: &str = include_str!("../documents/update_site.graphql");
const DELETE_SITE: &str = include_str!("../documents/delete_site.graphql");

/// The site form's inputs, each filling a field of `$input`.
const SITE_INPUTS: [Input; 10] = [
    input("name", "Name", "input.name"),
    input("domain", "Domain", "input.domain"),
    input("tracking_mode", "Tracking mode", "input.trackingMode"),
    input("first_party_domain", "First-party domain", "input.firstPartyDomain"),
    input("hot_threshold", "Hot threshold", "input.hotThreshold"),
    input("high_value_patterns", "High-value pages", "input.highValuePatterns"),
    input("retention_days", "Keep visitor data for (days)", "input.retentionDays"),
    input("hosting_asns", "Hosting networks", "input.hostingAsns"),
    input("isp_asns", "ISP networks", "input.ispAsns"),
    input("timezone", "Time zone", "input.timezone"),
];

/// Network numbers typed as a list: `AS16509, 14061` or one per line.
fn asn_numbers(input: &FormInput, name: &str) -> AppResult<Value> {
    let numbers = input
        .text(name)
        .split(|c: char| c == ',' || c.is_whitespace())
        .map(|word| word.trim().trim_start_matches(['A', 'a']).trim_start_matches(['S', 's']))
        .filter(|word| !word.is_empty())
        .map(|word| {
            word.parse::<i64>().map_err(|_| AppError::validation(name, format!("{word} is not a network number")))
        })
        .collect::<AppResult<Vec<i64>>>()?;
    Ok(json!(numbers))
}

/// The form that adds a site.
const NEW_SITE_INPUTS: [Input; 3] = [
    input("domain", "Domain", "input.domain"),
    input("name", "Name", "input.name"),
    input("org", "Organisation", "input.orgId"),
];

fn whole_number(input: &FormInput, name: &str) -> AppResult<Value> {
    let text = input.text(name);
    if text.is_empty() {
        return Ok(Value::Null);
    }
    Ok(json!(text.parse::<i64>().map_err(|_| AppError::validation(name, "must be a whole number"))?))
}

fn site_changes(input: &FormInput) -> AppResult<Value> {
    let mut changes = Map::new();
    changes.insert("name".to_owned(), json!(input.text("name")));
    changes.insert("domain".to_owned(), json!(input.text("domain")));
    changes.insert("trackingMode".to_owned(), json!(input.text("tracking_mode")));
    changes.insert("firstPartyDomain".to_owned(), json!(input.text("first_party_domain")));
    let threshold = whole_number(input, "hot_threshold")?;
    if threshold.is_null() {
        return Err(AppError::validation("hot_threshold", "is required"));
    }
    changes.insert("hotThreshold".to_owned(), threshold);
    let patterns: Vec<String> =
        input.text("high_value_patterns").lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect();
    changes.insert("highValuePatterns".to_owned(), json!(patterns));
    changes.insert("retentionDays".to_owned(), whole_number(input, "retention_days")?);
    changes.insert("respectDoNotTrack".to_owned(), json!(input.flag("respect_dnt")?));
    changes.insert("gravatar".to_owned(), json!(input.flag("gravatar")?));
    changes.insert("hostingAsns".to_owned(), asn_numbers(input, "hosting_asns")?);
    changes.insert("ispAsns".to_owned(), asn_numbers(input, "isp_asns")?);
    // A form without the select (an older page, a script) leaves the zone as it is.
    let timezone = input.text("timezone");
    if !timezone.is_empty() {
        changes.insert("timezone".to_owned(), json!(timezone));
    }
    Ok(json!({ "id": input.site()?, "input": changes }))
}

pub const FORMS: [Form; 3] = [
    Form {
        action: "save",
        document: UPDATE_SITE,
        variables: site_changes,
        inputs: &SITE_INPUTS,
        done: Done::Redirect(|input, _| forms::back_to(input, "/settings", "site-saved")),
    },
    Form {
        action: "create",
        document: CREATE_SITE,
        variables: |input| {
            Ok(
                json!({ "input": { "domain": input.text("domain"), "name": input.optional("name"), "orgId": input.optional("org") } }),
            )
        },
        inputs: &NEW_SITE_INPUTS,
        done: Done::Redirect(|_, answer| {
            let id = answer["createSite"]["id"].as_i64().unwrap_or_default();
            format!("/settings?site={id}&done=site-created")
        }),
    },
    Form {
        action: "delete",
        document: DELETE_SITE,
        variables: |input| {
            input.confirmed()?;
            Ok(json!({ "id": input.site()? }))
        },
        inputs: &[input("confirm", "Confirmation", "confirm")],
        done: Done::Redirect(|_, _| "/settings?done=site-deleted".to_owned()),
    },
];

#[derive(Deserialize)]
struct Answer {
    profile: Profile,
    orgs: Vec<Org>,
    workspace: Scoped,
}

#[derive(Deserialize)]
struct Scoped {
    site: Option<Site>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Profile {
    max_sites: i64,
    site_count: i64,
}

#[derive(Deserialize)]
struct Org {
    id: String,
    name: String,
    role: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Site {
    id: i64,
    name: String,
    domain: String,
    slug: String,
    tracking_mode: String,
    first_party_domain: String,
    hot_threshold: i64,
    high_value_patterns: Vec<String>,
    retention_days: Option<i64>,
    respect_do_not_track: bool,
    gravatar: bool,
    hosting_asns: Vec<i64>,
    isp_asns: Vec<i64>,
    timezone: String,
}

/// The site form's values.
pub struct SiteFields {
    pub name: String,
    pub domain: String,
    pub tracking_mode: String,
    pub first_party_domain: String,
    pub hot_threshold: String,
    pub high_value_patterns: String,
    pub retention_days: String,
    pub respect_dnt: bool,
    pub gravatar: bool,
    pub hosting_asns: String,
    pub isp_asns: String,
    pub timezone: String,
}

/// A text input of the site form.
pub struct TextInput {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub value: String,
    pub hint: &'static str,
}

pub struct OrgChoice {
    pub id: String,
    pub name: String,
}

#[derive(Template)]
#[template(path = "settings.html")]
struct SettingsPage<'a> {
    layout: Layout,
    tabs: Vec<parts::Tab>,
    notice: Option<&'static str>,
    action_path: String,
    site: Option<SiteView>,
    can_admin: bool,
    inputs: Vec<TextInput>,
    form: SiteFields,
    create_orgs: Vec<OrgChoice>,
    sites_left: String,
    state: &'a FormState,
    /// Every IANA zone name, for the time zone select.
    timezones: &'static [chrono_tz::Tz],
}

pub struct SiteView {
    pub id: i64,
    pub name: String,
    pub slug: String,
    pub snippet: String,
}

/// The tracking snippet for the site's mode: first-party host and
/// cookieless mode change its attributes.
pub fn snippet(base_url: &str, site_id: i64, mode: &str, first_party: &str, respect_dnt: bool) -> String {
    let (script, api) = if first_party.is_empty() {
        (format!("{base_url}/script.js"), None)
    } else {
        (format!("https://{first_party}/script.js"), Some(format!("https://{first_party}/api/collect")))
    };
    let mut tag = format!(r#"<script defer src="{script}" data-site-id="{site_id}""#);
    if let Some(api) = api {
        tag.push_str(&format!(r#" data-api="{api}""#));
    }
    if mode == "cookieless" {
        tag.push_str(r#" data-mode="cookieless""#);
    }
    if respect_dnt {
        tag.push_str(" data-respect-dnt");
    }
    tag.push_str("></script>");
    tag
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let answer: Answer = bridge::decode(data)?;
    let site = answer.workspace.site;
    let typed = |name: &str| input.form.value("save", name);
    let form = match (&site, input.form.sent("save")) {
        (_, true) => SiteFields {
            name: typed("name"),
            domain: typed("domain"),
            tracking_mode: typed("tracking_mode"),
            first_party_domain: typed("first_party_domain"),
            hot_threshold: typed("hot_threshold"),
            high_value_patterns: typed("high_value_patterns"),
            retention_days: typed("retention_days"),
            respect_dnt: matches!(typed("respect_dnt").as_str(), "1" | "on" | "true"),
            gravatar: matches!(typed("gravatar").as_str(), "1" | "on" | "true"),
            hosting_asns: typed("hosting_asns"),
            isp_asns: typed("isp_asns"),
            timezone: typed("timezone"),
        },
        (Some(site), false) => SiteFields {
            name: site.name.clone(),
            domain: site.domain.clone(),
            tracking_mode: site.tracking_mode.clone(),
            first_party_domain: site.first_party_domain.clone(),
            hot_threshold: site.hot_threshold.to_string(),
            high_value_patterns: site.high_value_patterns.join("\n"),
            retention_days: site.retention_days.map(|days| days.to_string()).unwrap_or_default(),
            respect_dnt: site.respect_do_not_track,
            gravatar: site.gravatar,
            hosting_asns: site.hosting_asns.iter().map(|asn| format!("AS{asn}")).collect::<Vec<_>>().join(", "),
            isp_asns: site.isp_asns.iter().map(|asn| format!("AS{asn}")).collect::<Vec<_>>().join(", "),
            timezone: site.timezone.clone(),
        },
        (None, false) => SiteFields {
            name: String::new(),
            domain: String::new(),
            tracking_mode: "cookie".to_owned(),
            first_party_domain: String::new(),
            hot_threshold: String::new(),
            high_value_patterns: String::new(),
            retention_days: String::new(),
            respect_dnt: false,
            gravatar: false,
            hosting_asns: String::new(),
            isp_asns: String::new(),
            timezone: "UTC".to_owned(),
        },
    };
    let view = site.map(|site| SiteView {
        snippet: snippet(
            &input.base_url,
            site.id,
            &site.tracking_mode,
            &site.first_party_domain,
            site.respect_do_not_track,
        ),
        id: site.id,
        name: site.name,
        slug: site.slug,
    });
    let create_orgs = answer
        .orgs
        .into_iter()
        .filter(|org| Role::parse(&org.role) >= Role::Admin)
        .map(|org| OrgChoice { id: org.id, name: org.name })
        .collect();
    let text = |name, label, value: &String, hint| TextInput { name, label, kind: "text", value: value.clone(), hint };
    let number = |name, label, value: &String, hint| TextInput { kind: "number", ..text(name, label, value, hint) };
    let inputs = vec![
        text("name", "Name", &form.name, ""),
        text("domain", "Domain", &form.domain, "The host the site runs on, like www.example.com."),
        text(
            "first_party_domain",
            "First-party domain",
            &form.first_party_domain,
            "Your own host that proxies the script and collect endpoint; empty for none.",
        ),
        number(
            "hot_threshold",
            "Hot threshold",
            &form.hot_threshold,
            "Visitors with at least this score (0 to 100) are hot.",
        ),
        number("retention_days", "Keep visitor data for (days)", &form.retention_days, "Empty keeps everything."),
    ];
    layout.title = "Settings".to_owned();
    let page = SettingsPage {
        inputs,
        layout,
        tabs: parts::settings_tabs(input, "/settings"),
        notice: forms::notice(input.param("done")),
        action_path: input.with_site("/settings"),
        site: view,
        can_admin: input.role() >= Role::Admin,
        form,
        create_orgs,
        sites_left: format!("{} of {}", answer.profile.site_count, answer.profile.max_sites),
        state: &input.form,
        timezones: &chrono_tz::TZ_VARIANTS,
    };
    page.render().map_err(AppError::internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snippet_follows_the_site_mode() {
        let base = "http://localhost:8080";
        let cases = [
            ("cookie", "", false, r#"<script defer src="http://localhost:8080/script.js" data-site-id="7"></script>"#),
            (
                "cookieless",
                "",
                true,
                r#"<script defer src="http://localhost:8080/script.js" data-site-id="7" data-mode="cookieless" data-respect-dnt></script>"#,
            ),
            (
                "cookie",
                "t.example.com",
                false,
                r#"<script defer src="https://t.example.com/script.js" data-site-id="7" data-api="https://t.example.com/api/collect"></script>"#,
            ),
        ];
        for (mode, first_party, dnt, expected) in cases {
            assert_eq!(snippet(base, 7, mode, first_party, dnt), expected, "{mode} {first_party}");
        }
    }
}
