use serde_json::{Value, json};

use super::*;

fn refused(body: Value) -> (String, String) {
    let err = parse(&body).expect_err("refused");
    (err.field.unwrap_or_default(), err.message)
}

#[test]
fn accepts_plausible_bodies() {
    let query = parse(&json!({
        "site_id": "example.com",
        "metrics": ["visitors", "pageviews", "bounce_rate"],
        "date_range": "7d",
        "dimensions": ["visit:country", "time:day"],
        "filters": [["is", "visit:browser", ["Chrome", "Firefox"]], ["not", ["contains", "visit:utm_campaign", ["spring"], {"case_sensitive": false}]]],
        "order_by": [["visitors", "desc"], ["time:day", "asc"]],
        "include": {"time_labels": true, "total_rows": true, "comparisons": {"mode": "previous_period"}},
        "pagination": {"limit": 5, "offset": 10}
    }))
    .expect("valid");
    assert_eq!(query.site, Some(SiteRef::Domain("example.com".to_owned())));
    assert_eq!(query.dimensions[1], Dimension::Time(Some(Grain::Day)));
    assert_eq!(query.order_by[1], (OrderField::Dimension(1), Direction::Asc));
    assert_eq!((query.limit, query.offset), (5, 10));
    assert_eq!(query.include.comparisons, Some(Comparison::PreviousPeriod));
    let Filter::Not(inner) = &query.filters[1] else { panic!("not") };
    let Filter::Condition(condition) = inner.as_ref() else { panic!("condition") };
    assert!(!condition.case_sensitive);
    let named = |range: &str| parse(&json!({"metrics": ["visits"], "date_range": range})).expect(range).date_range;
    assert_eq!(named("28d"), DateRange::Days(28));
    assert_eq!(named("6mo"), DateRange::Months(6));
    assert_eq!(named("24h"), DateRange::Hours24);
    assert_eq!(named("all"), DateRange::All);
    let dated = parse(&json!({"site_id": 3, "metrics": ["visits"], "date_range": ["2024-01-01", "2024-01-31"]}));
    assert!(matches!(dated.expect("dates").date_range, DateRange::Dates(_, _)));
    let timed =
        parse(&json!({"metrics": ["visits"], "date_range": ["2024-01-01T00:00:00+01:00", "2024-01-01T12:00:00Z"]}));
    assert!(matches!(timed.expect("instants").date_range, DateRange::Instants(_, _)));
}

#[test]
fn refuses_bad_queries_naming_the_field() {
    let base = || json!({"site_id": "a.com", "metrics": ["visitors"], "date_range": "7d"});
    let with = |key: &str, value: Value| {
        let mut body = base();
        body[key] = value;
        body
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (with("metrics", json!(["visitorz"])), "metrics", "Invalid metric \"visitorz\""),
        (with("metrics", json!([])), "metrics", "at least one"),
        (with("metrics", json!(["visits", "visits"])), "metrics", "unique"),
        (with("dimensions", json!(["visit:nope"])), "dimensions", "Invalid dimension \"visit:nope\""),
        (with("dimensions", json!(["time:day", "time:hour"])), "dimensions", "one time dimension"),
        (with("dimensions", json!(["event:props:"])), "dimensions", "Invalid dimension"),
        (with("dimensions", json!(["a", "b", "c", "d", "e"])), "dimensions", "at most 4"),
        (with("date_range", json!("8x")), "date_range", "Invalid date range \"8x\""),
        (with("date_range", json!("0d")), "date_range", "Invalid date range"),
        (with("date_range", json!("5001d")), "date_range", "Invalid date range"),
        (with("date_range", json!("101mo")), "date_range", "Invalid date range"),
        (with("date_range", json!(["2024-02-01", "2024-01-01"])), "date_range", "after"),
        (with("date_range", json!(["2024-02-30", "2024-03-01"])), "date_range", "Invalid date range"),
        (with("date_range", json!(["2024-01-01T00:00:00", "2024-01-02T00:00:00"])), "date_range", "offset"),
        (with("date_range", json!(["yesterday", "today"])), "date_range", "Invalid date range"),
        (with("date_range", json!(["0001-01-01", "9999-12-31"])), "date_range", "1970-01-01 or later"),
        (with("date_range", json!(["1970-01-01", "9999-12-31"])), "date_range", "at most 36600 days"),
        (
            with("filters", json!([["matches", "event:page", ["^/a"], {"case_sensitive": false}]])),
            "filters[0]",
            "does not go with matches",
        ),
        (with("include", json!({"time_labels": true})), "include", "requires a time dimension"),
        (with("filters", json!([["equals", "visit:country", ["US"]]])), "filters[0]", "Unknown operator 'equals'"),
        (with("filters", json!([["is", "visit:planet", ["Mars"]]])), "filters[0]", "Invalid filter dimension"),
        (with("filters", json!([["is", "time:day", ["2024-01-01"]]])), "filters[0]", "date_range instead"),
        (with("filters", json!([["is", "visit:country", "US"]])), "filters[0]", "must be an array"),
        (with("filters", json!([["matches", "event:page", ["(unclosed"]]])), "filters[0]", "is invalid"),
        (with("filters", json!([["matches", "event:page", ["a{1000}{1000}"]]])), "filters[0]", "too costly"),
        (
            with("filters", json!([["and", [["is", "visit:os", ["Mac"]], ["oops"]]]])),
            "filters[0][1][1]",
            "Unknown operator 'oops'",
        ),
        (
            with("filters", json!([["has_done", ["is", "visit:country", ["DE"]]]])),
            "filters[0]",
            "only be used with event dimension filters",
        ),
        (
            with("filters", json!([["has_done", ["not", ["has_not_done", ["is", "event:page", ["/a"]]]]]])),
            "filters[0]",
            "cannot be nested",
        ),
        (with("order_by", json!([["pageviews", "desc"]])), "order_by", "not a metric or dimension"),
        (with("order_by", json!([["visitors", "up"]])), "order_by", "asc or desc"),
        (with("pagination", json!({"limit": 0})), "pagination", "between 1 and"),
        (with("include", json!({"comparisons": {"mode": "last_week"}})), "include", "comparisons.mode"),
        (with("include", json!({"colours": true})), "include", "not an include option"),
        (with("colour", json!("red")), "colour", "not a query field"),
        (
            json!({"metrics": ["bounce_rate"], "date_range": "7d", "dimensions": ["event:page"]}),
            "metrics",
            "Session metric(s) `bounce_rate` cannot be queried along with event dimension(s) `event:page`",
        ),
        (with("metrics", json!(["conversion_rate"])), "metrics", "event:goal"),
        (
            json!({"metrics": ["clicks"], "date_range": "7d", "dimensions": ["event:page"]}),
            "metrics",
            "Metric `clicks` goes only with",
        ),
        (json!({"metrics": ["visits"]}), "date_range", "is required"),
        (json!([1, 2]), "query", "JSON object"),
    ];
    for (body, field, reason) in cases {
        let (got_field, message) = refused(body.clone());
        assert_eq!(got_field, field, "{body}: {message}");
        assert!(message.contains(reason), "{body}: {message:?} should say {reason:?}");
    }
}
