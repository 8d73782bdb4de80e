//! Which alerts a batch fires (design §15), decided in memory with no I/O:
//! a visitor's score crossing its site's hot threshold, an identify, a form
//! submission. The outbox's unique key makes each fire once per visitor and
//! destination, however often the condition holds again.

use super::sessionize::{Batch, SlotIndex, VisitorIx};
pub use crate::service::alerts::trigger::AlertTrigger;
use crate::service::scoring;

/// How one visitor changed in a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VisitorChange {
    /// The score (recency included) before and after the batch.
    pub score_before: i32,
    pub score_after: i32,
    /// The batch identified the visitor, who was anonymous until then.
    pub identified: bool,
    /// The batch holds a `form_submit` event of the visitor.
    pub submitted_form: bool,
    /// Bots never fire an alert on their own activity.
    pub is_bot: bool,
}

/// Whether `change` fires a destination with `trigger` on a site whose hot
/// threshold is `hot_threshold`.
pub fn fires(trigger: AlertTrigger, change: &VisitorChange, hot_threshold: i32) -> bool {
    match trigger {
        AlertTrigger::BecameHot => {
            !change.is_bot && change.score_before < hot_threshold && change.score_after >= hot_threshold
        }
        AlertTrigger::Identified => change.identified,
        AlertTrigger::FormSubmitted => !change.is_bot && change.submitted_form,
        // An account's own figures decide it (`account_alerts`), not one visitor's.
        // Fired by what records or ties a conversion, not by activity.
        AlertTrigger::AccountBecameHot | AlertTrigger::Converted => false,
    }
}

/// Whether `change` could fire anything, so a batch with no such visitor
/// skips looking up destinations.
pub fn may_fire(change: &VisitorChange) -> bool {
    change.identified || (!change.is_bot && (change.submitted_form || change.score_after > change.score_before))
}

/// How each changed visitor of the batch changed, for those that may fire
/// an alert. Scores include recency as of `now`, as `hot` is read.
pub(super) fn changes(batch: &Batch<'_>, now: i64) -> Vec<(VisitorIx, VisitorChange)> {
    (0..batch.visitors.len())
        .map(VisitorIx::new)
        .filter(|&v| batch.visitors[v].dirty)
        .map(|v| {
            let slot = &batch.visitors[v];
            let change = VisitorChange {
                score_before: slot.before.map_or(0, |(stored, seen)| scoring::total(stored, seen, now)),
                score_after: scoring::total(slot.model.score, slot.model.last_seen, now),
                identified: slot.identified,
                submitted_form: slot.submitted_form,
                is_bot: slot.model.is_bot,
            };
            (v, change)
        })
        .filter(|(_, change)| may_fire(change))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{AlertTrigger::*, *};

    fn change(before: i32, after: i32, identified: bool, submitted_form: bool, is_bot: bool) -> VisitorChange {
        VisitorChange { score_before: before, score_after: after, identified, submitted_form, is_bot }
    }

    #[test]
    fn fires_on_its_condition_only() {
        let cases = [
            // trigger, change, threshold, fires
            (BecameHot, change(60, 75, false, false, false), 70, true),
            (BecameHot, change(69, 70, false, false, false), 70, true),
            (BecameHot, change(70, 80, false, false, false), 70, false),
            (BecameHot, change(50, 69, false, false, false), 70, false),
            (BecameHot, change(0, 40, false, false, false), 40, true),
            (BecameHot, change(60, 90, false, false, true), 70, false),
            (BecameHot, change(80, 60, false, false, false), 70, false),
            (Identified, change(10, 25, true, false, false), 70, true),
            (Identified, change(10, 25, true, false, true), 70, true),
            (Identified, change(10, 25, false, false, false), 70, false),
            (FormSubmitted, change(10, 25, false, true, false), 70, true),
            (FormSubmitted, change(10, 25, false, true, true), 70, false),
            (FormSubmitted, change(10, 25, true, false, false), 70, false),
        ];
        for (trigger, change, threshold, expected) in cases {
            assert_eq!(fires(trigger, &change, threshold), expected, "{trigger:?} {change:?} at {threshold}");
        }
    }

    #[test]
    fn may_fire_whenever_some_trigger_could() {
        let cases = [
            (change(10, 10, false, false, false), false),
            (change(10, 12, false, false, false), true),
            (change(10, 12, false, false, true), false),
            (change(10, 10, true, false, true), true),
            (change(10, 10, false, true, false), true),
            (change(10, 10, false, true, true), false),
        ];
        for (change, expected) in cases {
            assert_eq!(may_fire(&change), expected, "{change:?}");
            let any = AlertTrigger::ALL.into_iter().any(|trigger| (0..=100).any(|t| fires(trigger, &change, t)));
            assert_eq!(any, expected, "may_fire agrees with fires for {change:?}");
        }
    }

    /// What `changes` reads from a batch: who was identified before, and the
    /// score a visitor had before (none for one the batch created).
    #[test]
    fn changes_compare_against_the_visitor_as_it_was() {
        use crate::service::tracking::sessionize::{new_visitor, tests::identify_command};
        const NOW: i64 = 1_800_000_000_000;
        let command = identify_command("v", Some("ada"), None, NOW);
        let cases = [
            // created by the batch, status and stored score before: (identified, score before), or
            // nothing when the batch changed nothing an alert looks at
            (true, "anonymous", 0, Some((true, 0))),
            (false, "anonymous", 10, Some((true, 25))),
            (false, "identified", 10, None),
            (false, "identified", 50, None),
        ];
        for (created, status, score, expected) in cases {
            let mut batch = Batch::new();
            let mut visitor = new_visitor(1, "v", NOW);
            visitor.status = status.to_owned();
            visitor.score = score;
            batch.add_visitor(visitor, None, created);
            batch.identify(&command);
            batch.identify(&command);
            let found: Vec<_> = changes(&batch, NOW).into_iter().map(|(_, c)| (c.identified, c.score_before)).collect();
            assert_eq!(found, Vec::from_iter(expected), "created {created}, {status}, score {score}");
        }
    }

    #[test]
    fn names_round_trip() {
        for trigger in AlertTrigger::ALL {
            assert_eq!(AlertTrigger::parse(trigger.as_str()), Some(trigger));
        }
        assert_eq!(AlertTrigger::parse("BECAME_HOT"), None);
    }
}
