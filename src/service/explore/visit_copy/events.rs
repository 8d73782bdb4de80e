//! A site's human events held in memory column by column, in the order
//! they happened (time, then the order they were stored), and the step
//! events of a funnel read from them: what `funnels::report` reads from
//! the rows with the same conditions, decided once per distinct page or
//! event name instead of once per event. Free of I/O: `super` fills it.

use std::collections::HashMap;

use crate::service::{
    funnels::compute::StepEvent,
    goals::{Goal, Target},
};

/// What an event is, as the step conditions read `event_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Pageview,
    Custom,
    /// Any other type: it reaches no goal.
    Other,
}

impl Kind {
    /// The code the loader's statement gives `event_type`.
    pub fn of_code(code: i32) -> Kind {
        match code {
            0 => Kind::Pageview,
            1 => Kind::Custom,
            _ => Kind::Other,
        }
    }
}

/// One stored event, as the loader hands it over: its label is its page
/// for a pageview and its name otherwise.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    pub at: i64,
    pub visitor: i64,
    pub visit: i64,
    pub kind: Kind,
    pub label: String,
}

/// Ids met, each given a code in the order first met.
#[derive(Default)]
struct Ids {
    ids: Vec<i64>,
    lookup: HashMap<i64, u32>,
}

impl Ids {
    fn code(&mut self, id: i64) -> u32 {
        *self.lookup.entry(id).or_insert_with(|| {
            self.ids.push(id);
            (self.ids.len() - 1) as u32
        })
    }
}

/// Events in the order they were pushed, which must be the order they
/// happened: a span's events are then one run of the table.
#[derive(Default)]
pub struct EventTable {
    at: Vec<i64>,
    visitor: Vec<u32>,
    visit: Vec<u32>,
    label: Vec<u32>,
    visitors: Ids,
    visits: Ids,
    labels: Vec<(Kind, String)>,
    label_lookup: HashMap<(Kind, String), u32>,
}

impl EventTable {
    pub fn new() -> EventTable {
        EventTable::default()
    }

    pub fn push(&mut self, event: StoredEvent) {
        self.at.push(event.at);
        let visitor = self.visitors.code(event.visitor);
        self.visitor.push(visitor);
        let visit = self.visits.code(event.visit);
        self.visit.push(visit);
        let key = (event.kind, event.label);
        let label = match self.label_lookup.get(&key) {
            Some(code) => *code,
            None => {
                let code = self.labels.len() as u32;
                self.labels.push(key.clone());
                self.label_lookup.insert(key, code);
                code
            }
        };
        self.label.push(label);
    }

    /// Done pushing: the lookups go, and the columns give back what they
    /// reserved beyond their length.
    pub fn seal(&mut self) {
        self.visitors.lookup = HashMap::new();
        self.visits.lookup = HashMap::new();
        self.label_lookup = HashMap::new();
        for column in [&mut self.visitor, &mut self.visit, &mut self.label] {
            column.shrink_to_fit();
        }
        self.at.shrink_to_fit();
    }

    /// The run of events in `[from, to)`.
    fn run(&self, (from, to): (i64, i64)) -> std::ops::Range<usize> {
        self.at.partition_point(|at| *at < from)..self.at.partition_point(|at| *at < to)
    }
}

/// Which steps each distinct label reaches (bit `k` for step `k`), or
/// `None` when a step reads what the table does not hold (a property).
fn label_steps(table: &EventTable, steps: &[Goal]) -> Option<Vec<u8>> {
    let mut bits = vec![0u8; table.labels.len()];
    for (at, goal) in steps.iter().enumerate() {
        for (code, (kind, label)) in table.labels.iter().enumerate() {
            let reached = match &goal.target {
                Target::Page(pattern) => *kind == Kind::Pageview && pattern.matches_path(label),
                Target::Event { prop: Some(_), .. } => return None,
                Target::Event { name, prop: None } => *kind == Kind::Custom && label == name,
            };
            if reached {
                bits[code] |= 1 << at;
            }
        }
    }
    Some(bits)
}

/// The events of `tables` (in the order they happened, each table after
/// the one before) in `span` (from, to) that reach any of `steps`, with their
/// visitor, by visitor and then in the order they happened: the rows the
/// funnel's statement reads. `None` when a step reads a property.
pub fn step_events(tables: &[&EventTable], span: (i64, i64), steps: &[Goal]) -> Option<Vec<(i64, StepEvent)>> {
    let mut found = Vec::new();
    for table in tables {
        let bits = label_steps(table, steps)?;
        for at in table.run(span) {
            let steps = bits[table.label[at] as usize];
            if steps != 0 {
                let event = StepEvent { session: table.visits.ids[table.visit[at] as usize], at: table.at[at], steps };
                found.push((table.visitors.ids[table.visitor[at] as usize], event));
            }
        }
    }
    // Stable: each visitor's events keep the order they happened.
    found.sort_by_key(|(visitor, _)| *visitor);
    Some(found)
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
