//! Explore's revenue metrics (design §20): `total_revenue` and
//! `average_revenue` over the revenue custom events carry, exact in minor
//! units and per currency. A group whose events carry one currency answers
//! Plausible's money object; one with several answers null, with a warning,
//! since amounts are never converted.

use serde_json::{Map, Value, json};

use super::query::{Metric, Query};
use crate::service::money;

/// The currency of a group's revenue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Currency {
    /// No event of the group carries revenue.
    #[default]
    None,
    One(String),
    /// More than one: no single total.
    Mixed,
}

impl Currency {
    /// From the least and greatest code a group's events carry.
    pub fn of(low: Option<String>, high: Option<String>) -> Currency {
        match (low, high) {
            (Some(low), Some(high)) if low == high => Currency::One(low),
            (Some(_), _) | (_, Some(_)) => Currency::Mixed,
            _ => Currency::None,
        }
    }

    /// The currency two parts of a group carry together.
    pub fn merge(&self, other: &Currency) -> Currency {
        match (self, other) {
            (Currency::None, other) | (other, Currency::None) => other.clone(),
            (Currency::One(a), Currency::One(b)) if a == b => Currency::One(a.clone()),
            _ => Currency::Mixed,
        }
    }
}

/// The revenue of a group: the sum in minor units, how many events carry
/// it, and its currency.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Revenue {
    pub minor: i64,
    pub events: i64,
    pub currency: Currency,
}

/// Whether a query asks for revenue.
pub fn asked(metrics: &[Metric]) -> bool {
    metrics.iter().any(|metric| matches!(metric, Metric::TotalRevenue | Metric::AverageRevenue))
}

/// The columns an events statement adds for revenue, summing `minor` and
/// `events` columns of `from` (a prefix: `e.revenue_` for events, or an
/// inner statement's per-visit sums).
pub fn sums(events_level: bool, prefix: &str) -> String {
    if events_level {
        format!(
            ", CAST(COALESCE(SUM({prefix}minor), 0) AS BIGINT) AS revenue, COUNT({prefix}minor) AS revenue_events, \
             MIN({prefix}currency) AS currency_low, MAX({prefix}currency) AS currency_high"
        )
    } else {
        format!(
            ", CAST(COALESCE(SUM({prefix}revenue), 0) AS BIGINT) AS revenue, \
             CAST(COALESCE(SUM({prefix}revenue_events), 0) AS BIGINT) AS revenue_events, \
             MIN({prefix}currency_low) AS currency_low, MAX({prefix}currency_high) AS currency_high"
        )
    }
}

/// Plausible's money object for an amount in minor units.
fn money_value(minor: i64, code: &str) -> Value {
    json!({
        "short": money::short(minor, code),
        "long": money::long(minor, code),
        "value": money::major(minor, code),
        "currency": code,
    })
}

/// `total_revenue` or `average_revenue` of a group; null without revenue
/// or with mixed currencies. The average is rounded to whole minor units.
pub fn value(metric: Metric, revenue: &Revenue) -> Value {
    let Currency::One(code) = &revenue.currency else { return Value::Null };
    match metric {
        Metric::AverageRevenue if revenue.events > 0 => {
            let average = (revenue.minor as f64 / revenue.events as f64).round() as i64;
            money_value(average, code)
        }
        Metric::AverageRevenue => Value::Null,
        _ => money_value(revenue.minor, code),
    }
}

/// The number a money object compares and changes by.
pub fn number(value: &Value) -> Option<f64> {
    value.as_f64().or_else(|| value.get("value").and_then(Value::as_f64))
}

/// `meta.metric_warnings` for the revenue metrics asked: none of the rows
/// had revenue, or some had several currencies.
pub fn warnings<'a>(query: &Query, groups: impl Iterator<Item = &'a Revenue>) -> Map<String, Value> {
    let (mut any, mut mixed) = (false, false);
    for revenue in groups {
        any |= revenue.currency != Currency::None;
        mixed |= revenue.currency == Currency::Mixed;
    }
    let warning = if mixed {
        json!({
            "code": "mixed_currencies",
            "warning": "Revenue metrics are null where events carry more than one currency: amounts are not converted."
        })
    } else if !any {
        json!({
            "code": "no_revenue_goals_matching",
            "warning": "Revenue metrics are null as no matching event carries revenue."
        })
    } else {
        return Map::new();
    };
    query
        .metrics
        .iter()
        .filter(|metric| matches!(metric, Metric::TotalRevenue | Metric::AverageRevenue))
        .map(|metric| (metric.name().to_owned(), warning.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn currencies_combine_and_values_stay_exact() {
        let usd = || Currency::One("USD".to_owned());
        let table = [
            (Currency::None, Currency::None, Currency::None),
            (Currency::None, usd(), usd()),
            (usd(), usd(), usd()),
            (usd(), Currency::One("EUR".to_owned()), Currency::Mixed),
            (Currency::Mixed, Currency::None, Currency::Mixed),
        ];
        for (a, b, merged) in table {
            assert_eq!(a.merge(&b), merged, "{a:?} + {b:?}");
        }
        assert_eq!(Currency::of(Some("EUR".into()), Some("USD".into())), Currency::Mixed);
        assert_eq!(Currency::of(None, None), Currency::None);

        let revenue = Revenue { minor: 1_000_001, events: 3, currency: usd() };
        let total = value(Metric::TotalRevenue, &revenue);
        assert_eq!(total["value"], json!(10000.01));
        assert_eq!(total["long"], "10,000.01 USD");
        assert_eq!(value(Metric::AverageRevenue, &revenue)["value"], json!(3333.34));
        assert_eq!(value(Metric::TotalRevenue, &Revenue { currency: Currency::Mixed, ..revenue }), Value::Null);
        assert_eq!(number(&total), Some(10000.01));
    }
}
