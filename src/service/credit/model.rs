//! How credit adds up (design §20), free of I/O. A touchpoint is a visit of
//! the converting visitor that began no later than the conversion; first
//! touch credits the earliest, last touch the latest, linear each equally.
//! Money is split exactly: every visit gets the same whole number of minor
//! units and the earliest ones one more until the remainder is gone, so the
//! credits always add up to the amount. The database picks the touchpoints
//! and splits the money (`sql.rs`), and hands back tallies: credits of one
//! kind, currency, group and number of parts, counted; this sums them.

use std::collections::BTreeMap;

/// Which touchpoints get the credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    FirstTouch,
    LastTouch,
    Linear,
}

impl Model {
    /// Every model, in the order a link's page shows them.
    pub const ALL: [Model; 3] = [Model::FirstTouch, Model::LastTouch, Model::Linear];

    /// The model's number in the statement's rows and the kept days.
    pub fn code(self) -> i16 {
        match self {
            Model::FirstTouch => 1,
            Model::LastTouch => 2,
            Model::Linear => 3,
        }
    }
}

/// What a conversion with no visit before it is credited to.
pub const NO_VISIT: &str = "(no visit)";

/// Credits alike, counted: `credits` credits of outcomes that were each
/// split into `parts` parts (0 when the outcome had no visit before it,
/// which gets it whole, as `NO_VISIT`), to the group `key`, worth `minor`
/// minor units in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    /// A lead (no money), or a conversion in `currency`.
    pub lead: bool,
    pub currency: String,
    pub key: String,
    pub parts: i64,
    pub credits: i64,
    pub minor: i64,
}

/// A tally as the statement or the kept days give it: the UTC day of its
/// outcomes, and its group as stored (a link by id).
#[derive(Debug, Clone, PartialEq)]
pub struct RawTally {
    pub day: i64,
    pub lead: bool,
    pub currency: String,
    pub grp: Option<String>,
    pub link: Option<i64>,
    pub parts: i64,
    pub credits: i64,
    pub minor: i64,
}

impl RawTally {
    /// The tally under the group name `key`.
    pub fn named(self, key: String) -> Tally {
        Tally {
            lead: self.lead,
            currency: self.currency,
            key,
            parts: self.parts,
            credits: self.credits,
            minor: self.minor,
        }
    }
}

/// What one group (or the total) was credited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sums {
    pub leads: f64,
    pub conversions: f64,
    /// Minor units per currency code.
    pub revenue: BTreeMap<String, i64>,
}

impl Sums {
    fn add(&mut self, tally: &Tally, share: f64) {
        if tally.lead {
            self.leads += share;
        } else {
            self.conversions += share;
            *self.revenue.entry(tally.currency.clone()).or_default() += tally.minor;
        }
    }
}

/// The groups' sums, by key, and the total, which counts every outcome
/// once: an outcome split into n parts left n credits, so the credits of
/// n-part outcomes divide by n exactly.
pub fn sum(tallies: &[Tally]) -> (BTreeMap<String, Sums>, Sums) {
    let mut groups: BTreeMap<String, Sums> = BTreeMap::new();
    // (lead, parts) -> credits
    let mut by_parts: BTreeMap<(bool, i64), i64> = BTreeMap::new();
    let mut total = Sums::default();
    for tally in tallies {
        let parts = tally.parts.max(1);
        let key = if tally.parts == 0 { NO_VISIT } else { tally.key.as_str() };
        groups.entry(key.to_owned()).or_default().add(tally, tally.credits as f64 / parts as f64);
        *by_parts.entry((tally.lead, parts)).or_default() += tally.credits;
        if !tally.lead {
            *total.revenue.entry(tally.currency.clone()).or_default() += tally.minor;
        }
    }
    for ((lead, parts), credits) in by_parts {
        let outcomes = (credits / parts) as f64;
        if lead {
            total.leads += outcomes;
        } else {
            total.conversions += outcomes;
        }
    }
    (groups, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(lead: bool, key: &str, parts: i64, credits: i64, minor: i64) -> Tally {
        let currency = if lead { String::new() } else { "EUR".to_owned() };
        Tally { lead, currency, key: key.to_owned(), parts, credits, minor }
    }

    #[test]
    fn tallies_add_up_per_group_and_once_per_outcome_in_the_total() {
        // (tallies, expected (key, leads, conversions, EUR minor), total (leads, conversions, EUR minor))
        type Case = (Vec<Tally>, Vec<(&'static str, f64, f64, i64)>, (f64, f64, i64));
        let table: Vec<Case> = vec![
            // One lead with three visits: a third to each of two groups, two thirds to one.
            (
                vec![tally(true, "Email", 3, 1, 0), tally(true, "Direct", 3, 2, 0)],
                vec![("Direct", 2.0 / 3.0, 0.0, 0), ("Email", 1.0 / 3.0, 0.0, 0)],
                (1.0, 0.0, 0),
            ),
            // A conversion before any visit goes whole to "(no visit)", whatever its key.
            (vec![tally(false, "", 0, 1, 700)], vec![(NO_VISIT, 0.0, 1.0, 700)], (0.0, 1.0, 700)),
            // Two conversions split in halves (7 = 4 + 3) and one whole.
            (
                vec![tally(false, "Email", 2, 2, 8), tally(false, "Direct", 2, 2, 6), tally(false, "Email", 1, 1, 5)],
                vec![("Direct", 0.0, 1.0, 6), ("Email", 0.0, 2.0, 13)],
                (0.0, 3.0, 19),
            ),
            // Leads and conversions in one group stay apart.
            (
                vec![tally(true, "Email", 1, 4, 0), tally(false, "Email", 4, 4, 10)],
                vec![("Email", 4.0, 1.0, 10)],
                (4.0, 1.0, 10),
            ),
            (vec![], vec![], (0.0, 0.0, 0)),
        ];
        for (tallies, expected, (leads, conversions, minor)) in table {
            let (groups, total) = sum(&tallies);
            let got: Vec<(&str, f64, f64, i64)> = groups
                .iter()
                .map(|(key, sums)| {
                    (key.as_str(), sums.leads, sums.conversions, sums.revenue.get("EUR").copied().unwrap_or(0))
                })
                .collect();
            assert_eq!(got, expected, "{tallies:?}");
            assert_eq!(total.leads, leads, "{tallies:?}");
            assert_eq!(total.conversions, conversions, "{tallies:?}");
            assert_eq!(total.revenue.get("EUR").copied().unwrap_or(0), minor, "{tallies:?}");
        }
    }
}
