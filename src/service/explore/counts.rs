//! The counts Explore reads per group of dimension values, whichever
//! statement (the rows, the rollups) reads them.

use std::collections::HashMap;

use super::revenue::Revenue;

/// One dimension value of a group: text (NULL when blank) or a time bucket.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Text(Option<String>),
    Bucket(i64),
}

/// The counts of one group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub visitors: i64,
    pub visits: i64,
    pub pageviews: i64,
    pub events: i64,
    /// Visits with a single event.
    pub bounces: i64,
    /// Seconds of the visits, summed.
    pub seconds: i64,
    pub identified: i64,
    pub hot: i64,
    pub clicks: i64,
    /// The visitors of the group without its goal conditions, for
    /// `conversion_rate` (`conversion` fills it).
    pub base_visitors: i64,
    pub revenue: Revenue,
}

pub type Groups = HashMap<Vec<Key>, Counts>;
