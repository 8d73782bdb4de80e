//! How one conversion is credited to a visitor's touchpoints (design §20),
//! free of I/O. A touchpoint is a visit that began no later than the
//! conversion; first touch credits the earliest, last touch the latest,
//! linear each equally. Money is split exactly: every visit gets the same
//! whole number of minor units and the earliest ones one more until the
//! remainder is gone, so the credits always add up to the amount.

/// Which touchpoints get the credit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    FirstTouch,
    LastTouch,
    Linear,
}

/// A visit of the converting visitor: when it began, and the value it has
/// for the report's grouping (its channel, source, campaign or link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    pub started_at: i64,
    pub id: i64,
    pub key: String,
}

/// A share of one conversion for one group.
#[derive(Debug, Clone, PartialEq)]
pub struct Credit {
    pub key: String,
    /// The part of the conversion (1 for first and last touch).
    pub share: f64,
    /// The part of its amount, in minor units.
    pub minor: i64,
}

/// What a conversion with no visit before it is credited to.
pub const NO_VISIT: &str = "(no visit)";

/// Credits a conversion at `at` worth `minor` to `touches` (any order).
pub fn credit(model: Model, touches: &[Touch], at: i64, minor: i64) -> Vec<Credit> {
    let mut eligible: Vec<&Touch> = touches.iter().filter(|touch| touch.started_at <= at).collect();
    eligible.sort_by_key(|touch| (touch.started_at, touch.id));
    let whole = |key: &str| vec![Credit { key: key.to_owned(), share: 1.0, minor }];
    match (model, eligible.first(), eligible.last()) {
        (_, None, _) | (_, _, None) => whole(NO_VISIT),
        (Model::FirstTouch, Some(first), _) => whole(&first.key),
        (Model::LastTouch, _, Some(last)) => whole(&last.key),
        (Model::Linear, _, _) => {
            let count = eligible.len() as i64;
            let (each, left) = (minor / count, minor % count);
            eligible
                .iter()
                .enumerate()
                .map(|(at, touch)| Credit {
                    key: touch.key.clone(),
                    share: 1.0 / count as f64,
                    minor: each + i64::from((at as i64) < left),
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(started_at: i64, key: &str) -> Touch {
        Touch { started_at, id: started_at, key: key.to_owned() }
    }

    fn keys(credits: &[Credit]) -> Vec<(&str, i64)> {
        credits.iter().map(|credit| (credit.key.as_str(), credit.minor)).collect()
    }

    #[test]
    fn each_model_credits_the_visits_before_the_conversion() {
        let touches = [touch(30, "Email"), touch(10, "Organic Search"), touch(20, "Direct"), touch(50, "Paid Search")];
        // (model, conversion time, amount, credited groups with their minor units)
        type Case = (Model, i64, i64, Vec<(&'static str, i64)>);
        let table: [Case; 8] = [
            (Model::FirstTouch, 40, 1000, vec![("Organic Search", 1000)]),
            (Model::LastTouch, 40, 1000, vec![("Email", 1000)]),
            (Model::LastTouch, 60, 1000, vec![("Paid Search", 1000)]),
            (Model::Linear, 40, 1000, vec![("Organic Search", 334), ("Direct", 333), ("Email", 333)]),
            (Model::Linear, 60, 7, vec![("Organic Search", 2), ("Direct", 2), ("Email", 2), ("Paid Search", 1)]),
            (Model::Linear, 10, 5, vec![("Organic Search", 5)]),
            (Model::FirstTouch, 5, 5, vec![(NO_VISIT, 5)]),
            (Model::Linear, 5, 0, vec![(NO_VISIT, 0)]),
        ];
        for (model, at, minor, expected) in table {
            let credits = credit(model, &touches, at, minor);
            assert_eq!(keys(&credits), expected, "{model:?} at {at}");
            assert_eq!(credits.iter().map(|c| c.minor).sum::<i64>(), minor, "the parts add up");
            let shares: f64 = credits.iter().map(|c| c.share).sum();
            assert!((shares - 1.0).abs() < 1e-9, "one conversion in all");
        }
        assert_eq!(keys(&credit(Model::Linear, &[], 1, 9)), vec![(NO_VISIT, 9)]);
    }
}
