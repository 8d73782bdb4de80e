//! The goals panel's groups in one walk over the span's kept events: each
//! goal's events, pageviews, visits and visitors, as a query filtered on
//! that goal alone counts them (`groups` with the goal's condition added),
//! for every goal at once. The explorer page asked once per goal, and each
//! read the page's kept events twice (narrowing them to the goal, then
//! counting): 10% of a filtered page with four goals.

use super::{At, Decided, Events, Tables, each_kept};
use crate::service::explore::{
    counts::Counts,
    range::Span,
    visit_copy::{
        events::{Kind, goal_masks},
        numbers::distinct_per_group,
        table::Lowering,
    },
};

/// Each of the tables' goals' counts over the events of `span` that
/// `events` keeps, in the goals' order (a goal no event reaches counts
/// nothing); `None` when a goal reads a property, there are more than 64,
/// two share a name (a condition on the name would keep both), or the
/// tables do not hold what the filters read.
pub fn goal_groups(tables: Tables<'_>, span: Span, events: Events<'_>, lowering: Lowering) -> Option<Vec<Counts>> {
    let goals = tables.goals;
    let named_once = goals.iter().enumerate().all(|(at, goal)| goals[..at].iter().all(|other| other.name != goal.name));
    if !named_once {
        return None;
    }
    let masks = [goal_masks(tables.events[0], goals)?, goal_masks(tables.events[1], goals)?];
    let mut counts = vec![Counts::default(); goals.len()];
    // The goals each visit was counted in, so a (goal, visit) pair is
    // pushed once per visit.
    let mut counted = vec![0u64; tables.visits[0].len() + tables.visits[1].len()];
    let mut visit_pairs: Vec<(u32, u32)> = Vec::new();
    let mut visitor_pairs: Vec<(u32, u32)> = Vec::new();
    let mut add = |at: At, visit: u32| {
        let table = tables.events[at.table];
        let (pages, names) = &masks[at.table];
        let reached = match table.kind[at.row] {
            Kind::Pageview => pages[table.page[at.row] as usize],
            Kind::Custom => names[table.name[at.row] as usize],
            Kind::Other => 0,
        };
        if reached == 0 {
            return;
        }
        let pageview = i64::from(table.kind[at.row] == Kind::Pageview);
        each_bit(reached, |goal| {
            counts[goal].events += 1;
            counts[goal].pageviews += pageview;
        });
        let new = reached & !counted[visit as usize];
        if new != 0 {
            counted[visit as usize] |= new;
            let visitor = tables.visitor_number(at.table, table.visitor_code(at.row));
            each_bit(new, |goal| {
                visit_pairs.push((goal as u32, visit));
                visitor_pairs.push((goal as u32, visitor));
            });
        }
    };
    match events {
        Events::Filtered(filters) => {
            let decided = Decided::all(filters, tables, lowering)?;
            each_kept(tables, span, &decided, add)?;
        }
        Events::Kept(kept) => kept.each(tables.visits[0].len()).for_each(|(at, visit)| add(at, visit)),
    }
    let visits = distinct_per_group(&visit_pairs, goals.len(), counted.len());
    let visitors = distinct_per_group(&visitor_pairs, goals.len(), tables.visitor_numbers());
    for (goal, counts) in counts.iter_mut().enumerate() {
        counts.visits = visits[goal];
        counts.visitors = visitors[goal];
    }
    Some(counts)
}

/// Calls `each` with the position of every bit set in `bits`, lowest first.
fn each_bit(mut bits: u64, mut each: impl FnMut(usize)) {
    while bits != 0 {
        each(bits.trailing_zeros() as usize);
        bits &= bits - 1;
    }
}
