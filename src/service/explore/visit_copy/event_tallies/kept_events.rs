//! The events a page's filters keep, found once and grouped by each of
//! its event panels.

use super::{At, Decided, Tables, each_kept};
use crate::service::explore::{query::Filter, range::Span, visit_copy::table::Lowering};

/// The events of a span that pass a query's filters: found once per
/// snapshot, span and filters, then grouped by each panel of the explorer
/// page, which all share the page's filters (`Reading::event_groups`).
/// Each is its row and its visit's number (`each_kept`), 8 bytes: a
/// filter that keeps all of 10M events holds 80 MB for the snapshot.
pub struct KeptEvents {
    events: Vec<(u32, u32)>,
    /// Where the tail's events begin.
    tail_from: usize,
}

/// The events in `span` that pass `filters`; `None` as `groups`.
pub fn kept(tables: Tables<'_>, span: Span, filters: &[Filter], lowering: Lowering) -> Option<KeptEvents> {
    let decided = Decided::all(filters, tables, lowering)?;
    let mut kept = KeptEvents { events: Vec::new(), tail_from: 0 };
    each_kept(tables, span, &decided, |at, visit| kept.push(at, visit))?;
    Some(kept)
}

impl KeptEvents {
    /// Adds an event: the copy's all come before the tail's.
    fn push(&mut self, at: At, visit: u32) {
        self.tail_from += usize::from(at.table == 0);
        self.events.push((at.row as u32, visit));
    }

    /// Each event with its visit's number, the copy's before the tail's.
    pub(super) fn each(&self, held: usize) -> impl Iterator<Item = (At, u32)> + '_ {
        self.events.iter().enumerate().map(move |(index, (row, visit))| {
            let table = usize::from(index >= self.tail_from);
            (At::of(table, *row as usize, *visit, held), *visit)
        })
    }
}

/// The events of `kept` that also pass `more`: a goal's events under the
/// page's filters, read from the events those filters kept rather than
/// from all of the span's.
pub fn refined(tables: Tables<'_>, kept: &KeptEvents, more: &[Filter], lowering: Lowering) -> Option<KeptEvents> {
    let decided = Decided::all(more, tables, lowering)?;
    let mut narrowed = KeptEvents { events: Vec::new(), tail_from: 0 };
    for (at, visit) in kept.each(tables.visits[0].len()) {
        if decided.iter().all(|filter| filter.passes(tables, at)) {
            narrowed.push(at, visit);
        }
    }
    Some(narrowed)
}
