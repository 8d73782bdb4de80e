//! The visitor page's view: the profile as the document answers it, turned
//! into rows of text and checked links, and what its forms just did.

use serde::Deserialize;
use serde_json::Value;

use super::{
    page::PageInput,
    parts::{self, Fact, MaybeLink},
    revenue_view,
};
use crate::web::{format, forms::FormState};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    tracker_vid: String,
    person: parts::Person,
    status: String,
    score: i64,
    hot: bool,
    email: Option<String>,
    gravatar_url: Option<String>,
    user_traits: Value,
    country: Option<String>,
    city: Option<String>,
    device_type: Option<String>,
    browser: Option<String>,
    os: Option<String>,
    first_seen: String,
    last_seen: String,
    is_bot: i64,
    total_sessions: i64,
    total_pageviews: i64,
    total_events: i64,
    total_time_seconds: i64,
    clicks: i64,
    high_value_views: i64,
    form_submits: i64,
    score_breakdown: Vec<Factor>,
    account: Option<ProfileAccount>,
    network: Option<ProfileNetwork>,
    identities: Vec<Identity>,
    attribution: Attribution,
    sessions: Vec<Session>,
    recent_events: Vec<Event>,
    form_events: Vec<Event>,
    link_clicks: Vec<Click>,
    conversions: Vec<revenue_view::ConversionData>,
    revenue: Vec<revenue_view::AmountData>,
}

#[derive(Deserialize)]
struct ProfileAccount {
    key: String,
    name: String,
}

#[derive(Deserialize)]
struct ProfileNetwork {
    asn: i64,
    organisation: String,
}

#[derive(Deserialize)]
struct Factor {
    points: i64,
    reason: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Identity {
    user_id: Option<String>,
    email: Option<String>,
    company: Option<String>,
    phone: Option<String>,
    source: String,
    identified_at: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Attribution {
    first_touch: Option<Touch>,
    last_touch: Option<Touch>,
    touchpoints: Vec<Touchpoint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Touch {
    referrer: Option<String>,
    channel: String,
    utm_source: Option<String>,
    utm_medium: Option<String>,
    utm_campaign: Option<String>,
    utm_content: Option<String>,
    utm_term: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Touchpoint {
    referrer: Option<String>,
    channel: String,
    utm_source: Option<String>,
    utm_medium: Option<String>,
    utm_campaign: Option<String>,
    first_seen: String,
    touchpoints: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Session {
    session_id: String,
    started_at: String,
    duration_seconds: i64,
    pageview_count: i64,
    entry_page: Option<String>,
    exit_page: Option<String>,
    referrer: Option<String>,
    channel: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    event_name: String,
    page: String,
    #[serde(default)]
    page_title: Option<String>,
    #[serde(default)]
    referrer: Option<String>,
    props: Value,
    timestamp: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Click {
    slug: String,
    campaign: String,
    source: String,
    medium: String,
    destination_url: String,
    country: Option<String>,
    city: Option<String>,
    created_at: String,
}

pub struct TouchView {
    pub label: &'static str,
    pub channel: String,
    pub referrer: MaybeLink,
    pub campaign: String,
}

pub struct TouchpointRow {
    pub channel: String,
    pub referrer: MaybeLink,
    pub campaign: String,
    pub first_seen: String,
    pub touches: i64,
}

pub struct SessionRow {
    pub href: String,
    pub started: String,
    pub duration: String,
    pub pages: i64,
    pub entry: String,
    pub exit: String,
    pub channel: String,
    pub referrer: MaybeLink,
}

pub struct EventRow {
    pub time: String,
    pub what: String,
    pub page: String,
    pub title: String,
    pub referrer: MaybeLink,
    pub props: Vec<(String, String)>,
}

pub struct ClickRow {
    pub time: String,
    pub slug: String,
    pub campaign: String,
    pub destination: MaybeLink,
    pub place: String,
}

/// "+11 for 9 page views".
pub struct FactorRow {
    pub points: i64,
    pub reason: String,
}

/// Everything the template shows, as text.
pub struct ProfileView {
    pub tracker_vid: String,
    pub name: String,
    pub status: String,
    pub score: i64,
    pub hot: bool,
    pub bot: bool,
    pub avatar: parts::Avatar,
    pub identity: Vec<Fact>,
    pub email: Option<(String, Option<String>)>,
    pub phone: Option<(String, Option<String>)>,
    pub traits: Vec<(String, String)>,
    pub factors: Vec<FactorRow>,
    pub totals: Vec<Fact>,
    pub touches: Vec<TouchView>,
    pub touchpoints: Vec<TouchpointRow>,
    pub sessions: Vec<SessionRow>,
    pub events: Vec<EventRow>,
    pub forms: Vec<EventRow>,
    pub clicks: Vec<ClickRow>,
    pub revenue: revenue_view::RevenueView,
}

/// Props shown per event, at most.
const PROPS_SHOWN: usize = 8;

fn campaign(source: Option<&str>, medium: Option<&str>, campaign: Option<&str>) -> String {
    let parts: Vec<&str> = [source, medium, campaign].into_iter().flatten().filter(|p| !p.is_empty()).collect();
    if parts.is_empty() { "—".to_owned() } else { parts.join(" / ") }
}

fn event_row(event: Event) -> EventRow {
    EventRow {
        time: format::when(&event.timestamp),
        what: parts::what(&event.kind, &event.event_name),
        page: event.page,
        title: format::or_dash(event.page_title.as_deref()),
        referrer: MaybeLink::url(event.referrer.as_deref()),
        props: format::json_pairs(&event.props, PROPS_SHOWN),
    }
}

impl ProfileView {
    pub fn new(v: Profile, site: i64, gravatar_on: bool, input: &PageInput) -> ProfileView {
        let latest = v.identities.into_iter().next();
        let name = v.person.display_name.clone();
        let email = v.email.clone().or_else(|| latest.as_ref().and_then(|i| i.email.clone()));
        let phone = latest.as_ref().and_then(|i| i.phone.clone()).filter(|p| !p.trim().is_empty());
        let mut identity = vec![Fact { label: "Visitor id", value: v.tracker_vid.clone() }];
        if let Some(latest) = &latest {
            identity.push(Fact { label: "User id", value: format::or_dash(latest.user_id.as_deref()) });
            identity.push(Fact { label: "Company", value: format::or_dash(latest.company.as_deref()) });
            identity.push(Fact {
                label: "Identified",
                value: format!("{} (source: {})", format::when(&latest.identified_at), latest.source),
            });
        }
        if let Some(account) = &v.account {
            let value = if account.name == account.key {
                account.key.clone()
            } else {
                format!("{} ({})", account.name, account.key)
            };
            identity.push(Fact { label: "Account", value });
        }
        if let Some(network) = &v.network {
            identity.push(Fact { label: "Network", value: format!("{} (AS{})", network.organisation, network.asn) });
        }
        let touches = [("First touch", v.attribution.first_touch), ("Last touch", v.attribution.last_touch)]
            .into_iter()
            .filter_map(|(label, touch)| {
                touch.map(|t| TouchView {
                    label,
                    channel: t.channel,
                    referrer: MaybeLink::url(t.referrer.as_deref()),
                    campaign: {
                        let base =
                            campaign(t.utm_source.as_deref(), t.utm_medium.as_deref(), t.utm_campaign.as_deref());
                        let extra: Vec<&str> =
                            [t.utm_content.as_deref(), t.utm_term.as_deref()].into_iter().flatten().collect();
                        if extra.is_empty() { base } else { format!("{base} ({})", extra.join(", ")) }
                    },
                })
            })
            .collect();
        let totals = vec![
            Fact { label: "Sessions", value: format::number(v.total_sessions) },
            Fact { label: "Pageviews", value: format::number(v.total_pageviews) },
            Fact { label: "Events", value: format::number(v.total_events) },
            Fact { label: "Time on site", value: format::duration(v.total_time_seconds) },
            Fact { label: "High-value views", value: format::number(v.high_value_views) },
            Fact { label: "Form submissions", value: format::number(v.form_submits) },
            Fact { label: "Link clicks", value: format::number(v.clicks) },
            Fact { label: "First seen", value: format::when(&v.first_seen) },
            Fact {
                label: "Last seen",
                value: format!("{} ({})", format::when(&v.last_seen), format::ago(&v.last_seen, input.now)),
            },
            Fact {
                label: "Location",
                // The region is an ISO subdivision code ("13" is Tokyo): a
                // code, not a place a person reads, so it stays in the API.
                value: parts::place(v.city.as_deref(), v.country.as_deref()),
            },
            Fact {
                label: "Device",
                value: format::or_dash(Some(
                    &[v.device_type, v.browser, v.os].into_iter().flatten().collect::<Vec<_>>().join(" · "),
                )),
            },
        ];
        ProfileView {
            name,
            status: v.status,
            score: v.score,
            hot: v.hot,
            bot: v.is_bot != 0,
            avatar: parts::Avatar::new(gravatar_on, v.gravatar_url.clone(), &v.person),
            identity,
            email: email.map(|e| (format::mailto_href(&e), e)).map(|(href, e)| (e, href)),
            phone: phone.map(|p| (format::tel_href(&p), p)).map(|(href, p)| (p, href)),
            traits: format::json_pairs(&v.user_traits, 20),
            factors: v.score_breakdown.into_iter().map(|f| FactorRow { points: f.points, reason: f.reason }).collect(),
            totals,
            touches,
            touchpoints: v
                .attribution
                .touchpoints
                .into_iter()
                .map(|t| TouchpointRow {
                    channel: t.channel,
                    referrer: MaybeLink::url(t.referrer.as_deref()),
                    campaign: campaign(t.utm_source.as_deref(), t.utm_medium.as_deref(), t.utm_campaign.as_deref()),
                    first_seen: format::when(&t.first_seen),
                    touches: t.touchpoints,
                })
                .collect(),
            sessions: v
                .sessions
                .into_iter()
                .map(|s| SessionRow {
                    href: parts::session_href(site, &s.session_id),
                    started: format::when(&s.started_at),
                    duration: format::duration(s.duration_seconds),
                    pages: s.pageview_count,
                    entry: format::or_dash(s.entry_page.as_deref()),
                    exit: format::or_dash(s.exit_page.as_deref()),
                    channel: s.channel,
                    referrer: MaybeLink::url(s.referrer.as_deref()),
                })
                .collect(),
            events: v.recent_events.into_iter().map(event_row).collect(),
            forms: v.form_events.into_iter().map(event_row).collect(),
            clicks: v
                .link_clicks
                .into_iter()
                .map(|c| ClickRow {
                    time: format::when(&c.created_at),
                    slug: c.slug,
                    campaign: campaign(Some(&c.source), Some(&c.medium), Some(&c.campaign)),
                    destination: MaybeLink::url(Some(&c.destination_url)),
                    place: parts::place(c.city.as_deref(), c.country.as_deref()),
                })
                .collect(),
            revenue: revenue_view::view(v.conversions, v.revenue),
            tracker_vid: v.tracker_vid,
        }
    }
}

/// What the webhook form holds (what was typed, or the defaults).
#[derive(Clone)]
pub struct WebhookForm {
    pub url: String,
    pub kind: String,
    pub journey: bool,
    pub events: bool,
}

impl Default for WebhookForm {
    fn default() -> Self {
        WebhookForm { url: String::new(), kind: "custom".to_owned(), journey: true, events: true }
    }
}

#[derive(Clone, Default)]
pub struct IdentifyForm {
    pub email: String,
    pub user_id: String,
    pub name: String,
    pub company: String,
    pub phone: String,
}

/// What the page's forms show after one of them was sent: what was typed
/// (a form that worked is shown empty again, but for the webhook target,
/// which is often sent twice: previewed, then sent), and the outcome.
#[derive(Default)]
pub struct Outcome {
    pub webhook: WebhookForm,
    pub identify: IdentifyForm,
}

/// The outcome, flattened for the template.
#[derive(Default)]
pub struct NoticeView {
    pub success: Option<String>,
    pub preview_payload: Option<String>,
    pub preview_headers: Vec<(String, String)>,
    pub webhook_error: Option<String>,
    /// The input the webhook error is about; empty for the whole form.
    pub webhook_field: String,
    pub identify_error: Option<String>,
    pub identify_field: String,
}

impl Outcome {
    /// The forms' values and the notice, from what a form just did.
    pub fn of(form: &FormState) -> (Outcome, NoticeView) {
        let mut outcome = Outcome::default();
        let mut view = NoticeView::default();
        let value = |action: &str, name: &str| form.value(action, name);
        if form.sent("webhook") {
            outcome.webhook = WebhookForm {
                url: value("webhook", "url"),
                kind: value("webhook", "type"),
                journey: value("webhook", "journey") == "1",
                events: value("webhook", "events") == "1",
            };
        }
        if form.sent("identify") && form.error.is_some() {
            outcome.identify = IdentifyForm {
                email: value("identify", "email"),
                user_id: value("identify", "user_id"),
                name: value("identify", "name"),
                company: value("identify", "company"),
                phone: value("identify", "phone"),
            };
        }
        match (form.action.as_str(), &form.answer, &form.error) {
            ("webhook", Some(answer), _) => {
                let sent = &answer["sendWebhook"];
                if sent["dryRun"].as_bool() == Some(true) {
                    view.success = Some("Dry run: nothing was sent. This is the exact request.".to_owned());
                    view.preview_payload = serde_json::to_string_pretty(&sent["payload"]).ok();
                    view.preview_headers = sent["headers"]
                        .as_object()
                        .map(|map| map.iter().map(|(k, v)| (k.clone(), format::json_text(v))).collect())
                        .unwrap_or_default();
                } else {
                    let at = sent["deliveredAt"].as_str().map(format::when).unwrap_or_default();
                    view.success = Some(format!("Sent as {} at {at}.", format::json_text(&sent["webhookType"])));
                }
            }
            ("identify", Some(answer), _) => {
                view.success =
                    Some(format!("Identified as {}.", format::json_text(&answer["identify"]["identifiedAs"])));
            }
            ("webhook", None, Some(error)) => {
                view.webhook_error = Some(error.clone());
                view.webhook_field = form.field.clone();
            }
            ("identify", None, Some(error)) => {
                view.identify_error = Some(error.clone());
                view.identify_field = form.field.clone();
            }
            _ => {}
        }
        (outcome, view)
    }
}
