//! What fires an alert destination (design §15). The writer decides when a
//! trigger holds (`tracking::triggers`); destinations and their deliveries
//! store it by name.

/// What fires a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AlertTrigger {
    BecameHot,
    Identified,
    FormSubmitted,
    /// An account's score reached the site's hot threshold (design §18),
    /// once per account and destination.
    AccountBecameHot,
    /// A conversion was recorded for the visitor (design §20), once per
    /// conversion and destination.
    Converted,
}

impl AlertTrigger {
    pub const ALL: [AlertTrigger; 5] = [
        AlertTrigger::BecameHot,
        AlertTrigger::Identified,
        AlertTrigger::FormSubmitted,
        AlertTrigger::AccountBecameHot,
        AlertTrigger::Converted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AlertTrigger::BecameHot => "became_hot",
            AlertTrigger::Identified => "identified",
            AlertTrigger::FormSubmitted => "form_submitted",
            AlertTrigger::AccountBecameHot => "account_became_hot",
            AlertTrigger::Converted => "converted",
        }
    }

    pub fn parse(value: &str) -> Option<AlertTrigger> {
        AlertTrigger::ALL.into_iter().find(|trigger| trigger.as_str() == value)
    }
}
