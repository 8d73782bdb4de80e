//! `/funnels`: the site's funnels (design §20). Pick one to see, over a
//! range, the visitors at each step as bars, the conversion from the step
//! before and from the first, the drop-off, and optionally the same per
//! channel, source, campaign, tracking link or account. Members save new
//! funnels from the site's goals and delete them.

use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::page::{PageInput, Param};
use crate::{
    auth::Role,
    error::{AppError, AppResult},
    web::{
        bridge, format,
        forms::{self, Done, Form, FormState, input},
        layout::Layout,
    },
};

const CREATE: &str = include_str!("../documents/create_funnel.graphql");
const DELETE: &str = include_str!("../documents/delete_funnel.graphql");

const PATH: &str = "/funnels";
/// The ranges the page offers: (value, label).
pub const RANGES: [(&str, &str); 6] = [
    ("7d", "Last 7 days"),
    ("30d", "Last 30 days"),
    ("91d", "Last 91 days"),
    ("month", "This month"),
    ("12mo", "Last 12 months"),
    ("all", "All time"),
];
pub const BREAKDOWNS: [(&str, &str); 6] = [
    ("", "No breakdown"),
    ("channel", "By channel"),
    ("source", "By source"),
    ("campaign", "By campaign"),
    ("link", "By tracking link"),
    ("account", "By account"),
];
/// How long a visitor has for the steps: (value, label).
pub const WINDOWS: [(&str, &str); 5] =
    [("visit", "One visit"), ("1", "1 day"), ("7", "7 days"), ("30", "30 days"), ("90", "90 days")];
const STEP_FIELDS: [&str; 8] = ["step1", "step2", "step3", "step4", "step5", "step6", "step7", "step8"];

/// One part of the report's input (`$report`), and whether there is one.
fn report_part(name: &str, raw: Option<&str>, variables: &mut Map<String, Value>) -> AppResult<()> {
    let report = variables.entry("report").or_insert_with(|| json!({}));
    if let Value::Object(report) = report {
        match raw {
            Some(raw) => report.insert(name.to_owned(), json!(raw)),
            None => report.remove(name),
        };
    }
    let has = variables["report"].get("funnelId").is_some();
    variables.insert("hasReport".to_owned(), json!(has));
    Ok(())
}

pub const PARAMS: [Param; 3] = [
    Param { name: "funnel", label: "", fill: |raw, variables| report_part("funnelId", raw, variables) },
    Param { name: "range", label: "", fill: |raw, variables| report_part("dateRange", raw, variables) },
    Param { name: "breakdown", label: "", fill: |raw, variables| report_part("breakdown", raw, variables) },
];

pub const FORMS: [Form; 2] = [
    Form {
        action: "create",
        document: CREATE,
        variables: |input| {
            let steps: Vec<String> =
                STEP_FIELDS.iter().map(|name| input.text(name)).filter(|id| !id.is_empty()).collect();
            let window_days = match input.text("window").as_str() {
                "" | "visit" => Value::Null,
                days => json!(days.parse::<i32>().map_err(|_| AppError::validation("window", "choose a window"))?),
            };
            Ok(
                json!({ "siteId": input.site()?, "input": { "name": input.text("name"), "steps": steps, "windowDays": window_days } }),
            )
        },
        inputs: &[
            input("name", "Name", "input.name"),
            input("step1", "Steps", "input.steps"),
            input("window", "Done within", "input.windowDays"),
        ],
        done: Done::Redirect(|input, answer| {
            let id = answer["createFunnel"]["id"].as_str().unwrap_or_default();
            let site =
                input.site_id.filter(|_| input.site_chosen).map(|site| format!("site={site}&")).unwrap_or_default();
            format!("{PATH}?{site}funnel={id}&done=funnel-created")
        }),
    },
    Form {
        action: "delete",
        document: DELETE,
        variables: |input| Ok(json!({ "id": input.text("funnel") })),
        inputs: &[],
        done: Done::Redirect(|input, _| forms::back_to(input, PATH, "funnel-deleted")),
    },
];

#[derive(Deserialize)]
struct Answer {
    workspace: Scoped,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scoped {
    #[serde(default)]
    goals: Option<Vec<NamedGoal>>,
    #[serde(default)]
    funnels: Option<Vec<Funnel>>,
    #[serde(default)]
    funnel_report: Option<Report>,
}

#[derive(Deserialize, Clone)]
pub struct NamedGoal {
    pub id: String,
    pub name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Funnel {
    id: String,
    name: String,
    window_days: Option<i32>,
    removed_steps: i32,
    steps: Vec<NamedGoal>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    name: Option<String>,
    window_days: Option<i32>,
    breakdown: Option<String>,
    removed_steps: i32,
    steps: Vec<Step>,
    groups: Vec<Group>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Step {
    goal: String,
    visitors: i64,
    conversion_from_previous: f64,
    conversion_from_first: f64,
    dropoff: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Group {
    value: String,
    steps: Vec<GroupStep>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupStep {
    visitors: i64,
    conversion_from_first: f64,
}

pub struct FunnelLink {
    pub name: String,
    pub href: String,
    pub current: bool,
    pub summary: String,
}

pub struct StepRow {
    pub number: usize,
    pub goal: String,
    pub visitors: String,
    /// The bar's width: percent of the first step.
    pub width: f64,
    pub from_previous: String,
    pub from_first: String,
    pub dropoff: String,
}

pub struct GroupRow {
    pub value: String,
    pub cells: Vec<String>,
    pub overall: String,
}

pub struct ReportView {
    pub id: String,
    pub title: String,
    pub window: String,
    /// Said when saved steps lost their goal, else empty.
    pub removed: String,
    pub steps: Vec<StepRow>,
    pub breakdown_label: String,
    pub step_names: Vec<String>,
    pub groups: Vec<GroupRow>,
}

#[derive(Template)]
#[template(path = "funnels.html")]
struct FunnelsPage<'a> {
    layout: Layout,
    notice: Option<&'static str>,
    action_path: String,
    can_edit: bool,
    goals: Vec<NamedGoal>,
    funnels: Vec<FunnelLink>,
    report: Option<ReportView>,
    range: String,
    breakdown: String,
    ranges: &'static [(&'static str, &'static str)],
    breakdowns: &'static [(&'static str, &'static str)],
    step_fields: &'static [&'static str],
    windows: &'static [(&'static str, &'static str)],
    /// The site the address chose, kept by the range form.
    chosen_site: Option<i64>,
    state: &'a FormState,
}

fn window_text(days: Option<i32>) -> String {
    match days {
        None => "within one visit".to_owned(),
        Some(1) => "within 1 day".to_owned(),
        Some(days) => format!("within {days} days"),
    }
}

/// What a saved funnel lost when goals were deleted, or nothing.
fn removed_text(removed: i32) -> String {
    match removed {
        0 => String::new(),
        1 => "1 step was left out: its goal was deleted.".to_owned(),
        count => format!("{count} steps were left out: their goals were deleted."),
    }
}

fn percent(value: f64) -> String {
    format!("{value:.1}%")
}

fn report_view(report: Report, id: &str) -> ReportView {
    let first = report.steps.first().map_or(0, |step| step.visitors);
    let steps = report
        .steps
        .iter()
        .enumerate()
        .map(|(at, step)| StepRow {
            number: at + 1,
            goal: step.goal.clone(),
            visitors: format::number(step.visitors),
            width: if first == 0 { 0.0 } else { step.visitors as f64 / first as f64 * 100.0 },
            from_previous: if at == 0 { "—".to_owned() } else { percent(step.conversion_from_previous) },
            from_first: percent(step.conversion_from_first),
            dropoff: if at == 0 { "—".to_owned() } else { format::number(step.dropoff) },
        })
        .collect();
    let breakdown_label = BREAKDOWNS.iter().find(|(value, _)| Some(*value) == report.breakdown.as_deref()).map_or(
        String::new(),
        |(_, label)| {
            let rest = label.trim_start_matches("By ");
            let mut letters = rest.chars();
            letters.next().map_or(String::new(), |first| first.to_uppercase().chain(letters).collect())
        },
    );
    ReportView {
        id: id.to_owned(),
        title: report.name.unwrap_or_default(),
        window: window_text(report.window_days),
        removed: removed_text(report.removed_steps),
        step_names: report.steps.iter().map(|step| step.goal.clone()).collect(),
        steps,
        breakdown_label,
        groups: report
            .groups
            .into_iter()
            .map(|group| GroupRow {
                cells: group.steps.iter().map(|step| format::number(step.visitors)).collect(),
                overall: group.steps.last().map_or(String::new(), |step| percent(step.conversion_from_first)),
                value: group.value,
            })
            .collect(),
    }
}

pub fn render(mut layout: Layout, input: &PageInput, data: Value) -> AppResult<String> {
    let answer = bridge::decode::<Answer>(data)?.workspace;
    let chosen = input.param("funnel").unwrap_or_default().to_owned();
    let range = input.param("range").filter(|r| RANGES.iter().any(|(v, _)| v == r)).unwrap_or("30d").to_owned();
    let breakdown = input.param("breakdown").unwrap_or_default().to_owned();
    let href = |id: &str| {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if let Some(site) = input.site_id.filter(|_| input.site_query.is_some()) {
            query.append_pair("site", &site.to_string());
        }
        query.append_pair("funnel", id).append_pair("range", &range);
        format!("{PATH}?{}", query.finish())
    };
    let funnels = answer
        .funnels
        .unwrap_or_default()
        .into_iter()
        .map(|funnel| FunnelLink {
            href: href(&funnel.id),
            current: funnel.id == chosen,
            summary: format!(
                "{}, {}{}",
                funnel.steps.iter().map(|step| step.name.as_str()).collect::<Vec<_>>().join(" → "),
                window_text(funnel.window_days),
                match funnel.removed_steps {
                    0 => String::new(),
                    1 => " (1 step's goal was deleted)".to_owned(),
                    count => format!(" ({count} steps' goals were deleted)"),
                }
            ),
            name: funnel.name,
        })
        .collect();
    layout.title = "Funnels".to_owned();
    let page = FunnelsPage {
        layout,
        notice: forms::notice(input.param("done")),
        action_path: input.with_site(PATH),
        can_edit: input.role() >= Role::Member,
        goals: answer.goals.unwrap_or_default(),
        funnels,
        report: answer.funnel_report.map(|report| report_view(report, &chosen)),
        range,
        breakdown,
        ranges: &RANGES,
        breakdowns: &BREAKDOWNS,
        step_fields: &STEP_FIELDS,
        windows: &WINDOWS,
        chosen_site: input.site_id.filter(|_| input.site_query.is_some()),
        state: &input.form,
    };
    page.render().map_err(AppError::internal)
}
