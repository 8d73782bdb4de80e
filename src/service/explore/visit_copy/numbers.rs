//! Numbering groups by their slot (a combination of dimension values in
//! mixed radix), as both copies' tallies do: by index when the slots are
//! few, by hashing when they are many.

use std::collections::HashMap;

/// Group slots above which the groups are found by hashing, not by index.
const DENSE_SLOTS: u64 = 1 << 20;

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
