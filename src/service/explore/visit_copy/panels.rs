//! The explorer page's visit panels from one pass over the visit copy
//! (design §17). Each panel alone is a `Tallies` run over the span's
//! visits: at 1M events a filtered page read the same 40k visits fourteen
//! times, 3 ms a time, and sorted each group's visitors to count them.
//! Here the visits the filters keep are gathered once and their visitors
//! numbered once; each panel is then one walk over them in the tables'
//! order (reading each column's codes in turn, not at random), its
//! distinct visitors counted from (group, visitor) pairs. The figures are
//! those of `Tallies`, panel by panel. Free of I/O.

use std::collections::HashMap;

use rayon::prelude::*;

use super::{
    numbers::distinct_per_group,
    table::{Column, Lowering, Pieces, Table},
};
use crate::service::explore::{
    counts::{Counts, Groups, Key},
    query::Filter,
    range::Span,
};

/// A kept visit (a cut one once per piece, as `Tallies` counts it).
struct Kept {
    visitor: i64,
    /// The visitor's number among the kept visits' visitors.
    number: u32,
    /// Which table, and the visit's row there.
    table: usize,
    at: usize,
    events: i64,
    pageviews: i64,
    bounce: bool,
    seconds: i64,
}

/// The span's whole under the filters (without its identified and hot),
/// its visitors in order, and the groups of each column asked, in order.
pub struct Panels {
    pub whole: Counts,
    pub visitors: Vec<i64>,
    pub groups: Vec<Groups>,
}

/// Counts the visits of `tables` that reach into `span` with events in it
/// and pass `filters`, as a whole and grouped by each of `columns`; `None`
/// when a filter names what the tables do not hold.
pub fn panels(
    tables: [&Table; 2],
    span: Span,
    (columns, filters): (&[Column], &[Filter]),
    pieces: &Pieces,
    lowering: Lowering,
) -> Option<Panels> {
    let mut kept = Vec::new();
    for (which, table) in tables.iter().enumerate() {
        let decided = table.decide(filters, lowering)?;
        table.kept((span, None), &decided, pieces, |at, _, (events, pageviews)| {
            let (bounce, seconds) = table.bounce_and_seconds(at);
            let visitor = table.visitor(at);
            kept.push(Kept { visitor, number: 0, table: which, at, events, pageviews, bounce, seconds });
        });
    }
    // Visitors numbered in order: one sort of the kept visits' visitors.
    let mut order: Vec<(i64, u32)> = kept.iter().enumerate().map(|(at, visit)| (visit.visitor, at as u32)).collect();
    order.sort_unstable();
    let mut visitors: Vec<i64> = Vec::new();
    for (visitor, at) in order {
        if visitors.last() != Some(&visitor) {
            visitors.push(visitor);
        }
        kept[at as usize].number = (visitors.len() - 1) as u32;
    }
    let whole = if kept.is_empty() {
        Counts::default()
    } else {
        let mut whole = Counts { visitors: visitors.len() as i64, ..Counts::default() };
        kept.iter().for_each(|visit| add(&mut whole, visit));
        whole
    };
    // Each panel is a walk of its own over the kept visits: on the counting
    // threads (`counting`) they are shared out between the cores.
    let groups = columns.par_iter().map(|column| panel(tables, &kept, visitors.len(), *column)).collect();
    Some(Panels { whole, visitors, groups })
}

/// The groups of one column over the kept visits, whose visitors are
/// numbered below `visitors`.
fn panel(tables: [&Table; 2], kept: &[Kept], visitors: usize, column: Column) -> Groups {
    // Each table's codes numbered as groups when first met: the tables
    // number the same value differently, the groups by value.
    let mut numbered: [Vec<u32>; 2] = tables.map(|table| vec![u32::MAX; table.distinct(column).len()]);
    let mut numbers: HashMap<&Option<String>, u32> = HashMap::new();
    let mut groups: Vec<(&Option<String>, Counts)> = Vec::new();
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(kept.len());
    for visit in kept {
        let table = tables[visit.table];
        let code = table.code(column, visit.at) as usize;
        let mut number = numbered[visit.table][code];
        if number == u32::MAX {
            let value = &table.distinct(column)[code];
            number = *numbers.entry(value).or_insert_with(|| {
                groups.push((value, Counts::default()));
                (groups.len() - 1) as u32
            });
            numbered[visit.table][code] = number;
        }
        add(&mut groups[number as usize].1, visit);
        pairs.push((number, visit.number));
    }
    let distinct = distinct_per_group(&pairs, groups.len(), visitors);
    let named = groups.into_iter().zip(distinct).map(|((value, mut counts), visitors)| {
        counts.visitors = visitors;
        (vec![Key::Text(value.clone())], counts)
    });
    named.collect()
}

/// Adds a kept visit's counts, all but its visitor.
fn add(counts: &mut Counts, visit: &Kept) {
    counts.visits += 1;
    counts.events += visit.events;
    counts.pageviews += visit.pageviews;
    counts.bounces += i64::from(visit.bounce);
    counts.seconds += visit.seconds;
}

#[cfg(test)]
#[path = "panels_tests.rs"]
mod tests;
