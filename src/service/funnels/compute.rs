//! How far a visitor gets through a funnel (design §20), free of I/O. Steps
//! are done in order: each by a later event than the step before it (an
//! event that reaches two steps counts for one of them), within one visit,
//! or within a window from the first step. Among every way through, the
//! furthest counts: each level remembers the latest first step that reached
//! it, since a later start leaves the most of the window for what follows.

/// One event that reaches at least one step: its visit and time, and which
/// steps it reaches (bit `k` for step `k`). Events come in the order they
/// happened (time, then the order they were stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepEvent {
    pub session: i64,
    pub at: i64,
    pub steps: u8,
}

/// Where the steps must all happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Within one visit.
    Visit,
    /// Within this many milliseconds of the first step, across visits.
    Span(i64),
}

/// What a visitor reached: how many steps, and the visit of the first step
/// of the furthest way through (for breakdowns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reached {
    pub steps: usize,
    pub start_session: Option<i64>,
}

/// The furthest a visitor's events (in order) go through `step_count` steps.
pub fn furthest(events: &[StepEvent], step_count: usize, window: Window) -> Reached {
    // levels[k]: the (start time, start visit) of the latest first step from
    // which steps 0..=k were done, so far.
    let mut levels: Vec<Option<(i64, i64)>> = vec![None; step_count];
    let mut best = Reached::default();
    let note = |level: usize, start: (i64, i64), best: &mut Reached| {
        if level + 1 > best.steps {
            *best = Reached { steps: level + 1, start_session: Some(start.1) };
        }
    };
    for event in events {
        // From the last step down, so one event moves a way through by one step only.
        for step in (0..step_count).rev() {
            if event.steps & (1 << step) == 0 {
                continue;
            }
            if step == 0 {
                levels[0] = Some((event.at, event.session));
                note(0, (event.at, event.session), &mut best);
                continue;
            }
            let Some(start) = levels[step - 1] else { continue };
            let within = match window {
                Window::Visit => start.1 == event.session,
                Window::Span(span) => event.at - start.0 <= span,
            };
            if within {
                levels[step] = Some(start);
                note(step, start, &mut best);
            }
        }
    }
    best
}

/// One step's figures: visitors who reached it, conversion from the step
/// before and from the first (percent, 2 decimals), and how many of the
/// previous step's visitors did not reach it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepFigures {
    pub visitors: i64,
    pub from_previous: f64,
    pub from_first: f64,
    pub dropoff: i64,
}

fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 { 0.0 } else { (part as f64 / whole as f64 * 10_000.0).round() / 100.0 }
}

/// The figures of every step from how far each visitor got.
pub fn figures(reached: impl Iterator<Item = usize>, step_count: usize) -> Vec<StepFigures> {
    let mut at_least = vec![0i64; step_count];
    for steps in reached {
        for count in at_least.iter_mut().take(steps.min(step_count)) {
            *count += 1;
        }
    }
    (0..step_count)
        .map(|step| {
            let visitors = at_least[step];
            let previous = if step == 0 { visitors } else { at_least[step - 1] };
            StepFigures {
                visitors,
                from_previous: percent(visitors, previous),
                from_first: percent(visitors, at_least[0]),
                dropoff: previous - visitors,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000;
    const DAY: i64 = 24 * 60 * MINUTE;

    fn at(session: i64, minutes: i64, steps: u8) -> StepEvent {
        StepEvent { session, at: minutes * MINUTE, steps }
    }

    #[test]
    fn the_furthest_way_through_counts() {
        // (events, steps, window, steps reached)
        let table: Vec<(Vec<StepEvent>, usize, Window, usize)> = vec![
            // In order within one visit.
            (vec![at(1, 0, 0b001), at(1, 1, 0b010), at(1, 2, 0b100)], 3, Window::Visit, 3),
            // Out of order: the second step before the first does not count.
            (vec![at(1, 0, 0b010), at(1, 1, 0b001), at(1, 2, 0b100)], 3, Window::Visit, 1),
            // ... but a second try later does.
            (vec![at(1, 0, 0b010), at(1, 1, 0b001), at(1, 2, 0b010), at(1, 3, 0b100)], 3, Window::Visit, 3),
            // A visit mode funnel does not cross visits.
            (vec![at(1, 0, 0b001), at(2, 60, 0b010)], 2, Window::Visit, 1),
            (vec![at(1, 0, 0b001), at(2, 60, 0b010)], 2, Window::Span(DAY), 2),
            // Outside the window from the first step.
            (vec![at(1, 0, 0b001), at(2, 2 * 24 * 60, 0b010)], 2, Window::Span(DAY), 1),
            // A later start leaves room for the rest of the window.
            (vec![at(1, 0, 0b001), at(2, 2 * 24 * 60, 0b001), at(2, 2 * 24 * 60 + 5, 0b010)], 2, Window::Span(DAY), 2),
            // A repeated step needs two events: one event is one step.
            (vec![at(1, 0, 0b011)], 2, Window::Visit, 1),
            (vec![at(1, 0, 0b011), at(1, 1, 0b011)], 2, Window::Visit, 2),
            (vec![at(1, 0, 0b111), at(1, 1, 0b111), at(1, 2, 0b111)], 3, Window::Visit, 3),
            // Nothing reached.
            (vec![at(1, 0, 0b100)], 3, Window::Visit, 0),
            (vec![], 2, Window::Visit, 0),
        ];
        for (events, steps, window, expected) in table {
            assert_eq!(furthest(&events, steps, window).steps, expected, "{events:?} {window:?}");
        }
    }

    #[test]
    fn the_start_is_the_visit_of_the_furthest_way_through() {
        let events = [at(1, 0, 0b01), at(2, 10, 0b01), at(2, 11, 0b10)];
        assert_eq!(furthest(&events, 2, Window::Visit), Reached { steps: 2, start_session: Some(2) });
        assert_eq!(furthest(&events[..1], 2, Window::Visit), Reached { steps: 1, start_session: Some(1) });
    }

    #[test]
    fn steps_count_visitors_who_got_at_least_that_far() {
        let figures = figures([3, 1, 2, 0, 3].into_iter(), 3);
        assert_eq!(figures[0], StepFigures { visitors: 4, from_previous: 100.0, from_first: 100.0, dropoff: 0 });
        assert_eq!(figures[1], StepFigures { visitors: 3, from_previous: 75.0, from_first: 75.0, dropoff: 1 });
        assert_eq!(figures[2], StepFigures { visitors: 2, from_previous: 66.67, from_first: 50.0, dropoff: 1 });
        let empty = super::figures(std::iter::empty(), 2);
        assert_eq!(empty[1], StepFigures { visitors: 0, from_previous: 0.0, from_first: 0.0, dropoff: 0 });
    }
}
