//! The per-event counts of a span read from the event copy: what the flat
//! events statement (`statements::flat_statement`) reads from the rows
//! when a query groups or filters by an event's page or name, with its
//! visit's stored properties joined and time, for the metrics that count
//! events, pageviews, visits and visitors. Each condition is decided once
//! per distinct value. Free of I/O.

mod slots;

use std::collections::HashMap;

use slots::{Radix, distinct_per_group};

use super::{
    events::{EventTable, Kind},
    numbers::Numbers,
    table::{Column, Lowering, Table, passes},
};
use crate::service::{
    explore::{
        counts::{Counts, Groups, Key},
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
/// row in the visit copy of each visit of the event copy (`visit_rows`),
/// and the site's goals.
#[derive(Clone, Copy)]
pub struct Tables<'a> {
    pub events: [&'a EventTable; 2],
    pub visits: [&'a Table; 2],
    pub held_rows: &'a [u32],
    pub goals: &'a [Goal],
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
        let each =
            |all: &[Filter]| all.iter().map(|inner| Decided::of(inner, tables, lowering)).collect::<Option<Vec<_>>>();
        Some(match filter {
            Filter::Condition(condition) => condition_decided(condition, tables, lowering)?,
            Filter::And(all) => Decided::And(each(all)?),
            Filter::Or(all) => Decided::Or(each(all)?),
            Filter::Not(inner) => Decided::Not(Box::new(Decided::of(inner, tables, lowering)?)),
            Filter::HasDone { .. } => return None,
        })
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

/// The groups of the events in `span` that pass `filters`, by
/// `dimensions` (time in `buckets`), counted as the flat statement counts
/// them; `None` when the tables do not hold what the query reads, or an
/// event's visit is not in the visit tables.
pub fn groups(
    tables: Tables<'_>,
    (span, buckets): (Span, Option<&Buckets>),
    (dimensions, filters): (&[Dimension], &[Filter]),
    lowering: Lowering,
) -> Option<Groups> {
    let decided = filters.iter().map(|filter| Decided::of(filter, tables, lowering)).collect::<Option<Vec<_>>>()?;
    let parts = dimensions
        .iter()
        .map(|dimension| match Field::of(dimension) {
            Some(field) => Some(Part::Field(field)),
            None if dimension.is_time() && buckets.is_some() => Some(Part::Time),
            None => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let radix = Radix::of(&parts, tables, span, buckets)?;
    // Visits are numbered by row: the copy's, then the tail's after them.
    let held_count = tables.visits[0].len();
    let place = |number: usize| if number < held_count { (0, number) } else { (1, number - held_count) };
    // The tail's events' visits, by id: those that reach into its stretch.
    let mut tail_numbered: HashMap<i64, u32> = HashMap::new();
    let tail_run = tables.events[1].run((span.from, span.to));
    if !tail_run.is_empty() {
        let reach = Span { from: tables.events[1].at[tail_run.start], ..span };
        for (table, visits) in tables.visits.iter().enumerate() {
            let offset = if table == 0 { 0 } else { held_count };
            tail_numbered.extend(visits.reaching(reach).map(|(row, id)| (id, (offset + row) as u32)));
        }
    }
    // Visitors are numbered by their code in the copy; a tail's visitor
    // not in it after them, each found once.
    let held_visitors = tables.events[0].visitor_count();
    let mut tail_visitors = vec![u32::MAX; tables.events[1].visitor_count()];
    let mut visitor_number = |table: usize, code: usize| -> u32 {
        if table == 0 {
            return code as u32;
        }
        if tail_visitors[code] == u32::MAX {
            let id = tables.events[1].visitor_id(code);
            tail_visitors[code] = tables.events[0].visitor_code_of(id).unwrap_or((held_visitors + code) as u32);
        }
        tail_visitors[code]
    };
    let mut numbers = Numbers::new(radix.slots);
    let (mut slots, mut events, mut pageviews): (Vec<u64>, Vec<i64>, Vec<i64>) = Default::default();
    // (group, visit) and (group, visitor) pairs, each once per run of a
    // visit's events in one group: the last group each visit was counted in.
    let visit_count = held_count + tables.visits[1].len();
    let mut last_group = vec![u32::MAX; visit_count];
    let mut visit_pairs: Vec<(u32, u32)> = Vec::new();
    let mut visitor_pairs: Vec<(u32, u32)> = Vec::new();
    for (table, table_events) in tables.events.iter().enumerate() {
        // The tail's visits' numbers, each found once.
        let mut visit_numbers = vec![u32::MAX; if table == 0 { 0 } else { table_events.visit_count() }];
        for row in table_events.run((span.from, span.to)) {
            let code = table_events.visit_code(row);
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
            let at = At { table, row, visit: place(visit as usize) };
            if !decided.iter().all(|filter| filter.passes(tables, at)) {
                continue;
            }
            let slot = radix.slot(&parts, tables, at, buckets);
            let group = numbers.of(slot, slots.len() as u32);
            if group as usize == slots.len() {
                slots.push(slot);
                events.push(0);
                pageviews.push(0);
            }
            events[group as usize] += 1;
            pageviews[group as usize] += i64::from(table_events.kind[row] == Kind::Pageview);
            if last_group[visit as usize] != group {
                last_group[visit as usize] = group;
                visit_pairs.push((group, visit));
                visitor_pairs.push((group, visitor_number(table, table_events.visitor_code(row))));
            }
        }
    }
    // Groups of the same values in both tables are one.
    let mut named: HashMap<Vec<Key>, u32> = HashMap::new();
    let mut keys: Vec<Vec<Key>> = Vec::new();
    let renamed: Vec<u32> = slots
        .iter()
        .map(|slot| {
            let key = radix.key(&parts, tables, *slot);
            *named.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                (keys.len() - 1) as u32
            })
        })
        .collect();
    let mut counts = vec![Counts::default(); keys.len()];
    for (group, name) in renamed.iter().enumerate() {
        counts[*name as usize].events += events[group];
        counts[*name as usize].pageviews += pageviews[group];
    }
    for pairs in [&mut visit_pairs, &mut visitor_pairs] {
        for (group, _) in pairs.iter_mut() {
            *group = renamed[*group as usize];
        }
    }
    let visits = distinct_per_group(&visit_pairs, keys.len(), visit_count);
    let visitor_count = held_visitors + tables.events[1].visitor_count();
    let visitors = distinct_per_group(&visitor_pairs, keys.len(), visitor_count);
    let mut groups = Groups::new();
    for (name, key) in keys.into_iter().enumerate() {
        let mut counts = std::mem::take(&mut counts[name]);
        counts.visits = visits[name];
        counts.visitors = visitors[name];
        groups.insert(key, counts);
    }
    Some(groups)
}

#[cfg(test)]
#[path = "event_tallies_tests.rs"]
mod tests;
