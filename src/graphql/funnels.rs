//! Funnels (design §20): saved per site by members, read by the org, and
//! reported over a date range, overall and per group. The service checks.

use async_graphql::{Context, ID, InputObject, Json, Object, SimpleObject};
use serde_json::Value;

use super::{
    context::ContextExt,
    cost,
    goals::Goal,
    types::{Timestamp, parse_id},
};
use crate::{
    error::AppResult,
    service::funnels::{self, Breakdown, FunnelAsk, StepsAsked, compute::StepFigures},
    time::now_ms,
};

#[derive(InputObject)]
pub struct FunnelInput {
    /// 1 to 120 characters.
    pub name: String,
    /// 2 to 8 goal ids, in order; a goal may come back (`pricing`, `signup`, `pricing`).
    pub steps: Vec<ID>,
    /// Done within this many days of the first step (1 to 90); none: within one visit.
    pub window_days: Option<i32>,
}

fn typed(input: FunnelInput) -> AppResult<funnels::FunnelInput> {
    let steps = input
        .steps
        .iter()
        .enumerate()
        .map(|(at, id)| {
            id.parse::<i64>()
                .map_err(|_| crate::error::AppError::validation(&format!("steps[{at}]"), "is not a goal id"))
        })
        .collect::<AppResult<Vec<i64>>>()?;
    Ok(funnels::FunnelInput { name: input.name, steps, window_days: input.window_days })
}

pub struct Funnel(funnels::Funnel);

#[Object]
impl Funnel {
    async fn id(&self) -> ID {
        ID(self.0.model.id.to_string())
    }
    async fn site_id(&self) -> i64 {
        self.0.model.site_id
    }
    async fn name(&self) -> &str {
        &self.0.model.name
    }
    /// The steps' goals, in order (a goal deleted since is left out).
    async fn steps(&self) -> Vec<Goal> {
        self.0.steps.iter().cloned().map(Goal).collect()
    }
    /// Null: within one visit.
    async fn window_days(&self) -> Option<i32> {
        self.0.model.window_days
    }
    /// Steps left out because their goal was deleted since the funnel was saved.
    async fn removed_steps(&self) -> i32 {
        i32::try_from(self.0.removed_steps).unwrap_or(i32::MAX)
    }
    async fn updated_at(&self) -> Timestamp {
        Timestamp(self.0.model.updated_at)
    }
}

/// What a report is asked: a saved funnel (`funnelId`), or goal names
/// (`steps`, with `siteId` and `windowDays`).
#[derive(InputObject)]
pub struct FunnelReportInput {
    pub site_id: Option<i64>,
    pub funnel_id: Option<ID>,
    /// Goal names, in order.
    pub steps: Option<Vec<String>>,
    pub window_days: Option<i32>,
    /// Explore's `date_range` (`30d`, `month`, `["2026-01-01", "2026-01-31"]`); `30d` when absent.
    pub date_range: Option<Json<Value>>,
    /// `channel`, `source`, `campaign`, `link` or `account`.
    pub breakdown: Option<String>,
}

impl FunnelReportInput {
    fn ask(self) -> AppResult<FunnelAsk> {
        let steps = match (self.funnel_id, self.steps) {
            (Some(id), _) => StepsAsked::Funnel(parse_id(&id, "funnel")?),
            (None, Some(names)) => StepsAsked::Goals(names),
            (None, None) => {
                return Err(crate::error::AppError::validation("steps", "name a funnel_id or the steps' goals"));
            }
        };
        Ok(FunnelAsk {
            site_id: self.site_id,
            steps,
            window_days: self.window_days,
            date_range: self.date_range.map_or_else(|| Value::from("30d"), |range| range.0),
            breakdown: self.breakdown.as_deref().map(Breakdown::parse).transpose()?,
        })
    }

    /// Like an Explore query over the same range.
    pub fn cost(&self) -> usize {
        cost::explore(self.date_range.as_ref().map_or(&Value::from("30d"), |range| &range.0), None)
    }
}

/// One step of a report.
#[derive(SimpleObject)]
pub struct FunnelStep {
    pub goal: String,
    /// Visitors who got at least this far.
    pub visitors: i64,
    /// Percent of the previous step's visitors (2 decimals).
    pub conversion_from_previous: f64,
    /// Percent of the first step's visitors (2 decimals).
    pub conversion_from_first: f64,
    /// The previous step's visitors who did not get here.
    pub dropoff: i64,
}

fn steps_of(goals: &[String], figures: &[StepFigures]) -> Vec<FunnelStep> {
    goals
        .iter()
        .zip(figures)
        .map(|(goal, figures)| FunnelStep {
            goal: goal.clone(),
            visitors: figures.visitors,
            conversion_from_previous: figures.from_previous,
            conversion_from_first: figures.from_first,
            dropoff: figures.dropoff,
        })
        .collect()
}

#[derive(SimpleObject)]
pub struct FunnelGroup {
    pub value: String,
    pub steps: Vec<FunnelStep>,
}

#[derive(SimpleObject)]
pub struct FunnelReport {
    pub site_id: i64,
    /// The saved funnel's name.
    pub name: Option<String>,
    pub window_days: Option<i32>,
    pub from: Timestamp,
    /// The end of the range (exclusive).
    pub to: Timestamp,
    pub steps: Vec<FunnelStep>,
    pub breakdown: Option<String>,
    /// Most visitors at the first step first; at most 100.
    pub groups: Vec<FunnelGroup>,
    /// A saved funnel's steps left out because their goal was deleted since;
    /// the figures are of the steps that remain.
    pub removed_steps: i32,
}

impl From<funnels::FunnelReport> for FunnelReport {
    fn from(report: funnels::FunnelReport) -> Self {
        FunnelReport {
            site_id: report.site_id,
            name: report.name,
            window_days: report.window_days,
            from: Timestamp(report.from),
            to: Timestamp(report.to),
            steps: steps_of(&report.steps, &report.figures),
            breakdown: report.breakdown.map(|b| b.name().to_owned()),
            groups: report
                .groups
                .iter()
                .map(|group| FunnelGroup { value: group.value.clone(), steps: steps_of(&report.steps, &group.figures) })
                .collect(),
            removed_steps: i32::try_from(report.removed_steps).unwrap_or(i32::MAX),
        }
    }
}

#[derive(Default)]
pub struct FunnelQuery;

#[Object]
impl FunnelQuery {
    /// The site's funnels, by name.
    async fn funnels(&self, ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<Funnel>> {
        site_funnels(ctx, site_id).await
    }

    /// A funnel's visitors, conversion and drop-off per step over a range.
    #[graphql(complexity = "input.cost() + child_complexity")]
    async fn funnel_report(&self, ctx: &Context<'_>, input: FunnelReportInput) -> AppResult<FunnelReport> {
        let ask = input.ask()?;
        Ok(funnels::report(&*ctx.db().await?, ctx.viewer()?, ask, (now_ms(), Some(ctx.app().visit_copies.clone())))
            .await?
            .into())
    }
}

#[derive(Default)]
pub struct FunnelMutation;

#[Object]
impl FunnelMutation {
    /// Saves a funnel for the site's org. Members and up.
    async fn create_funnel(&self, ctx: &Context<'_>, site_id: i64, input: FunnelInput) -> AppResult<Funnel> {
        let input = typed(input)?;
        Ok(Funnel(funnels::create(&*ctx.db().await?, ctx.viewer()?, site_id, &input, now_ms()).await?))
    }

    /// Replaces the funnel's name, steps and window. Members and up.
    async fn update_funnel(&self, ctx: &Context<'_>, id: ID, input: FunnelInput) -> AppResult<Funnel> {
        let id = parse_id(&id, "funnel")?;
        let input = typed(input)?;
        Ok(Funnel(funnels::update(&*ctx.db().await?, ctx.viewer()?, id, &input, now_ms()).await?))
    }

    /// Deletes the funnel. Members and up.
    async fn delete_funnel(&self, ctx: &Context<'_>, id: ID) -> AppResult<bool> {
        funnels::delete(&*ctx.db().await?, ctx.viewer()?, parse_id(&id, "funnel")?).await?;
        Ok(true)
    }
}

/// `funnelReport` with the site filled in: a saved funnel must be of that site.
pub(crate) async fn report_for(
    ctx: &Context<'_>,
    site_id: i64,
    mut input: FunnelReportInput,
) -> AppResult<FunnelReport> {
    input.site_id = Some(site_id);
    let ask = input.ask()?;
    let report =
        funnels::report(&*ctx.db().await?, ctx.viewer()?, ask, (now_ms(), Some(ctx.app().visit_copies.clone())))
            .await?;
    if report.site_id != site_id {
        return Err(crate::error::AppError::not_found("funnel"));
    }
    Ok(report.into())
}

/// The read above as a function, which `workspace` also calls.
pub(crate) async fn site_funnels(ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<Funnel>> {
    let found = funnels::list(&*ctx.db().await?, ctx.viewer()?, site_id).await?;
    Ok(found.into_iter().map(Funnel).collect())
}
