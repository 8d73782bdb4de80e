//! Conversions and revenue as the visitor page shows them (design §20):
//! the visitor's recorded conversions, newest first, and their revenue per
//! currency, exact as the API answers it.

use serde::Deserialize;

use crate::web::format;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionData {
    name: String,
    amount: String,
    currency: String,
    occurred_at: String,
}

#[derive(Deserialize)]
pub struct AmountData {
    amount: String,
    currency: String,
}

pub struct ConversionRow {
    pub name: String,
    pub amount: String,
    pub time: String,
}

/// What the panel shows.
pub struct RevenueView {
    /// `1299.00 EUR, 49.00 USD`, or empty.
    pub totals: String,
    pub conversions: Vec<ConversionRow>,
}

pub fn view(conversions: Vec<ConversionData>, revenue: Vec<AmountData>) -> RevenueView {
    RevenueView {
        totals: revenue.iter().map(|m| format!("{} {}", m.amount, m.currency)).collect::<Vec<_>>().join(", "),
        conversions: conversions
            .into_iter()
            .map(|c| ConversionRow {
                amount: format!("{} {}", c.amount, c.currency),
                time: format::when(&c.occurred_at),
                name: c.name,
            })
            .collect(),
    }
}
