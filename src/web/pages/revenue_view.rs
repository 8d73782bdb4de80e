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

/// What the link brought, per attribution model.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Credit {
    first_touch: Option<Report>,
    last_touch: Option<Report>,
    linear: Option<Report>,
}

#[derive(Deserialize)]
struct Report {
    rows: Vec<CreditRow>,
}

#[derive(Deserialize)]
struct CreditRow {
    value: String,
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

/// The link's row of each model's report (zero when it has none).
pub fn brought(credit: Credit, slug: &str) -> Vec<BroughtRow> {
    let shown = |n: f64| if n.fract() == 0.0 { format!("{n:.0}") } else { format!("{n:.2}") };
    [("First touch", credit.first_touch), ("Last touch", credit.last_touch), ("Linear", credit.linear)]
        .into_iter()
        .map(|(model, report)| {
            let row = report.and_then(|report| report.rows.into_iter().find(|row| row.value == slug));
            BroughtRow {
                model,
                leads: shown(row.as_ref().map_or(0.0, |row| row.leads)),
                conversions: shown(row.as_ref().map_or(0.0, |row| row.conversions)),
                revenue: row
                    .map(|row| {
                        row.revenue
                            .iter()
                            .map(|m| format!("{} {}", m.amount, m.currency))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .filter(|text| !text.is_empty())
                    .unwrap_or_else(|| "none".to_owned()),
            }
        })
        .collect()
}
