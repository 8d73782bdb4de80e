//! The score's formula, pure: counts in, points out. Nothing here imports
//! the crate, because the migrations that rescore stored visitors include
//! this file too (`migration/src/rescore.rs`), so the service and the
//! migrations share one formula. A change to a rule here wants a migration
//! that calls `rescore_visitors`, as `m20261125_190000` does.
//!
//! Each factor gives `cap × (1 − ½^(count / half))` points, rounded: the
//! first units count most, `half` units give half the cap, and the cap is
//! reached only by far more. Recency halves every `RECENCY_HALF_LIFE_MS`
//! (three days) from `RECENCY_MAX` on the hour of the last visit. The caps
//! add up to exactly 100, so a score of 100 takes exceptional engagement on
//! every factor at once and no clamp hides a difference at the top.

use std::sync::LazyLock;

pub const MAX_SCORE: i32 = 100;

/// One engagement factor with diminishing returns.
pub struct Rule {
    pub name: &'static str,
    pub cap: i32,
    /// The count that gives half the cap.
    pub half: f64,
    /// The unit in a sentence: "1 page view", "9 page views".
    pub one: &'static str,
    pub many: &'static str,
}

impl Rule {
    pub fn points(&self, count: i64) -> i32 {
        if count <= 0 {
            return 0;
        }
        let share = 1.0 - 0.5_f64.powf(count as f64 / self.half);
        (f64::from(self.cap) * share).round() as i32
    }

    /// "9 page views".
    pub fn sentence(&self, count: i64) -> String {
        let count = count.max(0);
        format!("{count} {}", if count == 1 { self.one } else { self.many })
    }
}

pub const PAGEVIEWS: Rule = Rule { name: "pageviews", cap: 10, half: 20.0, one: "page view", many: "page views" };
pub const RETURNING: Rule =
    Rule { name: "returning_visits", cap: 10, half: 3.0, one: "return visit", many: "return visits" };
pub const ENGAGED_TIME: Rule =
    Rule { name: "engaged_time", cap: 10, half: 20.0, one: "engaged minute", many: "engaged minutes" };
pub const HIGH_VALUE: Rule =
    Rule { name: "high_value_pages", cap: 20, half: 2.0, one: "high-value page view", many: "high-value page views" };
pub const FORMS: Rule =
    Rule { name: "form_submissions", cap: 20, half: 1.0, one: "form submission", many: "form submissions" };
pub const CLICKS: Rule =
    Rule { name: "link_clicks", cap: 5, half: 1.0, one: "tracking-link click", many: "tracking-link clicks" };
pub const IDENTIFIED_POINTS: i32 = 10;
pub const RECENCY_MAX: i32 = 15;
pub const RECENCY_HALF_LIFE_MS: i64 = 72 * 3_600_000;

/// What the stored part of the score is made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub pageviews: i64,
    pub sessions: i64,
    pub engaged_seconds: i64,
    pub high_value_views: i64,
    pub form_submits: i64,
    pub clicks: i64,
    pub identified: bool,
}

impl Counts {
    /// Each factor with the count it was given, in the breakdown's order.
    pub fn factors(&self) -> [(&'static Rule, i64); 6] {
        [
            (&PAGEVIEWS, self.pageviews),
            (&RETURNING, self.sessions - 1),
            (&ENGAGED_TIME, self.engaged_seconds / 60),
            (&HIGH_VALUE, self.high_value_views),
            (&FORMS, self.form_submits),
            (&CLICKS, self.clicks),
        ]
    }

    /// Every factor but recency: what `visitors.score` stores.
    pub fn stored_points(&self) -> i32 {
        let engagement: i32 = self.factors().iter().map(|(rule, count)| rule.points(*count)).sum();
        engagement + if self.identified { IDENTIFIED_POINTS } else { 0 }
    }
}

/// The ages at which recency drops a point: past `RECENCY_THRESHOLDS[i]`,
/// it is `RECENCY_MAX - i - 1`. Whole milliseconds, so the SQL that sorts
/// lists by score compares the same numbers as this file.
pub static RECENCY_THRESHOLDS: LazyLock<Vec<i64>> = LazyLock::new(|| {
    (0..RECENCY_MAX)
        .map(|dropped| {
            // Where RECENCY_MAX × ½^(age / half-life) falls below the next half point.
            let target = f64::from(RECENCY_MAX - dropped) - 0.5;
            let half_lives = (f64::from(RECENCY_MAX) / target).log2();
            (half_lives * RECENCY_HALF_LIFE_MS as f64).ceil() as i64
        })
        .collect()
});

/// Recency points for a visit `age_ms` ago (a visit stamped ahead of the
/// clock counts as now).
pub fn recency_points(age_ms: i64) -> i32 {
    let age = age_ms.max(0);
    RECENCY_MAX - RECENCY_THRESHOLDS.iter().filter(|&&threshold| age >= threshold).count() as i32
}

/// From this age on, recency gives nothing.
pub fn recency_fade_ms() -> i64 {
    RECENCY_THRESHOLDS.last().copied().unwrap_or(0)
}
