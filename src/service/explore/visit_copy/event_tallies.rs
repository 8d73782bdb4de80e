//! The per-event counts of a span read from the event copy: what the flat
//! events statement (`statements::flat_statement`) reads from the rows
//! when a query groups or filters by an event's page or name, with its
//! visit's stored properties joined and time, for the metrics that count
//! events, pageviews, visits and visitors. Each condition is decided once
//! per distinct value. Free of I/O.

mod goal_groups;
mod grouping;
mod kept_events;
mod slots;

use std::collections::HashMap;

pub use goal_groups::goal_groups;
pub use grouping::Distinct;
use grouping::Grouping;
pub use kept_events::{KeptEvents, kept, refined};
use slots::Radix;

use super::{
    events::{EventTable, Kind, VisitEvents},
    table::{Column, Lowering, Table, passes},
};
use crate::service::{
    explore::{
        counts::Groups,
        query::{Condition, Dimension, EventProperty, Filter, Metric},
        range::{Buckets, Span},
    },
    goals::{Goal, Target},
};

/// What an event's page or name is, as a dimension or condition reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Page,
    Name,
    Visit(Column),
}

/// Whether a condition names the goals an event reaches.
fn is_goal(condition: &Condition) -> bool {
    condition.dimension == Dimension::Event(EventProperty::Goal)
}

impl Field {
    fn of(dimension: &Dimension) -> Option<Field> {
        match dimension {
            Dimension::Event(EventProperty::Page) => Some(Field::Page),
            Dimension::Event(EventProperty::Name) => Some(Field::Name),
            _ => Column::of_dimension(dimension).map(Field::Visit),
        }
    }
}

/// Whether the event copy answers a query of these dimensions, filters and
/// metrics: pages, names, stored visit properties and one time dimension;
/// metrics read from counts of events, pageviews, visits and visitors.
pub fn answers(dimensions: &[Dimension], filters: &[Filter], metrics: &[Metric]) -> bool {
    fn held(filter: &Filter) -> bool {
        match filter {
            Filter::Condition(condition) => is_goal(condition) || Field::of(&condition.dimension).is_some(),
            Filter::And(all) | Filter::Or(all) => all.iter().all(held),
            Filter::Not(inner) => held(inner),
            Filter::HasDone { .. } => false,
        }
    }
    // A conversion rate reads the group's visitors here (`conversion`
    // counts what it divides by apart).
    let counted = |metric: &Metric| {
        matches!(
            metric,
            Metric::Visitors
                | Metric::Visits
                | Metric::Pageviews
                | Metric::Events
                | Metric::Percentage
                | Metric::ConversionRate
        )
    };
    dimensions.iter().all(|dimension| dimension.is_time() || Field::of(dimension).is_some())
        && dimensions.iter().filter(|dimension| dimension.is_time()).count() <= 1
        && filters.iter().all(held)
        && metrics.iter().all(counted)
}

/// The event tables (the copy, then the tail) and the visit tables, the
/// row in the visit copy of each visit of the event copy (`visit_rows`)
/// and the rows of its events, the number of each of the tail's visitors
/// (`events::tail_visitor_numbers`), and the site's goals.
#[derive(Clone, Copy)]
pub struct Tables<'a> {
    pub events: [&'a EventTable; 2],
    pub visits: [&'a Table; 2],
    pub held_rows: &'a [u32],
    /// The rows of each visit's events in the event copy.
    pub visit_events: &'a VisitEvents,
    pub tail_visitors: &'a [u32],
    pub goals: &'a [Goal],
}

impl Tables<'_> {
    /// The number of the visitor `code` of the event table `table`: the
    /// copy's by their code, the tail's after them unless the copy has them.
    fn visitor_number(&self, table: usize, code: usize) -> u32 {
        if table == 0 { code as u32 } else { self.tail_visitors[code] }
    }

    /// How many visitor numbers there may be.
    fn visitor_numbers(&self) -> usize {
        self.events[0].visitor_count() + self.events[1].visitor_count()
    }
}

/// The row in `visits` of each visit of `events`, by its code (`u32::MAX`
/// when it is not there): the event copy's visits all are in the visit
/// copy, so this is found once per pair of copies.
pub fn visit_rows(events: &EventTable, visits: &Table) -> Vec<u32> {
    let rows: HashMap<i64, u32> = (0..visits.len()).map(|row| (visits.id(row), row as u32)).collect();
    (0..events.visit_count()).map(|code| rows.get(&events.visit_id(code)).copied().unwrap_or(u32::MAX)).collect()
}

/// An event: its table and row, and its visit's table and row.
#[derive(Clone, Copy)]
struct At {
    table: usize,
    row: usize,
    visit: (usize, usize),
}

impl At {
    /// The event at `row` of `table`, of the visit numbered `visit`: the
    /// copy's visits by row, then the tail's after its `held` ones.
    fn of(table: usize, row: usize, visit: u32, held: usize) -> At {
        let visit = visit as usize;
        At { table, row, visit: if visit < held { (0, visit) } else { (1, visit - held) } }
    }
}

/// A filter decided over the tables' distinct values.
enum Decided {
    Event {
        field: Field,
        passes: [Vec<bool>; 2],
    },
    /// A goal condition: per table, the pages a pageview and the names a
    /// custom event pass it with.
    Goal {
        pages: [Vec<bool>; 2],
        names: [Vec<bool>; 2],
        negated: bool,
    },
    Visit {
        column: Column,
        passes: [Vec<bool>; 2],
    },
    And(Vec<Decided>),
    Or(Vec<Decided>),
    Not(Box<Decided>),
}

impl Decided {
    fn of(filter: &Filter, tables: Tables<'_>, lowering: Lowering) -> Option<Decided> {
        let each = |all: &[Filter]| Decided::all(all, tables, lowering);
        Some(match filter {
            Filter::Condition(condition) => condition_decided(condition, tables, lowering)?,
            Filter::And(all) => Decided::And(each(all)?),
            Filter::Or(all) => Decided::Or(each(all)?),
            Filter::Not(inner) => Decided::Not(Box::new(Decided::of(inner, tables, lowering)?)),
            Filter::HasDone { .. } => return None,
        })
    }

    /// Each of `filters` decided; `None` when one reads what the tables do not hold.
    fn all(filters: &[Filter], tables: Tables<'_>, lowering: Lowering) -> Option<Vec<Decided>> {
        filters.iter().map(|filter| Decided::of(filter, tables, lowering)).collect()
    }

    /// Whether only the event's visit decides it: then it is decided once
    /// per visit.
    fn reads_visit_only(&self) -> bool {
        match self {
            Decided::Visit { .. } => true,
            Decided::Event { .. } | Decided::Goal { .. } => false,
            Decided::And(all) | Decided::Or(all) => all.iter().all(Decided::reads_visit_only),
            Decided::Not(inner) => inner.reads_visit_only(),
        }
    }

    fn passes(&self, tables: Tables<'_>, at: At) -> bool {
        match self {
            Decided::Event { field, passes } => passes[at.table][code_of(tables, *field, at) as usize],
            Decided::Goal { pages, names, negated } => {
                let events = tables.events[at.table];
                let reached = match events.kind[at.row] {
                    Kind::Pageview => pages[at.table][events.page[at.row] as usize],
                    Kind::Custom => names[at.table][events.name[at.row] as usize],
                    Kind::Other => false,
                };
                reached != *negated
            }
            Decided::Visit { column, passes } => {
                passes[at.visit.0][code_of(tables, Field::Visit(*column), at) as usize]
            }
            Decided::And(all) => all.iter().all(|inner| inner.passes(tables, at)),
            Decided::Or(all) => all.iter().any(|inner| inner.passes(tables, at)),
            Decided::Not(inner) => !inner.passes(tables, at),
        }
    }
}

/// The code of an event's `field` in its own table (the event's, or its visit's).
fn code_of(tables: Tables<'_>, field: Field, at: At) -> u32 {
    match field {
        Field::Page => tables.events[at.table].page[at.row],
        Field::Name => tables.events[at.table].name[at.row],
        Field::Visit(column) => tables.visits[at.visit.0].code(column, at.visit.1),
    }
}

/// A goal condition as the statement reads it (`sql::goal_condition`): the
/// event reaches one of the goals whose name the condition keeps; `None`
/// when one of them reads a property.
fn goal_decided(condition: &Condition, tables: Tables<'_>) -> Option<Decided> {
    let kept: Vec<&Goal> = tables.goals.iter().filter(|goal| condition.keeps(&goal.name)).collect();
    if kept.iter().any(|goal| matches!(goal.target, Target::Event { prop: Some(_), .. })) {
        return None;
    }
    let pages = tables.events.map(|table| {
        let patterns = kept.iter().filter_map(|goal| match &goal.target {
            Target::Page(pattern) => Some(pattern),
            Target::Event { .. } => None,
        });
        let patterns: Vec<_> = patterns.collect();
        table.pages.distinct.iter().map(|page| patterns.iter().any(|pattern| pattern.matches_path(page))).collect()
    });
    let names = tables.events.map(|table| {
        let wanted: Vec<&str> = kept
            .iter()
            .filter_map(|goal| match &goal.target {
                Target::Event { name, .. } => Some(name.as_str()),
                Target::Page(_) => None,
            })
            .collect();
        table.names.distinct.iter().map(|name| wanted.contains(&name.as_str())).collect()
    });
    Some(Decided::Goal { pages, names, negated: condition.operator.negated() })
}

fn condition_decided(condition: &Condition, tables: Tables<'_>, lowering: Lowering) -> Option<Decided> {
    if is_goal(condition) {
        return goal_decided(condition, tables);
    }
    let decide = |values: &mut dyn Iterator<Item = Option<&str>>| -> Vec<bool> {
        values.map(|value| passes(condition, value, lowering)).collect()
    };
    Some(match Field::of(&condition.dimension)? {
        Field::Visit(column) => Decided::Visit {
            column,
            passes: tables.visits.map(|table| decide(&mut table.distinct(column).iter().map(|value| value.as_deref()))),
        },
        field => Decided::Event {
            field,
            passes: tables.events.map(|table| {
                let texts = if field == Field::Page { &table.pages } else { &table.names };
                decide(&mut texts.distinct.iter().map(|value| Some(value.as_str())))
            }),
        },
    })
}

/// What a dimension of a group is read from: a field, or time.
#[derive(Clone, Copy)]
enum Part {
    Field(Field),
    Time,
}

/// Where `groups` finds its events: filtered as it reads, or found before.
pub enum Events<'a> {
    Filtered(&'a [Filter]),
    /// Those `kept` found for the same span.
    Kept(&'a KeptEvents),
}

/// The groups of the events in `span` that pass `filters`, by
/// `dimensions` (time in `buckets`), counted as the flat statement counts
/// them (their visits and visitors as `distinct` asks, else 0); `None`
/// when the tables do not hold what the query reads, or an event's visit
/// is not in the visit tables.
pub fn groups(
    tables: Tables<'_>,
    (span, buckets): (Span, Option<&Buckets>),
    (dimensions, events, distinct): (&[Dimension], Events<'_>, Distinct),
    lowering: Lowering,
) -> Option<Groups> {
    let parts = dimensions
        .iter()
        .map(|dimension| match Field::of(dimension) {
            Some(field) => Some(Part::Field(field)),
            None if dimension.is_time() && buckets.is_some() => Some(Part::Time),
            None => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let radix = Radix::of(&parts, tables, span, buckets)?;
    let mut grouping = Grouping::new(tables, parts, radix, (buckets, distinct));
    match events {
        Events::Filtered(filters) => {
            let decided = Decided::all(filters, tables, lowering)?;
            each_kept(tables, span, &decided, |at, visit| grouping.add(at, visit))?;
        }
        Events::Kept(kept) => {
            for (at, visit) in kept.each(tables.visits[0].len()) {
                grouping.add(at, visit);
            }
        }
    }
    Some(grouping.finish())
}

/// A visit's verdict on the filters only its visit decides, found on its
/// first event in the span.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Unread,
    Kept,
    Dropped,
}

/// Hands `each` every event in `span` that passes `decided`, with its
/// visit's number: the copy's visits by row, then the tail's after them.
/// `None` when an event's visit is not in the visit tables. Filters on the
/// visit are decided once per visit. Under such a filter the copy's events
/// are read visit by visit (`visit_kept`): those of a visit it drops are
/// never read, where a walk of the span read all of them; the tail's (a
/// day or two) are walked in time order, as are the copy's when no filter
/// reads the visit alone.
fn each_kept(tables: Tables<'_>, span: Span, decided: &[Decided], mut each: impl FnMut(At, u32)) -> Option<()> {
    let (by_visit, by_event): (Vec<&Decided>, Vec<&Decided>) =
        decided.iter().partition(|filter| filter.reads_visit_only());
    let filters = (&by_visit[..], &by_event[..]);
    if by_visit.is_empty() {
        walk_kept(tables, 0, span, filters, &mut each)?;
    } else {
        visit_kept(tables, span, filters, &mut each)?;
    }
    walk_kept(tables, 1, span, filters, &mut each)
}

/// The copy's events in `span` that pass the filters, visit by visit (each
/// visit's in time order), with their visit's row in the visit copy.
fn visit_kept(
    tables: Tables<'_>,
    span: Span,
    (by_visit, by_event): (&[&Decided], &[&Decided]),
    each: &mut impl FnMut(At, u32),
) -> Option<()> {
    let (events, held_count) = (tables.events[0], tables.visits[0].len());
    for code in 0..events.visit_count() {
        let rows = tables.visit_events.rows(code);
        // The visit's events in the span: they are in time order.
        let from = rows.partition_point(|row| events.at[*row as usize] < span.from);
        let to = rows.partition_point(|row| events.at[*row as usize] < span.to);
        if from == to {
            continue;
        }
        let visit = tables.held_rows[code];
        if visit == u32::MAX {
            return None;
        }
        let first = At::of(0, rows[from] as usize, visit, held_count);
        if !by_visit.iter().all(|filter| filter.passes(tables, first)) {
            continue;
        }
        for row in &rows[from..to] {
            let at = At::of(0, *row as usize, visit, held_count);
            if by_event.iter().all(|filter| filter.passes(tables, at)) {
                each(at, visit);
            }
        }
    }
    Some(())
}

/// The events of one event table (0: the copy, 1: the tail) in `span` that
/// pass the filters, in time order; the filters on the visit decided on the
/// visit's first event in the span.
fn walk_kept(
    tables: Tables<'_>,
    table: usize,
    span: Span,
    (by_visit, by_event): (&[&Decided], &[&Decided]),
    each: &mut impl FnMut(At, u32),
) -> Option<()> {
    let held_count = tables.visits[0].len();
    let table_events = tables.events[table];
    let run = table_events.run((span.from, span.to));
    // The tail's events' visits, by id: those that reach into its stretch.
    let mut tail_numbered: HashMap<i64, u32> = HashMap::new();
    if table == 1 && !run.is_empty() {
        let reach = Span { from: table_events.at[run.start], ..span };
        for (at, visits) in tables.visits.iter().enumerate() {
            let offset = if at == 0 { 0 } else { held_count };
            tail_numbered.extend(visits.reaching(reach).map(|(row, id)| (id, (offset + row) as u32)));
        }
    }
    // The tail's visits' numbers, each found once.
    let mut visit_numbers = vec![u32::MAX; if table == 0 { 0 } else { table_events.visit_count() }];
    let mut verdicts = vec![Verdict::Unread; table_events.visit_count()];
    for row in run {
        let code = table_events.visit_code(row);
        if verdicts[code] == Verdict::Dropped {
            continue;
        }
        let visit = if table == 0 {
            tables.held_rows[code]
        } else if visit_numbers[code] == u32::MAX {
            let number = *tail_numbered.get(&table_events.visit_id(code))?;
            visit_numbers[code] = number;
            number
        } else {
            visit_numbers[code]
        };
        if visit == u32::MAX {
            return None;
        }
        let at = At::of(table, row, visit, held_count);
        if verdicts[code] == Verdict::Unread {
            let kept = by_visit.iter().all(|filter| filter.passes(tables, at));
            verdicts[code] = if kept { Verdict::Kept } else { Verdict::Dropped };
            if !kept {
                continue;
            }
        }
        if by_event.iter().all(|filter| filter.passes(tables, at)) {
            each(at, visit);
        }
    }
    Some(())
}

#[cfg(test)]
#[path = "event_tallies_tests.rs"]
mod tests;
