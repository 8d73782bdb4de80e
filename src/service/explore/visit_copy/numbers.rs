//! Numbering groups by their slot (a combination of dimension values in
//! mixed radix), as both copies' tallies do: by index when the slots are
//! few, by hashing when they are many; and counting each group's distinct
//! visits or visitors.

use std::collections::HashMap;

use crate::service::explore::range::{Buckets, Span};

/// Group slots above which the groups are found by hashing, not by index.
const DENSE_SLOTS: u64 = 1 << 20;

/// The digits of a slot, each a part's first value and how many values it
/// has, and how many slots they make; `None` when a part cannot be
/// numbered or the slots overflow.
pub fn radix(parts: impl Iterator<Item = Option<(i64, u64)>>) -> Option<(Vec<(i64, u64)>, u64)> {
    let mut digits = Vec::new();
    let mut slots: u64 = 1;
    for digit in parts {
        let digit = digit?;
        slots = slots.checked_mul(digit.1.max(1))?;
        digits.push(digit);
    }
    Some((digits, slots))
}

/// A time part's digit: the span's first bucket and how many buckets it has.
pub fn bucket_digit(buckets: Option<&Buckets>, span: Span) -> Option<(i64, u64)> {
    let buckets = buckets?;
    let first = buckets.of(span.from);
    Some((first, u64::try_from(buckets.of(span.to - 1) - first + 1).ok()?))
}

/// Each group's number, by slot: an index when the slots are few.
pub enum Numbers {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

impl Numbers {
    pub fn new(slots: u64) -> Numbers {
        if slots <= DENSE_SLOTS {
            Numbers::Dense(vec![u32::MAX; slots as usize])
        } else {
            Numbers::Sparse(HashMap::new())
        }
    }

    /// The number of the group at `slot`, `next` when it is new.
    pub fn of(&mut self, slot: u64, next: u32) -> u32 {
        match self {
            Numbers::Dense(numbers) => {
                let number = &mut numbers[slot as usize];
                if *number == u32::MAX {
                    *number = next;
                }
                *number
            }
            Numbers::Sparse(numbers) => *numbers.entry(slot).or_insert(next),
        }
    }
}

/// Distinct `(group, item)` pairs counted per group, each group below
/// `groups` and each item below `items`. The pairs are placed group by
/// group (a counting sort), then each group's items are marked off with the
/// group's number: two passes and no comparison sort, which took most of a
/// query's time at 10M events.
pub fn distinct_per_group(pairs: &[(u32, u32)], groups: usize, items: usize) -> Vec<i64> {
    let mut ends = vec![0usize; groups + 1];
    for (group, _) in pairs {
        ends[*group as usize + 1] += 1;
    }
    for group in 0..groups {
        ends[group + 1] += ends[group];
    }
    let mut next = ends.clone();
    let mut placed = vec![0u32; pairs.len()];
    for (group, item) in pairs {
        placed[next[*group as usize]] = *item;
        next[*group as usize] += 1;
    }
    let mut last_group = vec![u32::MAX; items];
    let mut counts = vec![0; groups];
    for (group, count) in counts.iter_mut().enumerate() {
        for item in &placed[ends[group]..ends[group + 1]] {
            if last_group[*item as usize] != group as u32 {
                last_group[*item as usize] = group as u32;
                *count += 1;
            }
        }
    }
    counts
}
