//! Counting a per-event query's groups as its events are added: events
//! and pageviews per group, and its visits and visitors each once.

use std::collections::HashMap;

use super::{At, Part, Tables, slots::Radix};
use crate::service::explore::{
    counts::{Counts, Groups, Key},
    query::Metric,
    range::Buckets,
    visit_copy::{
        events::Kind,
        numbers::{Numbers, distinct_per_group},
    },
};

/// Which distinct counts a query reads: each costs a pair per run of a
/// visit's events in a group, and a counting sort of them at the end; the
/// explorer's events panel counts only events, its pages panel visitors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Distinct {
    pub visits: bool,
    pub visitors: bool,
}

impl Distinct {
    /// Both, as the tests compare every count.
    #[cfg(test)]
    pub const ALL: Distinct = Distinct { visits: true, visitors: true };

    /// What `metrics` read: a group's visitors for its share and its
    /// conversion rate too.
    pub fn of(metrics: &[Metric]) -> Distinct {
        let visitors = metrics
            .iter()
            .any(|metric| matches!(metric, Metric::Visitors | Metric::Percentage | Metric::ConversionRate));
        Distinct { visits: metrics.contains(&Metric::Visits), visitors }
    }
}

/// The groups of `groups` while events are added.
pub(super) struct Grouping<'a> {
    tables: Tables<'a>,
    parts: Vec<Part>,
    radix: Radix,
    buckets: Option<&'a Buckets>,
    distinct: Distinct,
    numbers: Numbers,
    /// Per group met: its slot, events and pageviews.
    slots: Vec<u64>,
    events: Vec<i64>,
    pageviews: Vec<i64>,
    /// (group, visit) and (group, visitor) pairs, each once per run of a
    /// visit's events in one group: the last group each visit was counted in.
    last_group: Vec<u32>,
    visit_pairs: Vec<(u32, u32)>,
    visitor_pairs: Vec<(u32, u32)>,
}

impl<'a> Grouping<'a> {
    pub(super) fn new(
        tables: Tables<'a>,
        parts: Vec<Part>,
        radix: Radix,
        (buckets, distinct): (Option<&'a Buckets>, Distinct),
    ) -> Grouping<'a> {
        let numbers = Numbers::new(radix.slots);
        Grouping {
            tables,
            parts,
            radix,
            buckets,
            distinct,
            numbers,
            slots: Vec::new(),
            events: Vec::new(),
            pageviews: Vec::new(),
            last_group: if distinct == Distinct::default() {
                Vec::new()
            } else {
                vec![u32::MAX; tables.visits[0].len() + tables.visits[1].len()]
            },
            visit_pairs: Vec::new(),
            visitor_pairs: Vec::new(),
        }
    }

    pub(super) fn add(&mut self, at: At, visit: u32) {
        let table_events = self.tables.events[at.table];
        let slot = self.radix.slot(&self.parts, self.tables, at, self.buckets);
        let group = self.numbers.of(slot, self.slots.len() as u32);
        if group as usize == self.slots.len() {
            self.slots.push(slot);
            self.events.push(0);
            self.pageviews.push(0);
        }
        self.events[group as usize] += 1;
        self.pageviews[group as usize] += i64::from(table_events.kind[at.row] == Kind::Pageview);
        if self.distinct != Distinct::default() && self.last_group[visit as usize] != group {
            self.last_group[visit as usize] = group;
            if self.distinct.visits {
                self.visit_pairs.push((group, visit));
            }
            if self.distinct.visitors {
                let visitor = self.tables.visitor_number(at.table, table_events.visitor_code(at.row));
                self.visitor_pairs.push((group, visitor));
            }
        }
    }

    pub(super) fn finish(mut self) -> Groups {
        let tables = self.tables;
        // Groups of the same values in both tables are one.
        let mut named: HashMap<Vec<Key>, u32> = HashMap::new();
        let mut keys: Vec<Vec<Key>> = Vec::new();
        let renamed: Vec<u32> = self
            .slots
            .iter()
            .map(|slot| {
                let key = self.radix.key(&self.parts, tables, *slot);
                *named.entry(key.clone()).or_insert_with(|| {
                    keys.push(key);
                    (keys.len() - 1) as u32
                })
            })
            .collect();
        let mut counts = vec![Counts::default(); keys.len()];
        for (group, name) in renamed.iter().enumerate() {
            counts[*name as usize].events += self.events[group];
            counts[*name as usize].pageviews += self.pageviews[group];
        }
        for pairs in [&mut self.visit_pairs, &mut self.visitor_pairs] {
            for (group, _) in pairs.iter_mut() {
                *group = renamed[*group as usize];
            }
        }
        let count = |wanted: bool, pairs: &[(u32, u32)], items: usize| {
            if wanted { distinct_per_group(pairs, keys.len(), items) } else { vec![0; keys.len()] }
        };
        let visits = count(self.distinct.visits, &self.visit_pairs, self.last_group.len());
        let visitors = count(self.distinct.visitors, &self.visitor_pairs, tables.visitor_numbers());
        let mut groups = Groups::new();
        for (name, key) in keys.into_iter().enumerate() {
            let mut counts = std::mem::take(&mut counts[name]);
            counts.visits = visits[name];
            counts.visitors = visitors[name];
            groups.insert(key, counts);
        }
        groups
    }
}
