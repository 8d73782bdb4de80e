//! What one snapshot has taken, shared by the queries read on it (the
//! explorer page's, or one query's periods): the stretches of its spans,
//! and the visit copy with its tail and cut visits.

use std::sync::Arc;

use super::{
    visit_copy::{Reading, VisitCopies},
    visits::Stretches,
};

#[derive(Default)]
pub struct Taken {
    pub stretches: Stretches,
    pub visits: Reading,
}

impl Taken {
    /// A snapshot's; with `copies`, whole-visit queries read the instance's copies.
    pub fn of(copies: Option<Arc<VisitCopies>>) -> Taken {
        Taken { stretches: Stretches::default(), visits: Reading::of(copies) }
    }
}
