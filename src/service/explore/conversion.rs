//! Goals in an Explore answer (design §20): a filter may only name goals the
//! site has, and `conversion_rate` is a group's converted visitors over the
//! visitors of the same group without the goal conditions, as Plausible
//! defines it (over the whole query when grouped by `event:goal` alone).

use sea_orm::ConnectionTrait;

use super::{
    figures::{self, Ask, Groups, Key, Scope},
    query::{Condition, Dimension, EventProperty, Filter, Metric, Operator},
    range::{Buckets, Span},
};
use crate::{
    error::{AppError, AppResult},
    service::goals::Goal,
};

const GOAL: Dimension = Dimension::Event(EventProperty::Goal);

/// Refuses an `is` filter naming a goal the site does not have, as
/// Plausible does, rather than answering nothing.
pub fn check_goals_exist(filters: &[Filter], goals: &[Goal]) -> AppResult<()> {
    let mut unknown = None;
    filters.iter().for_each(|filter| {
        filter.conditions(&mut |condition| {
            if condition.dimension == GOAL && condition.operator == Operator::Is && unknown.is_none() {
                let fold = |text: &str| if condition.case_sensitive { text.to_owned() } else { text.to_lowercase() };
                let known = |value: &&String| goals.iter().any(|goal| fold(&goal.name) == fold(value));
                unknown = condition.values.iter().find(|value| !known(value)).cloned();
            }
        })
    });
    match unknown {
        Some(goal) => Err(AppError::validation(
            "filters",
            format!("Invalid filters. The goal `{goal}` is not configured for this site."),
        )),
        None => Ok(()),
    }
}

/// The filters without their top-level goal conditions (alone or in a
/// top-level `and`): what a conversion rate divides by.
pub fn without_goals(filters: &[Filter]) -> Vec<Filter> {
    let is_goal = |filter: &Filter| matches!(filter, Filter::Condition(condition) if condition.dimension == GOAL);
    filters
        .iter()
        .filter(|filter| !is_goal(filter))
        .map(|filter| match filter {
            Filter::And(all) => Filter::And(all.iter().filter(|inner| !is_goal(inner)).cloned().collect()),
            other => other.clone(),
        })
        .filter(|filter| !matches!(filter, Filter::And(all) if all.is_empty()))
        .collect()
}

/// The groups of one span. With `event:goal` among the dimensions, each goal
/// is counted on its own (an event may reach several goals): the rows that
/// reach it, grouped by the other dimensions, under the goal's name.
async fn split_by_goal(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> AppResult<Groups> {
    let Some(at) = ask.dimensions.iter().position(|dimension| *dimension == GOAL) else {
        return figures::groups(db, scope, ask, span, buckets).await;
    };
    let mut others = ask.dimensions.to_vec();
    others.remove(at);
    let mut all = Groups::new();
    let alone = Ask { dimensions: &others, ..ask };
    if buckets.is_none()
        && let Some(counted) = figures::goal_groups(db, scope, alone, span).await?
    {
        for (reached, counts) in scope.goals.iter().zip(counted) {
            // As `groups` answers: no group for a goal no event reaches.
            if counts.events > 0 {
                all.insert(vec![Key::Text(Some(reached.name.clone()))], counts);
            }
        }
        return Ok(all);
    }
    for reached in scope.goals {
        let mut filters = ask.filters.to_vec();
        filters.push(Filter::Condition(Condition::is(GOAL, &reached.name)));
        let one = Ask { dimensions: &others, filters: &filters, metrics: ask.metrics };
        for (mut key, counts) in figures::groups(db, scope, one, span, buckets).await? {
            key.insert(at, Key::Text(Some(reached.name.clone())));
            all.insert(key, counts);
        }
    }
    Ok(all)
}

/// The groups of `ask`, each with `base_visitors` filled in when the query
/// asks for `conversion_rate`.
pub async fn groups(
    db: &impl ConnectionTrait,
    scope: &Scope<'_>,
    ask: Ask<'_>,
    span: Span,
    buckets: Option<&Buckets>,
) -> AppResult<Groups> {
    let mut groups = split_by_goal(db, scope, ask, span, buckets).await?;
    // A rate of no group divides nothing.
    if !ask.metrics.contains(&Metric::ConversionRate) || groups.is_empty() {
        return Ok(groups);
    }
    let goal_at = ask.dimensions.iter().position(|dimension| *dimension == GOAL);
    let others: Vec<Dimension> = ask.dimensions.iter().filter(|dimension| **dimension != GOAL).cloned().collect();
    let filters = without_goals(ask.filters);
    let base_ask = Ask { dimensions: &others, filters: &filters, metrics: &[Metric::Visitors] };
    let base = figures::groups(db, scope, base_ask, span, buckets).await?;
    for (key, counts) in groups.iter_mut() {
        let mut base_key = key.clone();
        if let Some(at) = goal_at {
            base_key.remove(at);
        }
        counts.base_visitors = base.get(&base_key).map_or(0, |base| base.visitors);
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::{goals::Target, path_pattern::PathPattern};
    use serde_json::json;

    fn filters(raw: serde_json::Value) -> Vec<Filter> {
        let body = json!({"site_id": "x", "metrics": ["visitors"], "date_range": "7d", "filters": raw});
        super::super::query::parse(&body).expect("a valid query").filters
    }

    fn names(filters: &[Filter]) -> Vec<String> {
        let mut seen = Vec::new();
        filters.iter().for_each(|filter| filter.conditions(&mut |condition| seen.push(condition.dimension.name())));
        seen
    }

    #[test]
    fn the_rate_divides_by_the_query_without_its_goal_conditions() {
        // filters -> the dimensions of the conditions left
        let table = [
            (json!([["is", "event:goal", ["Signup"]]]), vec![]),
            (json!([["is", "event:goal", ["Signup"]], ["is", "visit:source", ["Google"]]]), vec!["visit:source"]),
            (
                json!([["and", [["is", "event:goal", ["Signup"]], ["is", "visit:country", ["DE"]]]]]),
                vec!["visit:country"],
            ),
            (json!([["not", ["is", "event:goal", ["Signup"]]]]), vec!["event:goal"]),
            (json!([["is", "event:page", ["/a"]]]), vec!["event:page"]),
        ];
        for (raw, left) in table {
            assert_eq!(names(&without_goals(&filters(raw.clone()))), left, "{raw}");
        }
    }

    #[test]
    fn only_configured_goals_may_be_named() {
        let goals = [
            Goal { name: "Signup".to_owned(), target: Target::Event { name: "signup".to_owned(), prop: None } },
            Goal {
                name: "Visit /pricing".to_owned(),
                target: Target::Page(PathPattern::parse("pagePath", "/pricing".to_owned()).unwrap()),
            },
        ];
        assert!(
            check_goals_exist(&filters(json!([["is", "event:goal", ["Signup", "Visit /pricing"]]])), &goals).is_ok()
        );
        assert!(check_goals_exist(&filters(json!([["contains", "event:goal", ["Nothing"]]])), &goals).is_ok());
        let refused = check_goals_exist(&filters(json!([["is", "event:goal", ["signup"]]])), &goals).unwrap_err();
        assert_eq!(refused.field.as_deref(), Some("filters"));
        assert!(refused.message.contains("`signup`"), "{}", refused.message);
        let ignoring_case = json!([["is", "event:goal", ["signup"], {"case_sensitive": false}]]);
        assert!(check_goals_exist(&filters(ignoring_case), &goals).is_ok());
    }
}
