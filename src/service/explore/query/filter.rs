//! Explore's filters: a condition compares one dimension with listed
//! values; conditions nest in `and`, `or`, `not` and behaviours.

use regex::Regex;

use super::{Dimension, EventProperty, VisitProperty};

/// How a filter compares a dimension's value with the values it lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Is,
    IsNot,
    Contains,
    ContainsNot,
    Matches,
    MatchesNot,
}

impl Operator {
    pub(super) const ALL: [(Operator, &'static str); 6] = [
        (Operator::Is, "is"),
        (Operator::IsNot, "is_not"),
        (Operator::Contains, "contains"),
        (Operator::ContainsNot, "contains_not"),
        (Operator::Matches, "matches"),
        (Operator::MatchesNot, "matches_not"),
    ];

    pub fn name(self) -> &'static str {
        Operator::ALL.iter().find(|(op, _)| *op == self).map(|(_, name)| *name).unwrap_or("is")
    }

    /// The operator that keeps what this one drops.
    pub fn negated(self) -> bool {
        matches!(self, Operator::IsNot | Operator::ContainsNot | Operator::MatchesNot)
    }
}

/// One comparison of a dimension with a list of values: a row passes when
/// any value matches (all fail for the negated operators).
impl Condition {
    /// `dimension` is exactly `value`.
    pub fn is(dimension: Dimension, value: &str) -> Condition {
        Condition {
            operator: Operator::Is,
            dimension,
            values: vec![value.to_owned()],
            case_sensitive: true,
            patterns: Vec::new(),
        }
    }

    /// Whether Rust decides which stored values pass (a regex, or a country
    /// name where the rows keep codes), leaving SQL a list of them.
    /// (A goal condition is decided over the site's goal names instead.)
    pub fn decided_in_rust(&self) -> bool {
        if self.dimension == Dimension::Event(EventProperty::Goal) {
            return false;
        }
        matches!(self.operator, Operator::Matches | Operator::MatchesNot)
            || self.dimension == Dimension::Visit(VisitProperty::CountryName)
    }

    /// Whether a stored value, as shown, passes the positive form of the
    /// operator (`is` for `is_not`...).
    pub fn keeps(&self, shown: &str) -> bool {
        let fold = |text: &str| if self.case_sensitive { text.to_owned() } else { text.to_lowercase() };
        let shown = fold(shown);
        match self.operator {
            Operator::Is | Operator::IsNot => self.values.iter().any(|value| fold(value) == shown),
            Operator::Contains | Operator::ContainsNot => self.values.iter().any(|value| shown.contains(&fold(value))),
            Operator::Matches | Operator::MatchesNot => self.patterns.iter().any(|pattern| pattern.is_match(&shown)),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Condition {
    pub operator: Operator,
    pub dimension: Dimension,
    pub values: Vec<String>,
    pub case_sensitive: bool,
    /// The compiled patterns of `matches` and `matches_not`.
    pub patterns: Vec<Regex>,
}

/// Two conditions are the same when they ask the same: their patterns
/// are compiled from their values, and compared by their source.
impl PartialEq for Condition {
    fn eq(&self, other: &Condition) -> bool {
        self.operator == other.operator
            && self.dimension == other.dimension
            && self.values == other.values
            && self.case_sensitive == other.case_sensitive
            && self.patterns.iter().map(Regex::as_str).eq(other.patterns.iter().map(Regex::as_str))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    Condition(Condition),
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
    /// Visits with (or, `done: false`, without) an event the inner filter
    /// keeps: Plausible's `has_done` and `has_not_done`.
    HasDone {
        done: bool,
        inner: Box<Filter>,
    },
}

impl Filter {
    /// Whether this filter reads only whole visits and their visitors: no
    /// event dimension, no behaviour.
    pub fn is_visit_level(&self) -> bool {
        let mut behaviour = false;
        self.behaviours(&mut behaviour);
        let mut events = false;
        self.conditions(&mut |condition| events |= condition.dimension.is_event());
        !behaviour && !events
    }

    /// Sets `found` when this filter is or holds a behavioural one.
    pub(super) fn behaviours(&self, found: &mut bool) {
        match self {
            Filter::Condition(_) => {}
            Filter::HasDone { .. } => *found = true,
            Filter::And(all) | Filter::Or(all) => all.iter().for_each(|filter| filter.behaviours(found)),
            Filter::Not(inner) => inner.behaviours(found),
        }
    }

    /// Calls `each` on every condition, however deeply nested.
    pub fn conditions<'a>(&'a self, each: &mut impl FnMut(&'a Condition)) {
        match self {
            Filter::Condition(condition) => each(condition),
            Filter::And(all) | Filter::Or(all) => all.iter().for_each(|filter| filter.conditions(each)),
            Filter::Not(inner) | Filter::HasDone { inner, .. } => inner.conditions(each),
        }
    }
}
