//! The formula, pinned: a change to any rule shows up here.

use super::{
    formula::{
        CLICKS, Counts, ENGAGED_TIME, FORMS, HIGH_VALUE, PAGEVIEWS, RECENCY_THRESHOLDS, RETURNING, Rule,
        recency_fade_ms,
    },
    *,
};

#[test]
fn each_factor_gives_less_for_each_further_unit() {
    let table: [(&Rule, [i32; 8]); 6] = [
        // counts:      1  2  3   5   9  15  30  100
        (&PAGEVIEWS, [0, 1, 1, 2, 3, 4, 6, 10]),
        (&RETURNING, [2, 4, 5, 7, 9, 10, 10, 10]),
        (&ENGAGED_TIME, [0, 1, 1, 2, 3, 4, 6, 10]),
        (&HIGH_VALUE, [6, 10, 13, 16, 19, 20, 20, 20]),
        (&FORMS, [10, 15, 18, 19, 20, 20, 20, 20]),
        (&CLICKS, [3, 4, 4, 5, 5, 5, 5, 5]),
    ];
    for (rule, expected) in table {
        let got: Vec<i32> = [1, 2, 3, 5, 9, 15, 30, 100].iter().map(|&n| rule.points(n)).collect();
        assert_eq!(got, expected, "{}", rule.name);
        assert_eq!(rule.points(0), 0, "{}", rule.name);
        assert_eq!(rule.points(-3), 0, "{}", rule.name);
        let gains: Vec<i32> = (1..40).map(|n| rule.points(n) - rule.points(n - 1)).collect();
        assert!(gains.windows(2).all(|pair| pair[1] <= pair[0] + 1), "{}: {gains:?}", rule.name);
        assert!(rule.points(1_000_000) == rule.cap, "{}", rule.name);
    }
}

#[test]
fn the_caps_add_up_to_exactly_the_maximum() {
    let caps: i32 = [&PAGEVIEWS, &RETURNING, &ENGAGED_TIME, &HIGH_VALUE, &FORMS, &CLICKS].iter().map(|r| r.cap).sum();
    assert_eq!(caps + formula::IDENTIFIED_POINTS + RECENCY_MAX, MAX_SCORE);
}

#[test]
fn recency_fades_by_the_hour_and_halves_every_three_days() {
    let table = [
        (0, 15),
        (3 * HOUR_MS, 15),
        (4 * HOUR_MS, 14),
        (12 * HOUR_MS, 13),
        (DAY_MS, 12),
        (3 * DAY_MS, 7), // one half-life: 7.5, where the 8 ends
        (6 * DAY_MS, 4), // 3.75
        (9 * DAY_MS, 2),
        (14 * DAY_MS, 1),
        (15 * DAY_MS, 0),
        (400 * DAY_MS, 0),
        (-HOUR_MS, 15),
    ];
    for (age, points) in table {
        assert_eq!(recency_points(age), points, "age {} h", age / HOUR_MS);
    }
    assert!(RECENCY_THRESHOLDS.windows(2).all(|pair| pair[0] < pair[1]));
    assert_eq!(recency_points(recency_fade_ms()), 0);
    assert_eq!(recency_points(recency_fade_ms() - 1), 1);
}

fn visitor(counts: Counts) -> visitor::Model {
    visitor::Model {
        total_pageviews: counts.pageviews as i32,
        total_sessions: counts.sessions as i32,
        total_time_seconds: counts.engaged_seconds,
        high_value_views: counts.high_value_views as i32,
        form_submits: counts.form_submits as i32,
        clicks: counts.clicks as i32,
        status: if counts.identified { "identified" } else { "anonymous" }.to_owned(),
        ..crate::service::tracking::sessionize::new_visitor(1, "v", 0)
    }
}

/// Whole visitors: the score, and the breakdown summing to it as sentences.
#[test]
fn visitors_score_as_the_table_says_and_the_breakdown_sums_to_it() {
    let now = 1_800_000_000_000;
    let c = |pageviews: i64,
             sessions: i64,
             minutes: i64,
             high_value_views: i64,
             form_submits: i64,
             clicks: i64,
             identified: bool| Counts {
        pageviews,
        sessions,
        engaged_seconds: minutes * 60,
        high_value_views,
        form_submits,
        clicks,
        identified,
    };
    let table = [
        // One page, seen just now: a bounce.
        (c(1, 1, 0, 0, 0, 0, false), 0, 15),
        // Read around for a while, came back once, yesterday.
        (c(6, 2, 5, 1, 0, 0, false), DAY_MS, 24),
        // Identified, a form, pricing twice, three visits, an hour ago: warm, not hot.
        (c(12, 3, 10, 2, 1, 0, true), HOUR_MS, 55),
        // Identified, two forms, pricing three times, five visits, an hour ago: hot.
        (c(30, 5, 25, 3, 2, 0, true), HOUR_MS, 71),
        // The same person a week later has cooled.
        (c(30, 5, 25, 3, 2, 0, true), 7 * DAY_MS, 59),
        // Much of everything, right now: still short of the cap.
        (c(100, 12, 200, 8, 6, 5, true), 0, 98),
        // Everything, at length, right now: the only way to 100.
        (c(150, 20, 300, 12, 8, 5, true), 0, 100),
        // Heavy but anonymous and formless: never 100.
        (c(200, 40, 600, 0, 0, 0, false), 0, 45),
    ];
    for (counts, age, expected) in table {
        let model = visitor::Model { last_seen: now - age, ..visitor(counts) };
        let factors = breakdown(&model, now);
        let sum: i32 = factors.iter().map(|f| f.points).sum();
        assert_eq!(total(stored_points(&model), model.last_seen, now), expected, "{counts:?}");
        assert_eq!(sum, expected, "{factors:?}");
    }
    let model = visitor(c(9, 1, 0, 0, 0, 0, false));
    let pageviews = &stored_factors(&model)[0];
    assert_eq!((pageviews.points, pageviews.reason.as_str()), (3, "9 page views"));
    assert_eq!(recency(now - 5 * HOUR_MS, now).reason, "a visit 5 hours ago");
    assert_eq!(recency(now - 3 * DAY_MS, now).reason, "a visit 3 days ago");
    assert_eq!(recency(now - 60_000, now).reason, "a visit 1 minute ago");
}
