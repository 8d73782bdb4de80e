//! What fires an alert destination (design §15). The writer decides when a
//! trigger holds (`tracking::triggers`); destinations and their deliveries
//! store it by name.

/// What fires a destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AlertTrigger {
    BecameHot,
    Identified,
    FormSubmitted,
}

impl AlertTrigger {
    pub const ALL: [AlertTrigger; 3] = [AlertTrigger::BecameHot, AlertTrigger::Identified, AlertTrigger::FormSubmitted];

    pub fn as_str(self) -> &'static str {
        match self {
            AlertTrigger::BecameHot => "became_hot",
            AlertTrigger::Identified => "identified",
            AlertTrigger::FormSubmitted => "form_submitted",
        }
    }

    pub fn parse(value: &str) -> Option<AlertTrigger> {
        AlertTrigger::ALL.into_iter().find(|trigger| trigger.as_str() == value)
    }
}
