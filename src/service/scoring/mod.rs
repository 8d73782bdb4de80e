//! Lead scoring: additive, explainable, 0 to 100, and it ranks. Every factor
//! has a name, points and a reason that completes a sentence ("+11 for" "9
//! page views", "+13 for" "a visit 12 hours ago"). The formula itself is in `formula`: diminishing returns per
//! factor, recency halving every three days. All factors but recency depend
//! only on a visitor's stored aggregates; their sum is stored as
//! `visitors.score`, and recency is added when the score is read, because it
//! changes with time alone.

pub mod formula;

use entity::visitor;

use self::formula::{Counts, IDENTIFIED_POINTS};
pub use self::formula::{MAX_SCORE, RECENCY_MAX, recency_fade_ms, recency_points};
use crate::time::{DAY_MS, HOUR_MS, MINUTE_MS};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Factor {
    pub name: &'static str,
    pub points: i32,
    pub reason: String,
}

fn counts(visitor: &visitor::Model) -> Counts {
    Counts {
        pageviews: visitor.total_pageviews.into(),
        sessions: visitor.total_sessions.into(),
        engaged_seconds: visitor.total_time_seconds,
        high_value_views: visitor.high_value_views.into(),
        form_submits: visitor.form_submits.into(),
        clicks: visitor.clicks.into(),
        identified: visitor.status == "identified",
    }
}

/// The factors that depend only on stored aggregates.
pub fn stored_factors(visitor: &visitor::Model) -> Vec<Factor> {
    let counts = counts(visitor);
    let mut factors: Vec<Factor> = counts
        .factors()
        .iter()
        .map(|(rule, count)| Factor { name: rule.name, points: rule.points(*count), reason: rule.sentence(*count) })
        .collect();
    factors.push(Factor {
        name: "identified",
        points: if counts.identified { IDENTIFIED_POINTS } else { 0 },
        reason: if counts.identified { "being identified" } else { "not being identified yet" }.to_owned(),
    });
    factors
}

/// The stored part of the score (`visitors.score`).
pub fn stored_points(visitor: &visitor::Model) -> i32 {
    counts(visitor).stored_points()
}

/// Recency, fading by half every three days from the last visit.
pub fn recency(last_seen: i64, now: i64) -> Factor {
    let age = (now - last_seen).max(0);
    let (count, unit) = if age < HOUR_MS {
        (age / MINUTE_MS, "minute")
    } else if age < 2 * DAY_MS {
        (age / HOUR_MS, "hour")
    } else {
        (age / DAY_MS, "day")
    };
    let plural = if count == 1 { "" } else { "s" };
    Factor { name: "recency", points: recency_points(age), reason: format!("a visit {count} {unit}{plural} ago") }
}

/// Stored points plus recency, at most 100.
pub fn total(stored: i32, last_seen: i64, now: i64) -> i32 {
    (stored + recency_points(now - last_seen)).clamp(0, MAX_SCORE)
}

/// The full breakdown, recency included, as GraphQL's `scoreBreakdown` shows it.
pub fn breakdown(visitor: &visitor::Model, now: i64) -> Vec<Factor> {
    let mut factors = stored_factors(visitor);
    factors.push(recency(visitor.last_seen, now));
    factors
}

#[cfg(test)]
mod tests;
