//! A site's human events held in memory column by column, in the order
//! they happened (time, then the order they were stored), and the step
//! events of a funnel read from them: what `funnels::report` reads from
//! the rows with the same conditions, decided once per distinct page or
//! event name instead of once per event. Free of I/O: `super` fills it.

use std::collections::HashMap;

use super::table::Pieces;
use crate::service::{
    explore::range::{Buckets, Span},
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

/// One stored event, as the loader hands it over: its page, and its name
/// as `event:name` reads it (`pageview` for a pageview).
#[derive(Debug, Clone)]
pub struct StoredEvent {
    pub at: i64,
    pub visitor: i64,
    pub visit: i64,
    pub kind: Kind,
    pub page: String,
    pub name: String,
}

/// Ids met, each given a code in the order first met.
#[derive(Default)]
struct Ids {
    ids: Vec<i64>,
    lookup: HashMap<i64, u32>,
    /// The codes in the order of their ids, once sealed: a third of the
    /// lookup's size, walked to number a tail's visitors and searched for
    /// a visit's events.
    by_id: Vec<u32>,
}

impl Ids {
    fn code(&mut self, id: i64) -> u32 {
        *self.lookup.entry(id).or_insert_with(|| {
            self.ids.push(id);
            (self.ids.len() - 1) as u32
        })
    }
}

/// Texts met, each given a code in the order first met.
#[derive(Default)]
pub struct Texts {
    pub distinct: Vec<String>,
    lookup: HashMap<String, u32>,
}

impl Texts {
    fn code(&mut self, text: String) -> u32 {
        if let Some(code) = self.lookup.get(&text) {
            return *code;
        }
        let code = self.distinct.len() as u32;
        self.lookup.insert(text.clone(), code);
        self.distinct.push(text);
        code
    }
}

/// Events in the order they were pushed, which must be the order they
/// happened: a span's events are then one run of the table.
#[derive(Default)]
pub struct EventTable {
    pub(super) at: Vec<i64>,
    visitor: Vec<u32>,
    visit: Vec<u32>,
    pub(super) kind: Vec<Kind>,
    pub(super) page: Vec<u32>,
    pub(super) name: Vec<u32>,
    visitors: Ids,
    visits: Ids,
    pub(super) pages: Texts,
    pub(super) names: Texts,
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
        self.kind.push(event.kind);
        let page = self.pages.code(event.page);
        self.page.push(page);
        let name = self.names.code(event.name);
        self.name.push(name);
    }

    /// Done pushing: the lookups go, and the columns give back what they
    /// reserved beyond their length.
    pub fn seal(&mut self) {
        self.visitors.lookup = HashMap::new();
        let mut by_id: Vec<u32> = (0..self.visitors.ids.len() as u32).collect();
        by_id.sort_unstable_by_key(|code| self.visitors.ids[*code as usize]);
        self.visitors.by_id = by_id;
        let mut by_id: Vec<u32> = (0..self.visits.ids.len() as u32).collect();
        by_id.sort_unstable_by_key(|code| self.visits.ids[*code as usize]);
        self.visits.by_id = by_id;
        self.visits.lookup = HashMap::new();
        self.pages.lookup = HashMap::new();
        self.names.lookup = HashMap::new();
        for column in [&mut self.visitor, &mut self.visit, &mut self.page, &mut self.name] {
            column.shrink_to_fit();
        }
        self.at.shrink_to_fit();
        self.kind.shrink_to_fit();
    }

    /// The run of events in `[from, to)`.
    pub(super) fn run(&self, (from, to): (i64, i64)) -> std::ops::Range<usize> {
        self.at.partition_point(|at| *at < from)..self.at.partition_point(|at| *at < to)
    }

    /// How many visits the table's events are of.
    pub(super) fn visit_count(&self) -> usize {
        self.visits.ids.len()
    }

    /// The code of the visit of the event at `at`.
    pub(super) fn visit_code(&self, at: usize) -> usize {
        self.visit[at] as usize
    }

    /// The id of the visit of `code`.
    pub(super) fn visit_id(&self, code: usize) -> i64 {
        self.visits.ids[code]
    }

    /// The code of the visit `id`, if the table holds events of it.
    pub(super) fn visit_code_of(&self, id: i64) -> Option<usize> {
        let (ids, by_id) = (&self.visits.ids, &self.visits.by_id);
        let at = by_id.partition_point(|code| ids[*code as usize] < id);
        by_id.get(at).map(|code| *code as usize).filter(|code| ids[*code] == id)
    }

    /// How many visitors the table's events are of.
    pub(super) fn visitor_count(&self) -> usize {
        self.visitors.ids.len()
    }

    /// The code of the visitor of the event at `at`.
    pub(super) fn visitor_code(&self, at: usize) -> usize {
        self.visitor[at] as usize
    }

    /// The id of the visitor of `code`.
    pub(super) fn visitor_id(&self, code: usize) -> i64 {
        self.visitors.ids[code]
    }
}

/// The rows of each visit's events in an event table, by the visit's code,
/// each visit's in the order they happened: where a filter on the visit
/// keeps a few of them, their events are read visit by visit rather than
/// by walking every event of the span (`event_tallies::each_kept`).
pub struct VisitEvents {
    starts: Vec<u32>,
    rows: Vec<u32>,
}

impl VisitEvents {
    /// Groups the table's rows by visit with a counting sort (rows stay in
    /// time order within each visit).
    pub fn of(table: &EventTable) -> VisitEvents {
        let mut starts = vec![0u32; table.visit_count() + 1];
        for visit in &table.visit {
            starts[*visit as usize + 1] += 1;
        }
        for at in 1..starts.len() {
            starts[at] += starts[at - 1];
        }
        let mut next = starts.clone();
        let mut rows = vec![0u32; table.visit.len()];
        for (row, visit) in table.visit.iter().enumerate() {
            let slot = &mut next[*visit as usize];
            rows[*slot as usize] = row as u32;
            *slot += 1;
        }
        VisitEvents { starts, rows }
    }

    /// The rows of the events of the visit `code`, in time order.
    pub fn rows(&self, code: usize) -> &[u32] {
        &self.rows[self.starts[code] as usize..self.starts[code + 1] as usize]
    }
}

/// The human events and pageviews in `span`, per bucket, of each of the
/// visits `ids` with events there, from the event copy and its tail (each
/// with its rows by visit): what `load::cut_pieces` reads from the rows.
pub(super) fn cut_pieces(
    tables: [(&EventTable, &VisitEvents); 2],
    (span, buckets): (Span, Option<&Buckets>),
    ids: &[i64],
) -> Pieces {
    let mut pieces = Pieces::new();
    for &id in ids {
        let mut found: Vec<(i64, i64, i64)> = Vec::new();
        for (table, by_visit) in tables {
            let Some(code) = table.visit_code_of(id) else { continue };
            for row in by_visit.rows(code).iter().map(|row| *row as usize) {
                let at = table.at[row];
                if at < span.from || at >= span.to {
                    continue;
                }
                let bucket = buckets.map_or(0, |buckets| buckets.of(at));
                let pageview = i64::from(table.kind[row] == Kind::Pageview);
                // A zone's day can step back where its clocks go back at
                // midnight: the pieces are found by bucket, not in order.
                match found.iter_mut().find(|(piece, ..)| *piece == bucket) {
                    Some((_, events, pageviews)) => (*events, *pageviews) = (*events + 1, *pageviews + pageview),
                    None => found.push((bucket, 1, pageview)),
                }
            }
        }
        if !found.is_empty() {
            pieces.insert(id, found);
        }
    }
    pieces
}

/// Which of `goals` each distinct page reaches as a pageview, and each
/// distinct name as a custom event (bit `k` for goal `k`, so at most 64),
/// or `None` when a goal reads what the table does not hold (a property)
/// or there are more.
/// A funnel's steps are such goals, as are the explorer's goals panel's.
pub(super) fn goal_masks(table: &EventTable, goals: &[Goal]) -> Option<(Vec<u64>, Vec<u64>)> {
    if goals.len() > 64 {
        return None;
    }
    let mut pages = vec![0u64; table.pages.distinct.len()];
    let mut names = vec![0u64; table.names.distinct.len()];
    for (at, goal) in goals.iter().enumerate() {
        match &goal.target {
            Target::Page(pattern) => {
                for (code, page) in table.pages.distinct.iter().enumerate() {
                    if pattern.matches_path(page) {
                        pages[code] |= 1 << at;
                    }
                }
            }
            Target::Event { prop: Some(_), .. } => return None,
            Target::Event { name: wanted, prop: None } => {
                for (code, name) in table.names.distinct.iter().enumerate() {
                    if name == wanted {
                        names[code] |= 1 << at;
                    }
                }
            }
        }
    }
    Some((pages, names))
}

/// The number of each of the tail's visitors (by code) among the visitors
/// of both tables: their code in the copy when the copy has them, else
/// after the copy's. The copy's visitors are numbered by their code. Both
/// tables' visitors are walked once in the order of their ids, where a
/// search of the copy per tail visitor took a few ms per grouping.
pub(super) fn tail_visitor_numbers(held: &EventTable, tail: &EventTable) -> Vec<u32> {
    let mut numbers = vec![0; tail.visitor_count()];
    let held_ids = held.visitors.by_id.iter().map(|code| (held.visitors.ids[*code as usize], *code));
    let mut held_ids = held_ids.peekable();
    for &code in &tail.visitors.by_id {
        let id = tail.visitors.ids[code as usize];
        while held_ids.next_if(|(held_id, _)| *held_id < id).is_some() {}
        numbers[code as usize] = match held_ids.peek() {
            Some((held_id, held_code)) if *held_id == id => *held_code,
            _ => (held.visitor_count() + code as usize) as u32,
        };
    }
    numbers
}

/// The events of the copy and then the tail in `span` (from, to) that reach
/// any of `steps`, with their visitor, grouped by visitor and in the order
/// they happened within each visitor: the rows the funnel's statement
/// reads, whose visitors' order nothing downstream reads. `None` when a step
/// reads a property.
pub fn step_events([held, tail]: [&EventTable; 2], span: (i64, i64), steps: &[Goal]) -> Option<Vec<(i64, StepEvent)>> {
    let tail_numbers = tail_visitor_numbers(held, tail);
    let mut found: Vec<(u32, StepEvent)> = Vec::new();
    for (which, table) in [held, tail].into_iter().enumerate() {
        let (pages, names) = goal_masks(table, steps)?;
        for at in table.run(span) {
            let steps = match table.kind[at] {
                Kind::Pageview => pages[table.page[at] as usize],
                Kind::Custom => names[table.name[at] as usize],
                Kind::Other => 0,
            };
            if steps != 0 {
                // A funnel has at most 8 steps.
                let steps = u8::try_from(steps).ok()?;
                let session = table.visit_id(table.visit_code(at));
                let code = table.visitor_code(at);
                let number = if which == 0 { code as u32 } else { tail_numbers[code] };
                found.push((number, StepEvent { session, at: table.at[at], steps }));
            }
        }
    }
    let id = |number: u32| match (number as usize).checked_sub(held.visitor_count()) {
        None => held.visitor_id(number as usize),
        Some(code) => tail.visitor_id(code),
    };
    // Grouped by a counting sort, linear in the events where a stable sort
    // of 32-byte rows by visitor id was n log n.
    let mut starts = vec![0u32; held.visitor_count() + tail.visitor_count() + 1];
    for (number, _) in &found {
        starts[*number as usize + 1] += 1;
    }
    for at in 1..starts.len() {
        starts[at] += starts[at - 1];
    }
    let filler = (0, StepEvent { session: 0, at: 0, steps: 0 });
    let mut grouped = vec![filler; found.len()];
    for (number, event) in found {
        let slot = &mut starts[number as usize];
        grouped[*slot as usize] = (id(number), event);
        *slot += 1;
    }
    Some(grouped)
}

#[path = "events_refresh.rs"]
mod refresh;

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
