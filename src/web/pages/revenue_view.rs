//! Conversions and revenue as the pages show them (design §20): a
//! visitor's recorded conversions, newest first, and revenue per currency,
//! exact as the API answers it; what a tracking link brought per model.

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

/// `1299.00 EUR, 49.00 USD`.
pub fn amounts(amounts: &[AmountData]) -> String {
    amounts.iter().map(|m| format!("{} {}", m.amount, m.currency)).collect::<Vec<_>>().join(", ")
}

pub fn view(conversions: Vec<ConversionData>, revenue: Vec<AmountData>) -> RevenueView {
    RevenueView {
        totals: amounts(&revenue),
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

/// What the link brought under one attribution model.
#[derive(Deserialize)]
pub struct Credit {
    model: String,
    leads: f64,
    conversions: f64,
    revenue: Vec<AmountData>,
}

/// A row of the "brought" table: the model and the link's credit under it.
pub struct BroughtRow {
    pub model: &'static str,
    pub leads: String,
    pub conversions: String,
    pub revenue: String,
}

/// The link's credit under each model, as the table shows it.
pub fn brought(credits: Vec<Credit>) -> Vec<BroughtRow> {
    let shown = |n: f64| if n.fract() == 0.0 { format!("{n:.0}") } else { format!("{n:.2}") };
    credits
        .into_iter()
        .map(|credit| BroughtRow {
            model: match credit.model.as_str() {
                "first_touch" => "First touch",
                "last_touch" => "Last touch",
                _ => "Linear",
            },
            leads: shown(credit.leads),
            conversions: shown(credit.conversions),
            revenue: Some(amounts(&credit.revenue))
                .filter(|text| !text.is_empty())
                .unwrap_or_else(|| "none".to_owned()),
        })
        .collect()
}
