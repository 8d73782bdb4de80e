//! The account score (design §18), pure: an account's figures in, points
//! and the reasons for them out. It reads like a visitor's score: each
//! factor gives `cap × (1 − ½^(count / half))` points, so the first people
//! and pages count most, and recency fades with the same half-life. The caps
//! add up to 100 with recency, so 100 takes exceptional engagement from
//! many people at once.

use crate::service::scoring::formula::{self, Rule};

pub const PEOPLE: Rule =
    Rule { name: "people", cap: 20, half: 1.0, one: "identified person", many: "identified people" };
pub const VISITORS: Rule = Rule { name: "visitors", cap: 15, half: 3.0, one: "visitor", many: "visitors" };
pub const PAGEVIEWS: Rule = Rule { name: "pageviews", cap: 10, half: 30.0, one: "page view", many: "page views" };
pub const HIGH_VALUE: Rule =
    Rule { name: "high_value_pages", cap: 20, half: 3.0, one: "high-value page view", many: "high-value page views" };
pub const FORMS: Rule =
    Rule { name: "form_submissions", cap: 15, half: 1.0, one: "form submission", many: "form submissions" };
pub const ENGAGED_TIME: Rule =
    Rule { name: "engaged_time", cap: 5, half: 30.0, one: "engaged minute", many: "engaged minutes" };

/// What the score reads of an account.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccountFigures {
    pub people: i64,
    pub visitors: i64,
    pub pageviews: i64,
    pub high_value_views: i64,
    pub form_submits: i64,
    pub engaged_seconds: i64,
    pub last_seen: i64,
}

/// One line of the breakdown: "+12 for 2 identified people".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub factor: &'static str,
    pub points: i32,
    /// What earned the points: "2 identified people".
    pub because: String,
    /// The whole line: "+12 for 2 identified people".
    pub sentence: String,
}

/// The score (0 to 100) and its reasons, which add up to it; factors that
/// give nothing are left out.
pub fn score(figures: &AccountFigures, now: i64) -> (i32, Vec<Reason>) {
    let factors = [
        (&PEOPLE, figures.people),
        (&VISITORS, figures.visitors),
        (&PAGEVIEWS, figures.pageviews),
        (&HIGH_VALUE, figures.high_value_views),
        (&FORMS, figures.form_submits),
        (&ENGAGED_TIME, figures.engaged_seconds / 60),
    ];
    let mut reasons: Vec<Reason> = factors
        .iter()
        .map(|(rule, count)| Reason {
            factor: rule.name,
            points: rule.points(*count),
            because: rule.sentence(*count),
            sentence: format!("+{} for {}", rule.points(*count), rule.sentence(*count)),
        })
        .collect();
    let recency = formula::recency_points(now - figures.last_seen);
    let hours = ((now - figures.last_seen).max(0) / 3_600_000).max(0);
    let ago = match hours {
        0 => "seen within the hour".to_owned(),
        1 => "last seen 1 hour ago".to_owned(),
        h if h < 48 => format!("last seen {h} hours ago"),
        h => format!("last seen {} days ago", h / 24),
    };
    let because = format!("being {ago}");
    reasons.push(Reason { factor: "recency", points: recency, sentence: format!("+{recency} for {because}"), because });
    reasons.retain(|reason| reason.points > 0);
    let total = reasons.iter().map(|reason| reason.points).sum::<i32>().min(formula::MAX_SCORE);
    (total, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;
    const HOUR: i64 = 3_600_000;

    fn figures(
        people: i64,
        visitors: i64,
        pageviews: i64,
        high: i64,
        forms: i64,
        minutes: i64,
        hours_ago: i64,
    ) -> AccountFigures {
        AccountFigures {
            people,
            visitors,
            pageviews,
            high_value_views: high,
            form_submits: forms,
            engaged_seconds: minutes * 60,
            last_seen: NOW - hours_ago * HOUR,
        }
    }

    #[test]
    fn the_formula_is_pinned() {
        let cases = [
            // people, visitors, pageviews, high-value, forms, minutes, hours ago → score
            (figures(0, 1, 1, 0, 0, 0, 24 * 30), 3),
            (figures(0, 1, 1, 0, 0, 0, 0), 18),
            (figures(1, 1, 5, 1, 0, 3, 0), 33),
            (figures(2, 4, 20, 3, 1, 20, 2), 63),
            (figures(5, 12, 80, 10, 3, 120, 1), 92),
            (figures(40, 200, 5_000, 400, 60, 9_000, 0), 100),
        ];
        for (input, expected) in cases {
            let (total, reasons) = score(&input, NOW);
            assert_eq!(total, expected, "{input:?}: {reasons:?}");
            assert_eq!(reasons.iter().map(|r| r.points).sum::<i32>(), total, "the reasons add up");
        }
    }

    #[test]
    fn reasons_read_as_sentences() {
        let (_, reasons) = score(&figures(2, 3, 9, 0, 1, 0, 5), NOW);
        let sentences: Vec<&str> = reasons.iter().map(|r| r.sentence.as_str()).collect();
        assert_eq!(
            sentences,
            [
                "+15 for 2 identified people",
                "+8 for 3 visitors",
                "+2 for 9 page views",
                "+8 for 1 form submission",
                "+14 for being last seen 5 hours ago"
            ]
        );
    }
}
