//! Lead scoring: additive, explainable, 0 to 100. Every factor has a name,
//! points and a reason. All factors but recency depend only on a visitor's
//! stored aggregates; their sum is stored as `visitors.score`, and recency is
//! added when the score is read, because it changes with time alone.

use entity::visitor;

use crate::time::DAY_MS;

pub const MAX_SCORE: i32 = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Factor {
    pub name: &'static str,
    pub points: i32,
    pub reason: String,
}

/// Points per unit, and the most a factor can give.
struct Rule {
    name: &'static str,
    per: i32,
    cap: i32,
    unit: &'static str,
}

const PAGEVIEWS: Rule = Rule { name: "pageviews", per: 2, cap: 20, unit: "page view" };
const RETURNING: Rule = Rule { name: "returning_visits", per: 5, cap: 15, unit: "return visit" };
const ENGAGED_TIME: Rule = Rule { name: "engaged_time", per: 1, cap: 10, unit: "engaged minute" };
const HIGH_VALUE: Rule = Rule { name: "high_value_pages", per: 8, cap: 24, unit: "high-value page view" };
const FORMS: Rule = Rule { name: "form_submissions", per: 15, cap: 30, unit: "form submission" };
const CLICKS: Rule = Rule { name: "link_clicks", per: 5, cap: 10, unit: "tracking-link click" };
pub const IDENTIFIED_POINTS: i32 = 15;
pub const RECENCY_MAX: i32 = 20;
pub const RECENCY_FADE_PER_DAY: i32 = 2;

impl Rule {
    fn apply(&self, count: i64) -> Factor {
        let count = count.max(0);
        let points = (count.min(i64::from(self.cap)) as i32 * self.per).min(self.cap);
        let plural = if count == 1 { "" } else { "s" };
        Factor {
            name: self.name,
            points,
            reason: format!("{count} {}{plural} × {} (at most {})", self.unit, self.per, self.cap),
        }
    }
}

/// The factors that depend only on stored aggregates.
pub fn stored_factors(visitor: &visitor::Model) -> Vec<Factor> {
    vec![
        PAGEVIEWS.apply(visitor.total_pageviews.into()),
        RETURNING.apply(i64::from(visitor.total_sessions) - 1),
        ENGAGED_TIME.apply(visitor.total_time_seconds / 60),
        HIGH_VALUE.apply(visitor.high_value_views.into()),
        FORMS.apply(visitor.form_submits.into()),
        CLICKS.apply(visitor.clicks.into()),
        Factor {
            name: "identified",
            points: if visitor.status == "identified" { IDENTIFIED_POINTS } else { 0 },
            reason: if visitor.status == "identified" {
                "identified as a known person".to_owned()
            } else {
                "not identified yet".to_owned()
            },
        },
    ]
}

/// The stored part of the score (`visitors.score`).
pub fn stored_points(visitor: &visitor::Model) -> i32 {
    stored_factors(visitor).iter().map(|factor| factor.points).sum()
}

/// 20 points on the day of the last visit, 2 fewer for each full day since.
pub fn recency(last_seen: i64, now: i64) -> Factor {
    let days = ((now - last_seen).max(0) / DAY_MS) as i32;
    let points = (RECENCY_MAX - RECENCY_FADE_PER_DAY * days).max(0);
    Factor { name: "recency", points, reason: format!("last seen {days} full day(s) ago") }
}

/// Stored points plus recency, capped at 100.
pub fn total(stored: i32, last_seen: i64, now: i64) -> i32 {
    (stored + recency(last_seen, now).points).clamp(0, MAX_SCORE)
}

/// The full breakdown, recency included, as GraphQL's `scoreBreakdown` shows it.
pub fn breakdown(visitor: &visitor::Model, now: i64) -> Vec<Factor> {
    let mut factors = stored_factors(visitor);
    factors.push(recency(visitor.last_seen, now));
    factors
}
