//! The five payload shapes, exactly as the interface spec describes them.

use serde_json::{Value, json};

use entity::{event, tracked_session, visitor};

use super::{SERVICE_NAME, WebhookType};
use crate::time::iso;

/// Slack's limit on a header block's text.
pub const MAX_HEADER_CHARS: usize = 150;
/// Slack's limit on a section's fields.
pub const MAX_FIELDS: usize = 10;

/// What a payload is built from.
pub struct Export {
    pub visitor: visitor::Model,
    pub score: i32,
    /// Sessions, oldest first; `None` when the journey is left out.
    pub journey: Option<Vec<tracked_session::Model>>,
    /// Latest events, newest first; `None` when events are left out.
    pub recent_events: Option<Vec<event::Model>>,
    /// BASE_URL, for the links in `custom`.
    pub base_url: String,
    pub exported_at: i64,
    /// The conversion a `CONVERTED` alert is about; none for every other export.
    pub conversion: Option<ConversionNote>,
}

/// A conversion as an alert tells it: the amount as exact decimal text in
/// major units (`"1299.00"`), as the conversions API shows it.
pub struct ConversionNote {
    pub id: i64,
    pub name: String,
    pub amount: String,
    pub currency: String,
    pub occurred_at: i64,
    pub external_id: Option<String>,
}

impl ConversionNote {
    fn json(&self) -> Value {
        json!({
            "id": self.id.to_string(),
            "name": self.name,
            "amount": self.amount,
            "currency": self.currency,
            "occurred_at": iso(self.occurred_at),
            "external_id": self.external_id,
        })
    }

    /// `Closed won: 1299.00 EUR`, for chat messages and emails.
    pub fn sentence(&self) -> String {
        format!("{}: {} {}", self.name, self.amount, self.currency)
    }
}

pub fn build(kind: WebhookType, export: &Export) -> Value {
    match kind {
        WebhookType::Custom => custom(export),
        WebhookType::CrmOne => crm_one(export),
        WebhookType::CrmTwo => crm_two(export),
        WebhookType::ChatOne => chat_one(export),
        WebhookType::ChatTwo => chat_two(export),
    }
}

fn encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn location(v: &visitor::Model) -> Value {
    json!({ "country": v.country, "city": v.city })
}

fn recent_events(events: &[event::Model]) -> Value {
    events.iter().map(|e| json!({ "type": e.event_type, "page": e.page, "timestamp": iso(e.timestamp) })).collect()
}

fn custom(export: &Export) -> Value {
    let v = &export.visitor;
    let base = export.base_url.trim_end_matches('/');
    let mut payload = json!({
        "tracker_vid": v.tracker_vid,
        "status": v.status,
        "identified_user_id": v.identified_user_id,
        "score": export.score,
        "location": location(v),
        "device": { "type": v.device_type, "browser": v.browser },
        "engagement": {
            "total_sessions": v.total_sessions,
            "total_pageviews": v.total_pageviews,
            "total_time_seconds": v.total_time_seconds,
            "first_seen": iso(v.first_seen),
            "last_seen": iso(v.last_seen),
        },
        "links": {
            "profile": format!("{base}/visitor/{}", encoded(&v.tracker_vid)),
            "connect": format!("{base}/talk/incoming?visitor={}", encoded(&v.tracker_vid)),
        },
        "exported_at": iso(export.exported_at),
    });
    if let Some(journey) = &export.journey {
        payload["journey"] = journey
            .iter()
            .map(|s| {
                json!({
                    "session_id": s.id.to_string(),
                    "started_at": iso(s.started_at),
                    "ended_at": iso(s.ended_at),
                    "pageview_count": s.pageview_count,
                    "entry_page": s.entry_page,
                    "exit_page": s.exit_page,
                    "referrer": s.referrer,
                })
            })
            .collect();
    }
    if let Some(events) = &export.recent_events {
        payload["recent_events"] = recent_events(events);
    }
    if let Some(conversion) = &export.conversion {
        payload["conversion"] = conversion.json();
    }
    payload
}

fn text(value: &Option<String>) -> String {
    value.clone().unwrap_or_default()
}

/// The visitor's company as the CRMs' own standard field takes it (design
/// §18): its account's name, when one is known.
fn company(v: &visitor::Model) -> Option<String> {
    v.account_name.clone().filter(|name| !name.trim().is_empty())
}

fn crm_one(export: &Export) -> Value {
    let v = &export.visitor;
    let mut payload = json!({ "properties": {
        "tracker_visitor_id": v.tracker_vid,
        "email": text(&v.email),
        "city": text(&v.city),
        "country": text(&v.country),
        "analytics_source": SERVICE_NAME,
        "tracker_score": export.score.to_string(),
        "tracker_sessions": v.total_sessions.to_string(),
        "tracker_pageviews": v.total_pageviews.to_string(),
        "tracker_first_seen": iso(v.first_seen),
        "tracker_last_seen": iso(v.last_seen),
    }});
    // HubSpot's standard contact property for the company name.
    if let Some(company) = company(v) {
        payload["properties"]["company"] = json!(company);
    }
    payload
}

fn crm_two(export: &Export) -> Value {
    let v = &export.visitor;
    let mut payload = json!({
        "Tracker_Visitor_ID__c": v.tracker_vid,
        "Email": text(&v.email),
        "City": text(&v.city),
        "Country": text(&v.country),
        "LeadSource": SERVICE_NAME,
        "Tracker_Score__c": export.score,
        "Tracker_Sessions__c": v.total_sessions,
        "Tracker_Pageviews__c": v.total_pageviews,
    });
    // Salesforce's standard Lead field for the company.
    if let Some(company) = company(v) {
        payload["Company"] = json!(company);
    }
    payload
}

/// Slack mrkdwn treats these three as control characters.
pub fn escape_mrkdwn(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn truncated(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

fn chat_one(export: &Export) -> Value {
    let v = &export.visitor;
    let place = match (&v.city, &v.country) {
        (Some(city), Some(country)) => format!("{city}, {country}"),
        (None, Some(country)) => country.clone(),
        (Some(city), None) => city.clone(),
        (None, None) => "Unknown".to_owned(),
    };
    let fields: Vec<Value> = [
        ("Visitor ID", v.tracker_vid.clone()),
        ("Score", format!("{}/100", export.score)),
        ("Location", place),
        ("Sessions", v.total_sessions.to_string()),
    ]
    .into_iter()
    .chain(export.conversion.as_ref().map(|conversion| ("Conversion", conversion.sentence())))
    .take(MAX_FIELDS)
    .map(|(label, value)| json!({ "type": "mrkdwn", "text": format!("*{label}:*\n{}", escape_mrkdwn(&value)) }))
    .collect();
    let title = truncated(&format!("New lead from {SERVICE_NAME}"), MAX_HEADER_CHARS);
    json!({ "blocks": [
        { "type": "header", "text": { "type": "plain_text", "text": title } },
        { "type": "section", "fields": fields },
    ]})
}

fn chat_two(export: &Export) -> Value {
    let v = &export.visitor;
    let mut payload = json!({
        "tracker_vid": v.tracker_vid,
        "score": export.score,
        "status": v.status,
        "identified_user_id": v.identified_user_id,
        "location": location(v),
        "engagement": {
            "total_sessions": v.total_sessions,
            "total_pageviews": v.total_pageviews,
            "total_time_seconds": v.total_time_seconds,
        },
    });
    if let Some(events) = &export.recent_events {
        payload["recent_events"] = recent_events(events);
    }
    if let Some(conversion) = &export.conversion {
        payload["conversion"] = conversion.json();
    }
    payload
}

/// The reference POST body that GET /api/webhook shows.
pub fn example_request(default_site_id: i64) -> Value {
    json!({
        "tracker_vid": "visitor-id",
        "webhook_url": "https://example.com/webhooks/leadtrail",
        "webhook_type": "custom",
        "include_journey": true,
        "include_events": true,
        "siteId": default_site_id,
    })
}
