//! A site's visits held in memory column by column (design §17), and the
//! whole-visit counts of a span read from them: the same figures the visit
//! statement (`statements::visit_statement`) reads from the rows, with the
//! same conditions, decided once per distinct stored value instead of once
//! per row. Free of I/O: `super` fills the table and the edge counts.

use std::collections::HashMap;

use super::numbers::{self, Numbers};
use crate::service::{
    explore::{
        counts::{Counts, Groups, Key},
        query::{Condition, Dimension, Filter, Operator, VisitProperty},
        range::{Buckets, Span},
        sql::{blank, shown},
    },
    tracking::sessionize::SESSION_MAX_MS,
};

/// The visit columns a whole-visit query may group or filter by, in the
/// order `super::COLUMNS` reads them. A country's name is its code shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    EntryPage,
    ExitPage,
    Source,
    Referrer,
    Channel,
    UtmSource,
    UtmMedium,
    UtmCampaign,
    UtmContent,
    UtmTerm,
    Device,
    Browser,
    Os,
    Country,
    Region,
    City,
}

impl Column {
    pub const COUNT: usize = 16;

    /// The column a visit property is stored in; none for the link, which
    /// the visit keeps as an id.
    pub fn of(property: VisitProperty) -> Option<Column> {
        Some(match property {
            VisitProperty::EntryPage => Column::EntryPage,
            VisitProperty::ExitPage => Column::ExitPage,
            VisitProperty::Source => Column::Source,
            VisitProperty::Referrer => Column::Referrer,
            VisitProperty::Channel => Column::Channel,
            VisitProperty::UtmSource => Column::UtmSource,
            VisitProperty::UtmMedium => Column::UtmMedium,
            VisitProperty::UtmCampaign => Column::UtmCampaign,
            VisitProperty::UtmContent => Column::UtmContent,
            VisitProperty::UtmTerm => Column::UtmTerm,
            VisitProperty::Device => Column::Device,
            VisitProperty::Browser => Column::Browser,
            VisitProperty::Os => Column::Os,
            VisitProperty::Country | VisitProperty::CountryName => Column::Country,
            VisitProperty::Region | VisitProperty::RegionName => Column::Region,
            VisitProperty::City | VisitProperty::CityName => Column::City,
            VisitProperty::Link => return None,
        })
    }

    /// The column of a dimension, when it is a stored visit property.
    pub fn of_dimension(dimension: &Dimension) -> Option<Column> {
        match dimension {
            Dimension::Visit(property) => Column::of(*property),
            _ => None,
        }
    }
}

/// How the database lowers text for a case-insensitive comparison:
/// SQLite's `LOWER` folds ASCII letters only, PostgreSQL's every letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lowering {
    Ascii,
    Unicode,
}

impl Lowering {
    fn apply(self, text: &str) -> String {
        match self {
            Lowering::Ascii => text.to_ascii_lowercase(),
            Lowering::Unicode => text.to_lowercase(),
        }
    }
}

/// One stored visit, as the loader hands it over.
#[derive(Debug, Clone, Default)]
pub struct Visit {
    pub id: i64,
    pub visitor: i64,
    pub started: i64,
    pub ended: i64,
    /// `human_event_count`, `human_pageview_count`.
    pub human_events: i32,
    pub human_pageviews: i32,
    /// `event_count`: a bounce is a visit of one event.
    pub events: i32,
    pub seconds: i64,
    pub values: [Option<String>; Column::COUNT],
}

/// One column's distinct values and each visit's code into them.
#[derive(Default)]
struct Values {
    distinct: Vec<Option<String>>,
    codes: Vec<u32>,
    lookup: HashMap<Option<String>, u32>,
}

impl Values {
    fn push(&mut self, value: Option<String>) {
        let code = match self.lookup.get(&value) {
            Some(code) => *code,
            None => {
                let code = self.distinct.len() as u32;
                self.lookup.insert(value.clone(), code);
                self.distinct.push(value);
                code
            }
        };
        self.codes.push(code);
    }
}

/// Visits in the order they were pushed, which must be by start: a span's
/// visits are then one run of the table.
#[derive(Default)]
pub struct Table {
    id: Vec<i64>,
    visitor: Vec<i64>,
    started: Vec<i64>,
    ended: Vec<i64>,
    human_events: Vec<i32>,
    human_pageviews: Vec<i32>,
    events: Vec<i32>,
    seconds: Vec<i64>,
    columns: Vec<Values>,
}

impl Table {
    pub fn new() -> Table {
        Table { columns: (0..Column::COUNT).map(|_| Values::default()).collect(), ..Table::default() }
    }

    pub fn push(&mut self, visit: Visit) {
        self.id.push(visit.id);
        self.visitor.push(visit.visitor);
        self.started.push(visit.started);
        self.ended.push(visit.ended);
        self.human_events.push(visit.human_events);
        self.human_pageviews.push(visit.human_pageviews);
        self.events.push(visit.events);
        self.seconds.push(visit.seconds);
        for (column, value) in self.columns.iter_mut().zip(visit.values) {
            column.push(value);
        }
    }

    /// Drops what only pushing needs.
    pub fn seal(&mut self) {
        for column in &mut self.columns {
            column.lookup = HashMap::new();
        }
    }

    /// The rows of visits begun in `[from, to)`.
    fn begun(&self, from: i64, to: i64) -> std::ops::Range<usize> {
        let first = self.started.partition_point(|started| *started < from);
        let end = self.started.partition_point(|started| *started < to);
        first..end.max(first)
    }

    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// The id of the visit at `at`.
    pub fn id(&self, at: usize) -> i64 {
        self.id[at]
    }

    /// The rows and ids of the visits that may have events in `span`.
    pub fn reaching(&self, span: Span) -> impl Iterator<Item = (usize, i64)> + '_ {
        self.begun(span.from.saturating_sub(SESSION_MAX_MS), span.to).map(|at| (at, self.id[at]))
    }

    /// The code of the visit at `at` in `column`.
    pub fn code(&self, column: Column, at: usize) -> u32 {
        self.columns[column as usize].codes[at]
    }

    /// The distinct values of `column`, by code.
    pub fn distinct(&self, column: Column) -> &[Option<String>] {
        &self.columns[column as usize].distinct
    }

    /// Whether the visit at `at` lies inside `span` and, with `buckets`,
    /// inside one bucket: then its row's counts are its events there.
    fn inside(&self, at: usize, span: Span, buckets: Option<&Buckets>) -> bool {
        let (started, ended) = (self.started[at], self.ended[at]);
        started >= span.from
            && ended < span.to
            && buckets.is_none_or(|buckets| buckets.of(started) == buckets.of(ended))
    }

    /// The ids of the visits that may reach into `span` without lying
    /// inside it (or inside one bucket): those whose events in the span
    /// must be counted apart, per bucket.
    pub fn cut<'a>(&'a self, span: Span, buckets: Option<&'a Buckets>) -> impl Iterator<Item = i64> + 'a {
        self.begun(span.from.saturating_sub(SESSION_MAX_MS), span.to)
            .filter(move |&at| self.ended[at] >= span.from && !self.inside(at, span, buckets))
            .map(|at| self.id[at])
    }
}

impl Table {
    /// `filters` decided over this table's distinct values; none when one
    /// names something the table does not hold.
    pub(super) fn decide(&self, filters: &[Filter], lowering: Lowering) -> Option<Vec<Decided>> {
        filters.iter().map(|filter| decide(filter, self, lowering)).collect()
    }

    /// Hands `each` every visit that reaches into `span` with events in it
    /// and passes `decided`, with its events and pageviews there, per
    /// bucket (bucket 0 without buckets): a visit inside the span (and one
    /// bucket) its row's human counts, one the span or a bucket's edge cuts
    /// each piece `pieces` holds for it, or nothing.
    pub(super) fn kept(
        &self,
        (span, buckets): (Span, Option<&Buckets>),
        decided: &[Decided],
        pieces: &Pieces,
        mut each: impl FnMut(usize, i64, (i64, i64)),
    ) {
        for at in self.begun(span.from.saturating_sub(SESSION_MAX_MS), span.to) {
            if self.ended[at] < span.from || !decided.iter().all(|filter| filter.passes(self, at)) {
                continue;
            }
            if self.inside(at, span, buckets) {
                if self.human_events[at] > 0 {
                    let bucket = buckets.map_or(0, |buckets| buckets.of(self.started[at]));
                    each(at, bucket, (i64::from(self.human_events[at]), i64::from(self.human_pageviews[at])));
                }
            } else if let Some(found) = pieces.get(&self.id[at]) {
                for (bucket, events, pageviews) in found {
                    each(at, *bucket, (*events, *pageviews));
                }
            }
        }
    }

    /// The visitor of the visit at `at`.
    pub(super) fn visitor(&self, at: usize) -> i64 {
        self.visitor[at]
    }

    /// Whether the visit at `at` bounced (one event), and its length.
    pub(super) fn bounce_and_seconds(&self, at: usize) -> (bool, i64) {
        (self.events[at] <= 1, self.seconds[at])
    }
}

/// The events and pageviews of a cut visit in the span, per bucket (one
/// piece, bucket 0, without buckets): (bucket, events, pageviews).
pub type Pieces = HashMap<i64, Vec<(i64, i64, i64)>>;

/// A filter decided for one table: each condition as a yes or no per
/// distinct value of its column.
pub(super) enum Decided {
    Condition { column: usize, passes: Vec<bool> },
    And(Vec<Decided>),
    Or(Vec<Decided>),
    Not(Box<Decided>),
}

impl Decided {
    fn passes(&self, table: &Table, at: usize) -> bool {
        match self {
            Decided::Condition { column, passes } => passes[table.columns[*column].codes[at] as usize],
            Decided::And(all) => all.iter().all(|inner| inner.passes(table, at)),
            Decided::Or(all) => all.iter().any(|inner| inner.passes(table, at)),
            Decided::Not(inner) => !inner.passes(table, at),
        }
    }
}

/// Whether a stored value passes `condition`, compared as the visit
/// statement compares it (`sql::condition`): blank as `''`, lowered by the
/// database's own rule when case is ignored, a regex or a country name
/// decided on the value as shown.
pub fn passes(condition: &Condition, stored: Option<&str>, lowering: Lowering) -> bool {
    let positive = if condition.decided_in_rust() {
        condition.keeps(&shown(&condition.dimension, stored))
    } else {
        let blank = blank(&condition.dimension);
        let wanted = condition
            .values
            .iter()
            .map(|value| if value == blank { "" } else { value.as_str() })
            .map(|value| if condition.case_sensitive { value.to_owned() } else { value.to_lowercase() });
        let stored = stored.unwrap_or("");
        let target = if condition.case_sensitive { stored.to_owned() } else { lowering.apply(stored) };
        let mut wanted = wanted;
        match condition.operator {
            Operator::Is | Operator::IsNot => wanted.any(|value| value == target),
            _ => wanted.any(|needle| target.contains(&needle)),
        }
    };
    positive != condition.operator.negated()
}

/// Decides `filter` over `table`'s distinct values; none when a condition
/// names something the table does not hold.
fn decide(filter: &Filter, table: &Table, lowering: Lowering) -> Option<Decided> {
    Some(match filter {
        Filter::Condition(condition) => {
            let column = Column::of_dimension(&condition.dimension)? as usize;
            let distinct = &table.columns[column].distinct;
            let passes = distinct.iter().map(|value| passes(condition, value.as_deref(), lowering)).collect();
            Decided::Condition { column, passes }
        }
        Filter::And(all) => {
            Decided::And(all.iter().map(|inner| decide(inner, table, lowering)).collect::<Option<_>>()?)
        }
        Filter::Or(all) => Decided::Or(all.iter().map(|inner| decide(inner, table, lowering)).collect::<Option<_>>()?),
        Filter::Not(inner) => Decided::Not(Box::new(decide(inner, table, lowering)?)),
        Filter::HasDone { .. } => return None,
    })
}

/// Whether the table can answer a query of these dimensions and filters:
/// stored visit properties and time only.
pub fn answers(dimensions: &[Dimension], filters: &[Filter]) -> bool {
    fn held(filter: &Filter) -> bool {
        match filter {
            Filter::Condition(condition) => Column::of_dimension(&condition.dimension).is_some(),
            Filter::And(all) | Filter::Or(all) => all.iter().all(held),
            Filter::Not(inner) => held(inner),
            Filter::HasDone { .. } => false,
        }
    }
    dimensions.iter().all(|dimension| dimension.is_time() || Column::of_dimension(dimension).is_some())
        && dimensions.iter().filter(|dimension| dimension.is_time()).count() <= 1
        && filters.iter().all(held)
}

/// A group's counts while visits are added, with its visitors listed.
#[derive(Default)]
struct Tally {
    counts: Counts,
    visitors: Vec<i64>,
}

impl Tally {
    fn add(&mut self, (events, pageviews): (i64, i64), bounce: bool, seconds: i64, visitor: i64) {
        self.counts.visits += 1;
        self.counts.events += events;
        self.counts.pageviews += pageviews;
        self.counts.bounces += i64::from(bounce);
        self.counts.seconds += seconds;
        self.visitors.push(visitor);
    }

    fn merge(&mut self, other: Tally) {
        self.counts.visits += other.counts.visits;
        self.counts.events += other.counts.events;
        self.counts.pageviews += other.counts.pageviews;
        self.counts.bounces += other.counts.bounces;
        self.counts.seconds += other.counts.seconds;
        self.visitors.extend(other.visitors);
    }
}

/// The tally of the group at `slot`, new when the slot is.
fn tally_at<'a>(numbers: &mut Numbers, local: &'a mut Vec<(u64, Tally)>, slot: u64) -> &'a mut Tally {
    let number = numbers.of(slot, local.len() as u32) as usize;
    if number == local.len() {
        local.push((slot, Tally::default()));
    }
    &mut local[number].1
}

/// What one dimension of a group is read from in a table.
#[derive(Clone, Copy)]
enum Part {
    Column(usize),
    Time,
}

/// The whole-visit counts of several tables, merged by group.
#[derive(Default)]
pub struct Tallies(HashMap<Vec<Key>, Tally>);

impl Tallies {
    /// Adds the visits of `table` that reach into `span` with events in it
    /// and pass `filters`, grouped by `dimensions` (time in `buckets`). A
    /// visit inside the span (and one bucket) counts the events its row
    /// keeps; one the span or a bucket's edge cuts counts the pieces
    /// `pieces` holds for it, each in its bucket, or is left out.
    pub fn add(
        &mut self,
        table: &Table,
        (span, buckets): (Span, Option<&Buckets>),
        (dimensions, filters): (&[Dimension], &[Filter]),
        pieces: &Pieces,
        lowering: Lowering,
    ) -> Option<()> {
        let decided = table.decide(filters, lowering)?;
        let parts = dimensions
            .iter()
            .map(|dimension| match Column::of_dimension(dimension) {
                Some(column) => Some(Part::Column(column as usize)),
                None if dimension.is_time() && buckets.is_some() => Some(Part::Time),
                None => None,
            })
            .collect::<Option<Vec<_>>>()?;
        // Grouped by slot first (column codes and the bucket in mixed
        // radix: no key is built per visit), named at the end.
        let (digits, slots) = numbers::radix(parts.iter().map(|part| match part {
            Part::Column(column) => Some((0, table.columns[*column].distinct.len() as u64)),
            Part::Time => numbers::bucket_digit(buckets, span),
        }))?;
        let slot_of = |at: usize, bucket: i64| -> u64 {
            parts.iter().zip(&digits).fold(0, |slot, (part, (first, values))| {
                let digit = match part {
                    Part::Column(column) => u64::from(table.columns[*column].codes[at]),
                    Part::Time => (bucket - first) as u64,
                };
                slot * values + digit
            })
        };
        let mut numbers = Numbers::new(slots);
        let mut local: Vec<(u64, Tally)> = Vec::new();
        table.kept((span, buckets), &decided, pieces, |at, bucket, counts| {
            let (bounce, seconds, visitor) = (table.events[at] <= 1, table.seconds[at], table.visitor[at]);
            tally_at(&mut numbers, &mut local, slot_of(at, bucket)).add(counts, bounce, seconds, visitor);
        });
        for (mut slot, tally) in local {
            let mut key = vec![Key::Bucket(0); parts.len()];
            for (at, (part, (first, values))) in parts.iter().zip(&digits).enumerate().rev() {
                let digit = slot % values.max(&1);
                slot /= values.max(&1);
                key[at] = match part {
                    Part::Column(column) => Key::Text(table.columns[*column].distinct[digit as usize].clone()),
                    Part::Time => Key::Bucket(first + digit as i64),
                };
            }
            self.0.entry(key).or_default().merge(tally);
        }
        Some(())
    }

    /// Every visitor of every group, once, in order. Each group's own are
    /// put in order here too, so `groups` finds them sorted (one group, the
    /// tiles' whole, is then sorted once, not twice: 220k visits at 1M).
    pub fn visitors(&mut self) -> Vec<i64> {
        for tally in self.0.values_mut() {
            tally.visitors.sort_unstable();
            tally.visitors.dedup();
        }
        if let [only] = self.0.values().collect::<Vec<_>>().as_slice() {
            return only.visitors.clone();
        }
        let mut all: Vec<i64> = self.0.values().flat_map(|tally| tally.visitors.iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The groups, each with its distinct visitors counted, and of them
    /// those in `identified` and `hot` (each a few of the site's visitors,
    /// looked up among the group's). With no dimensions an empty span has
    /// no group, as the statement's one row of zeros is dropped.
    pub fn groups(self, (identified, hot): (&[i64], &[i64])) -> Groups {
        let mut groups = Groups::new();
        for (key, mut tally) in self.0 {
            // In order already after `visitors`: then a pass, not a sort.
            tally.visitors.sort_unstable();
            tally.visitors.dedup();
            // Each id of the shorter list looked up in the longer.
            let among = |flagged: &[i64]| {
                let (few, many) = if flagged.len() <= tally.visitors.len() {
                    (flagged, tally.visitors.as_slice())
                } else {
                    (tally.visitors.as_slice(), flagged)
                };
                few.iter().filter(|id| many.binary_search(id).is_ok()).count()
            };
            tally.counts.visitors = tally.visitors.len() as i64;
            tally.counts.identified = among(identified) as i64;
            tally.counts.hot = among(hot) as i64;
            groups.insert(key, tally.counts);
        }
        groups
    }
}

#[path = "table_refresh.rs"]
mod refresh;

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
