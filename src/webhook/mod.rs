//! Visitor exports to outside tools: the five payload shapes, the SSRF guard,
//! Standard Webhooks signing and the delivery client. Reading the visitor and
//! logging attempts is `service::webhooks`' job; nothing here touches SQL.

pub mod delivery;
pub mod guard;
pub mod payload;
pub mod retry;
pub mod signing;

use crate::error::{AppError, AppResult};

pub use delivery::WebhookClient;

/// The target's kind, which decides the payload's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookType {
    /// Generic JSON.
    Custom,
    /// HubSpot-style `properties`.
    CrmOne,
    /// Salesforce-style flat fields.
    CrmTwo,
    /// Slack Block Kit.
    ChatOne,
    /// Microsoft Teams workflow.
    ChatTwo,
}

impl WebhookType {
    pub const ALL: [WebhookType; 5] =
        [WebhookType::Custom, WebhookType::CrmOne, WebhookType::CrmTwo, WebhookType::ChatOne, WebhookType::ChatTwo];

    /// Parses a type; none or empty means `custom`.
    pub fn parse(value: Option<&str>) -> AppResult<WebhookType> {
        let value = value.map(str::trim).filter(|v| !v.is_empty()).unwrap_or("custom");
        WebhookType::ALL.into_iter().find(|kind| kind.as_str() == value).ok_or_else(|| {
            AppError::validation("webhookType", "must be custom, crm_one, crm_two, chat_one or chat_two")
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            WebhookType::Custom => "custom",
            WebhookType::CrmOne => "crm_one",
            WebhookType::CrmTwo => "crm_two",
            WebhookType::ChatOne => "chat_one",
            WebhookType::ChatTwo => "chat_two",
        }
    }
}

/// The name payloads give the service (`analytics_source`, `LeadSource`, Slack's title).
pub const SERVICE_NAME: &str = "Leadtrail";
