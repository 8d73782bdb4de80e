use super::*;
use crate::service::{explore::query, path_pattern::PathPattern};

fn ask_of(body: serde_json::Value) -> (Vec<Dimension>, Vec<Filter>, Vec<Metric>) {
    let query = query::parse(&body).expect("a valid query");
    (query.dimensions, query.filters, query.metrics)
}

#[test]
fn the_rollups_answer_unfiltered_single_dimension_queries_whose_metrics_they_hold() {
    use RolledDimension as R;
    let cases: Vec<(&str, serde_json::Value, Option<RolledDimension>)> = vec![
        ("aggregate", serde_json::json!({"metrics": ["visitors", "visits", "bounce_rate"]}), Some(R::Total)),
        (
            "by source",
            serde_json::json!({"metrics": ["visitors", "visit_duration"], "dimensions": ["visit:source"]}),
            Some(R::Source),
        ),
        (
            "country names read codes",
            serde_json::json!({"metrics": ["visitors"], "dimensions": ["visit:country_name"]}),
            Some(R::Country),
        ),
        (
            "pages: visitors and pageviews",
            serde_json::json!({"metrics": ["visitors", "pageviews"], "dimensions": ["event:page"]}),
            Some(R::Page),
        ),
        ("pages: no visits", serde_json::json!({"metrics": ["visits"], "dimensions": ["event:page"]}), None),
        (
            "names: events",
            serde_json::json!({"metrics": ["events", "percentage"], "dimensions": ["event:name"]}),
            Some(R::Name),
        ),
        (
            "entry pages: visits",
            serde_json::json!({"metrics": ["visits", "bounce_rate"], "dimensions": ["visit:entry_page"]}),
            Some(R::EntryPage),
        ),
        (
            "exit pages: visitors",
            serde_json::json!({"metrics": ["visitors"], "dimensions": ["visit:exit_page"]}),
            Some(R::ExitPage),
        ),
        (
            "a filter",
            serde_json::json!({"metrics": ["visitors"], "filters": [["is", "visit:device", ["Desktop"]]]}),
            None,
        ),
        ("time", serde_json::json!({"metrics": ["visitors"], "dimensions": ["time:day"]}), None),
        (
            "two dimensions",
            serde_json::json!({"metrics": ["visitors"], "dimensions": ["visit:source", "visit:country"]}),
            None,
        ),
        (
            "visitor status",
            serde_json::json!({"metrics": ["visitors", "visits", "bounce_rate"], "dimensions": ["visitor:status"]}),
            Some(R::Status),
        ),
        (
            "visitor account",
            serde_json::json!({"metrics": ["visitors"], "dimensions": ["visitor:account"]}),
            Some(R::Account),
        ),
        ("links", serde_json::json!({"metrics": ["visitors"], "dimensions": ["visit:link"]}), None),
        ("tiles", serde_json::json!({"metrics": ["identified_visitors", "hot_leads", "visitors"]}), Some(R::Total)),
        (
            "identified by source",
            serde_json::json!({"metrics": ["identified_visitors"], "dimensions": ["visit:source"]}),
            None,
        ),
        ("revenue", serde_json::json!({"metrics": ["total_revenue"], "dimensions": ["visit:source"]}), None),
    ];
    for (name, mut body, expected) in cases {
        body["site_id"] = serde_json::json!(1);
        body["date_range"] = serde_json::json!("30d");
        let (dimensions, filters, metrics) = ask_of(body);
        let ask = Ask { dimensions: &dimensions, filters: &filters, metrics: &metrics };
        assert_eq!(plan(ask, &[]).map(|rolled| rolled.dimension), expected, "{name}");
    }
}

#[test]
fn one_custom_event_names_conversions_are_read_from_its_pairs_with_a_visit_value() {
    use RolledDimension as R;
    let event = |name: &str, event_name: &str, prop: Option<(&str, &str)>| Goal {
        name: name.to_owned(),
        target: Target::Event {
            name: event_name.to_owned(),
            prop: prop.map(|(key, value)| (key.to_owned(), value.to_owned())),
        },
    };
    let goals = vec![
        event("Signup", "signup", None),
        event("Demo form", "form_submit", Some(("form_id", "demo"))),
        event("Views", "pageview", None),
        Goal { name: "Pricing".to_owned(), target: Target::Page(PathPattern::parse("p", "/pricing".into()).unwrap()) },
    ];
    let by = |dimension: &str| serde_json::json!([dimension]);
    let signup = || serde_json::json!([["is", "event:goal", ["Signup"]]]);
    use serde_json::Value;
    // case, dimensions, filters, metrics, the expected dimension and name
    type Case = (&'static str, Value, Value, Value, Option<(RolledDimension, &'static str)>);
    let cases: Vec<Case> = vec![
        (
            "goal by source",
            by("visit:source"),
            signup(),
            serde_json::json!(["visitors", "events", "conversion_rate"]),
            Some((R::NameBySource, "signup")),
        ),
        (
            "goal by campaign",
            by("visit:utm_campaign"),
            signup(),
            serde_json::json!(["visitors"]),
            Some((R::NameByUtmCampaign, "signup")),
        ),
        (
            "goal alone",
            serde_json::json!([]),
            signup(),
            serde_json::json!(["visitors", "events"]),
            Some((R::Name, "signup")),
        ),
        (
            "name by channel",
            by("visit:channel"),
            serde_json::json!([["is", "event:name", ["signup"]]]),
            serde_json::json!(["events"]),
            Some((R::NameByChannel, "signup")),
        ),
        ("goal by country: no pairs", by("visit:country"), signup(), serde_json::json!(["visitors"]), None),
        (
            "goal with a property",
            by("visit:source"),
            serde_json::json!([["is", "event:goal", ["Demo form"]]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        (
            "a pageview goal",
            by("visit:source"),
            serde_json::json!([["is", "event:goal", ["Pricing"]]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        (
            "a custom event named pageview",
            serde_json::json!([]),
            serde_json::json!([["is", "event:goal", ["Views"]]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        (
            "two goals",
            by("visit:source"),
            serde_json::json!([["is", "event:goal", ["Signup", "Pricing"]]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        (
            "not the goal",
            by("visit:source"),
            serde_json::json!([["is_not", "event:goal", ["Signup"]]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        (
            "two names",
            by("visit:source"),
            serde_json::json!([["is", "event:name", ["signup", "x"]]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        (
            "a name's case ignored",
            by("visit:source"),
            serde_json::json!([["is", "event:name", ["signup"], {"case_sensitive": false}]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        (
            "the goal and a country",
            by("visit:source"),
            serde_json::json!([["is", "event:goal", ["Signup"]], ["is", "visit:country", ["DE"]]]),
            serde_json::json!(["visitors"]),
            None,
        ),
        ("visits of converted visits", by("visit:source"), signup(), serde_json::json!(["visits"]), None),
        ("a share of converted visitors", by("visit:source"), signup(), serde_json::json!(["percentage"]), None),
    ];
    for (name, dimensions, filters, metrics, expected) in cases {
        let body = serde_json::json!({ "site_id": 1, "date_range": "30d", "metrics": metrics,
                                       "dimensions": dimensions, "filters": filters });
        let (dimensions, filters, metrics) = ask_of(body);
        let ask = Ask { dimensions: &dimensions, filters: &filters, metrics: &metrics };
        let expected = expected.map(|(dimension, name)| Rolled { dimension, name: Some(name.to_owned()) });
        assert_eq!(plan(ask, &goals), expected, "{name}");
    }
}
