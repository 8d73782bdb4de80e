//! The SQL that answers an Explore query, built as text with bound values
//! for either database. Events are read with their visit (and visitor when
//! asked), grouped per visit first so visit figures (bounces, durations)
//! count each visit once, then per dimension. Tracking-link clicks are a
//! statement of their own over `link_clicks`.

use sea_orm::{DbBackend, Statement, Value};

use super::{
    query::{self, Condition, Dimension, EventProperty, Filter, Operator, VisitProperty, VisitorProperty},
    range::{Buckets, Span},
};
use crate::service::goals::{Goal, Target};

/// SQL text and the values bound to its placeholders.
pub struct Sql {
    backend: DbBackend,
    pub text: String,
    values: Vec<Value>,
}

impl Sql {
    pub fn new(backend: DbBackend) -> Self {
        Sql { backend, text: String::new(), values: Vec::new() }
    }

    pub fn backend(&self) -> DbBackend {
        self.backend
    }

    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    pub fn bind(&mut self, value: impl Into<Value>) -> &mut Self {
        self.values.push(value.into());
        match self.backend {
            DbBackend::Postgres => {
                let at = self.values.len();
                self.text.push_str(&format!("${at}"));
            }
            _ => self.text.push('?'),
        }
        self
    }

    /// ` IN (the listed texts)`, as one bound JSON array however long.
    fn in_list(&mut self, values: &[String]) {
        let list = serde_json::Value::from(values.to_vec()).to_string();
        match self.backend {
            DbBackend::Postgres => {
                self.push(" IN (SELECT jsonb_array_elements_text(CAST(").bind(list).push(" AS jsonb)))")
            }
            _ => self.push(" IN (SELECT value FROM json_each(").bind(list).push("))"),
        };
    }

    /// `(the listed ids)`, as one bound JSON array however long.
    pub fn in_ids(&mut self, ids: Vec<i64>) -> &mut Self {
        let list = serde_json::Value::from(ids).to_string();
        match self.backend {
            DbBackend::Postgres => {
                self.push("(SELECT CAST(jsonb_array_elements_text(CAST(").bind(list).push(" AS jsonb)) AS BIGINT))")
            }
            _ => self.push("(SELECT value FROM json_each(").bind(list).push("))"),
        }
    }

    pub fn statement(self) -> Statement {
        Statement::from_sql_and_values(self.backend, self.text, self.values)
    }
}

/// Where a statement reads rows from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `events e JOIN tracked_sessions s [JOIN visitors v]`.
    Events,
    /// `link_clicks c`.
    Clicks,
}

/// A stored value as the answer shows it: a country's name for
/// `visit:country_name`, the blank's name for a blank, else as stored.
pub fn shown(dimension: &Dimension, stored: Option<&str>) -> String {
    match stored.filter(|value| !value.is_empty()) {
        None => blank(dimension).to_owned(),
        Some(code) if *dimension == Dimension::Visit(VisitProperty::CountryName) => {
            crate::enrich::geo::country_name(code).to_owned()
        }
        Some(value) => value.to_owned(),
    }
}

/// What a blank value of a dimension is called, as Plausible names it; a
/// filter value equal to it matches blanks.
pub fn blank(dimension: &Dimension) -> &'static str {
    match dimension {
        Dimension::Visit(VisitProperty::Source | VisitProperty::Referrer) => "Direct / None",
        Dimension::Visit(VisitProperty::Channel) => "Direct",
        Dimension::Visit(
            VisitProperty::UtmSource
            | VisitProperty::UtmMedium
            | VisitProperty::UtmCampaign
            | VisitProperty::UtmContent
            | VisitProperty::UtmTerm
            | VisitProperty::Device
            | VisitProperty::Browser
            | VisitProperty::Os,
        ) => "(not set)",
        Dimension::Event(EventProperty::Prop(_))
        | Dimension::Visitor(VisitorProperty::Account)
        | Dimension::Visit(VisitProperty::Link) => "(none)",
        _ => "",
    }
}

/// The site-specific parts an expression needs.
pub struct Context<'a> {
    pub backend: DbBackend,
    pub site_id: i64,
    /// The span read, for behavioural filters' own events.
    pub span: Span,
    /// What events stored before hostnames were kept read as.
    pub domain: &'a str,
    pub buckets: Option<&'a Buckets>,
    /// The site's goals, for `event:goal` conditions.
    pub goals: &'a [Goal],
}

/// Whether `source` has `dimension`.
pub fn has(source: Source, dimension: &Dimension) -> bool {
    match (source, dimension) {
        (_, Dimension::Time(_)) => true,
        (Source::Events, _) => true,
        (Source::Clicks, dimension) => query::clicks_can_split(dimension),
    }
}

/// Writes a dimension's value as SQL: time as its bucket number, anything
/// else as text or NULL. A dimension the source lacks is NULL (`has` says).
pub fn expression(sql: &mut Sql, context: &Context<'_>, source: Source, dimension: &Dimension) {
    if !has(source, dimension) {
        sql.push("CAST(NULL AS TEXT)");
        return;
    }
    let column = match (source, dimension) {
        (_, Dimension::Time(_)) => {
            let column = if source == Source::Events { "e.timestamp" } else { "c.created_at" };
            match context.buckets {
                Some(buckets) => buckets.sql(column),
                None => "0".to_owned(),
            }
        }
        (Source::Events, Dimension::Event(property)) => match property {
            EventProperty::Page => "e.page".to_owned(),
            EventProperty::Hostname => {
                sql.push("COALESCE(e.hostname, ").bind(context.domain.to_owned()).push(")");
                return;
            }
            EventProperty::Name => {
                "(CASE WHEN e.event_type = 'pageview' THEN 'pageview' ELSE e.event_name END)".to_owned()
            }
            // An event may reach several goals: `figures` splits by goal with
            // one goal condition per group, so no single value stands here.
            EventProperty::Goal => "CAST(NULL AS TEXT)".to_owned(),
            EventProperty::Prop(key) => {
                prop(sql, context.backend, key);
                return;
            }
        },
        (Source::Events, Dimension::Visit(property)) => match property {
            VisitProperty::EntryPage => "s.entry_page",
            VisitProperty::ExitPage => "s.exit_page",
            VisitProperty::Source => "s.source",
            VisitProperty::Referrer => "s.referrer",
            VisitProperty::Channel => "s.channel",
            VisitProperty::UtmSource => "s.utm_source",
            VisitProperty::UtmMedium => "s.utm_medium",
            VisitProperty::UtmCampaign => "s.utm_campaign",
            VisitProperty::UtmContent => "s.utm_content",
            VisitProperty::UtmTerm => "s.utm_term",
            VisitProperty::Device => "s.device_type",
            VisitProperty::Browser => "s.browser",
            VisitProperty::Os => "s.os",
            VisitProperty::Country | VisitProperty::CountryName => "s.country",
            VisitProperty::Region | VisitProperty::RegionName => "s.region",
            VisitProperty::City | VisitProperty::CityName => "s.city",
            // The slug of the link whose click started the visit.
            VisitProperty::Link => "(SELECT l.slug FROM links l WHERE l.id = s.link_id)",
        }
        .to_owned(),
        (Source::Events, Dimension::Visitor(VisitorProperty::Status)) => "v.status".to_owned(),
        (Source::Events, Dimension::Visitor(VisitorProperty::Account)) => "v.account_key".to_owned(),
        (Source::Clicks, Dimension::Visit(property)) => match property {
            VisitProperty::Link => "c.slug",
            VisitProperty::UtmSource => "c.source",
            VisitProperty::UtmMedium => "c.medium",
            VisitProperty::UtmCampaign => "c.campaign",
            VisitProperty::Country | VisitProperty::CountryName => "c.country",
            VisitProperty::Region | VisitProperty::RegionName => "c.region",
            VisitProperty::City | VisitProperty::CityName => "c.city",
            VisitProperty::Device => "c.device_type",
            VisitProperty::Browser => "c.browser",
            _ => "c.os",
        }
        .to_owned(),
        (Source::Clicks, _) => "CAST(NULL AS TEXT)".to_owned(),
    };
    sql.push(&column);
}

/// An event property's value as text.
fn prop(sql: &mut Sql, backend: DbBackend, key: &str) {
    match backend {
        DbBackend::Postgres => sql.push("(CAST(e.props AS jsonb) ->> ").bind(key.to_owned()).push(")"),
        _ => sql.push("CAST(json_extract(e.props, ").bind(format!("$.\"{key}\"")).push(") AS TEXT)"),
    };
}

/// Whether the event `e` reaches `goal`: a pageview whose path matches, or
/// a custom event of the name (with the property's value).
pub fn reaches(sql: &mut Sql, backend: DbBackend, goal: &Goal) {
    match &goal.target {
        Target::Page(pattern) => {
            sql.push("(e.event_type = 'pageview' AND e.page");
            match backend {
                DbBackend::Postgres => sql.push(" LIKE ").bind(pattern.like()).push(" ESCAPE '!'"),
                _ => sql.push(" GLOB ").bind(pattern.glob()),
            };
        }
        Target::Event { name, prop: wanted } => {
            sql.push("(e.event_type = 'custom_event' AND e.event_name = ").bind(name.clone());
            if let Some((key, value)) = wanted {
                sql.push(" AND ");
                prop(sql, backend, key);
                sql.push(" = ").bind(value.clone());
            }
        }
    }
    sql.push(")");
}

/// An `event:goal` condition: the event reaches one of the goals whose
/// name the condition keeps. Clicks reach no goal.
fn goal_condition(sql: &mut Sql, context: &Context<'_>, source: Source, condition: &Condition) {
    if condition.operator.negated() {
        sql.push("NOT ");
    }
    let kept: Vec<&Goal> = context.goals.iter().filter(|goal| condition.keeps(&goal.name)).collect();
    if kept.is_empty() || source != Source::Events {
        sql.push("(1 = 0)");
        return;
    }
    sql.push("(");
    for (at, goal) in kept.into_iter().enumerate() {
        if at > 0 {
            sql.push(" OR ");
        }
        reaches(sql, context.backend, goal);
    }
    sql.push(")");
}

/// Whether the events statement must join the visit or the visitor.
pub fn needs_join(dimensions: &[Dimension], filters: &[Filter], visitor: bool) -> bool {
    let wanted = |dimension: &Dimension| match dimension {
        Dimension::Visit(_) => !visitor,
        Dimension::Visitor(_) => visitor,
        _ => false,
    };
    let mut needed = dimensions.iter().any(wanted);
    filters.iter().for_each(|filter| filter.conditions(&mut |condition| needed |= wanted(&condition.dimension)));
    needed
}

/// Each `matches` condition's matching values, in the order `conditions`
/// visits them: a regex runs in Rust over the distinct values, so both
/// databases match the same way.
pub type Resolved = Vec<Vec<String>>;

/// A dimension's value as compared by filters: blank as `''`, lowercased
/// when the filter ignores case.
fn target(sql: &mut Sql, context: &Context<'_>, source: Source, condition: &Condition) {
    sql.push(if condition.case_sensitive { "COALESCE(" } else { "LOWER(COALESCE(" });
    expression(sql, context, source, &condition.dimension);
    sql.push(if condition.case_sensitive { ", '')" } else { ", ''))" });
}

fn condition(
    sql: &mut Sql,
    context: &Context<'_>,
    source: Source,
    condition: &Condition,
    resolved: &mut std::slice::Iter<'_, Vec<String>>,
) {
    if condition.dimension == Dimension::Event(EventProperty::Goal) {
        goal_condition(sql, context, source, condition);
        return;
    }
    let blank = blank(&condition.dimension);
    let values: Vec<String> = condition
        .values
        .iter()
        .map(|value| if value == blank { String::new() } else { value.clone() })
        .map(|value| if condition.case_sensitive { value } else { value.to_lowercase() })
        .collect();
    if source == Source::Events && names_custom_events(condition, &values) {
        // The same rows as the name's expression below, on the custom events' index.
        sql.push("(e.event_type = 'custom_event' AND e.event_name IS NOT NULL AND e.event_name");
        sql.in_list(&values);
        sql.push(")");
        return;
    }
    if condition.operator.negated() {
        sql.push("NOT ");
    }
    sql.push("(");
    if condition.decided_in_rust() {
        let kept = resolved.next().cloned().unwrap_or_default();
        sql.push("COALESCE(");
        expression(sql, context, source, &condition.dimension);
        sql.push(", '')");
        sql.in_list(&kept);
    } else if matches!(condition.operator, Operator::Is | Operator::IsNot) {
        target(sql, context, source, condition);
        sql.in_list(&values);
    } else {
        let function = if context.backend == DbBackend::Postgres { "strpos(" } else { "instr(" };
        for (at, needle) in values.iter().enumerate() {
            if at > 0 {
                sql.push(" OR ");
            }
            sql.push(function);
            target(sql, context, source, condition);
            sql.push(", ").bind(needle.clone()).push(") > 0");
        }
    }
    sql.push(")");
}

/// Whether `condition` keeps only custom events of the named names: `is`
/// on `event:name`, case-sensitive, naming neither `pageview` (every
/// pageview's name) nor the blank. Then the events' name column alone
/// decides it, never NULL (so a `not` around it stays exact).
/// The one custom event name an `event:name` condition keeps, when it is
/// read as `names_custom_events` reads it.
pub fn custom_event_name(condition: &Condition) -> Option<String> {
    let [value] = condition.values.as_slice() else { return None };
    let value = if value == blank(&condition.dimension) { String::new() } else { value.clone() };
    names_custom_events(condition, std::slice::from_ref(&value)).then_some(value)
}

fn names_custom_events(condition: &Condition, values: &[String]) -> bool {
    condition.dimension == Dimension::Event(EventProperty::Name)
        && condition.operator == Operator::Is
        && condition.case_sensitive
        && values.iter().all(|value| !value.is_empty() && value != "pageview")
}

pub fn filters(
    sql: &mut Sql,
    context: &Context<'_>,
    source: Source,
    all: &[Filter],
    resolved: &mut std::slice::Iter<'_, Vec<String>>,
) {
    for filter in all {
        sql.push(" AND ");
        one_filter(sql, context, source, filter, resolved);
    }
}

fn one_filter(
    sql: &mut Sql,
    context: &Context<'_>,
    source: Source,
    filter: &Filter,
    resolved: &mut std::slice::Iter<'_, Vec<String>>,
) {
    match filter {
        Filter::Condition(found) => condition(sql, context, source, found, resolved),
        Filter::And(all) | Filter::Or(all) => {
            let joint = if matches!(filter, Filter::And(_)) { " AND " } else { " OR " };
            sql.push("(");
            for (at, inner) in all.iter().enumerate() {
                if at > 0 {
                    sql.push(joint);
                }
                one_filter(sql, context, source, inner, resolved);
            }
            sql.push(")");
        }
        Filter::Not(inner) => {
            sql.push("NOT (");
            one_filter(sql, context, source, inner, resolved);
            sql.push(")");
        }
        // Only events have visits; parsing keeps behaviours to event conditions.
        Filter::HasDone { .. } if source != Source::Events => {
            sql.push("1 = 0");
        }
        Filter::HasDone { done, inner } => {
            // The inner `e` is the subquery's own: its conditions read its events.
            sql.push(if *done { "e.session_id IN (" } else { "e.session_id NOT IN (" });
            sql.push("SELECT e.session_id FROM events e WHERE e.site_id = ")
                .bind(context.site_id)
                .push(" AND e.is_bot = ")
                .bind(false)
                .push(" AND e.timestamp >= ")
                .bind(context.span.from)
                .push(" AND e.timestamp < ")
                .bind(context.span.to)
                .push(" AND ");
            one_filter(sql, context, source, inner, resolved);
            sql.push(")");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The one condition of a query's filters.
    fn condition_of(filter: serde_json::Value) -> Condition {
        let body = json!({"site_id": "x", "metrics": ["visitors"], "date_range": "7d", "filters": [filter]});
        let filters = query::parse(&body).expect("a valid query").filters;
        let mut found = None;
        filters.iter().for_each(|filter| filter.conditions(&mut |condition| found = Some(condition.clone())));
        found.expect("a condition")
    }

    #[test]
    fn only_a_case_sensitive_is_on_custom_event_names_reads_the_name_column() {
        // filter, the values as `condition` compares them -> read on the name column
        let table = [
            (json!(["is", "event:name", ["signup"]]), vec!["signup"], true),
            (json!(["is", "event:name", ["signup", "demo"]]), vec!["signup", "demo"], true),
            (json!(["is", "event:name", ["signup", "pageview"]]), vec!["signup", "pageview"], false),
            (json!(["is", "event:name", ["(none)"]]), vec![""], false),
            (json!(["is", "event:name", ["Signup"], {"case_sensitive": false}]), vec!["signup"], false),
            (json!(["is_not", "event:name", ["signup"]]), vec!["signup"], false),
            (json!(["contains", "event:name", ["sign"]]), vec!["sign"], false),
            (json!(["is", "event:page", ["/signup"]]), vec!["/signup"], false),
        ];
        for (filter, values, expected) in table {
            let values: Vec<String> = values.into_iter().map(str::to_owned).collect();
            assert_eq!(names_custom_events(&condition_of(filter.clone()), &values), expected, "{filter}");
        }
    }
}
