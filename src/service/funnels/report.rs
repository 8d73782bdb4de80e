//! A funnel's figures over a date range: the events that reach any step,
//! read once in the order they happened, each visitor's furthest way
//! through (`compute`), then the steps' figures, overall and per group of
//! the visit where each visitor's way through began.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use futures_util::TryStreamExt;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, StreamTrait};
use serde_json::Value;

use entity::{site, visitor};

use super::{
    Funnel, checked_count, checked_window,
    compute::{self, Reached, StepEvent, StepFigures, Window},
};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult},
    service::{
        IN_LIST_CHUNK, access,
        explore::{
            figures::first_event,
            query::{DateRange, parse_date_range},
            range,
            sql::{Sql, reaches},
            visit_copy::{Reading, SiteKey, VisitCopies},
        },
        goals::{self, Goal},
        sites,
        visit_groups::{self, VisitGroup},
    },
    time::DAY_MS,
};

/// Which steps: a saved funnel's, or goals named on the spot.
#[derive(Debug, Clone)]
pub enum StepsAsked {
    Funnel(i64),
    Goals(Vec<String>),
}

/// What a breakdown groups visitors by: the visit where their way through
/// the funnel began, or their account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breakdown {
    Visit(VisitGroup),
    Account,
}

impl Breakdown {
    pub fn parse(name: &str) -> AppResult<Breakdown> {
        match (name, VisitGroup::parse(name)) {
            (_, Some(group)) => Ok(Breakdown::Visit(group)),
            ("account", None) => Ok(Breakdown::Account),
            _ => Err(AppError::validation("breakdown", "must be channel, source, campaign, link or account")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Breakdown::Visit(group) => group.name(),
            Breakdown::Account => "account",
        }
    }
}

/// A report asked for.
#[derive(Debug, Clone)]
pub struct FunnelAsk {
    /// Needed with goal names; a saved funnel brings its own site.
    pub site_id: Option<i64>,
    pub steps: StepsAsked,
    /// With goal names: None for one visit. A saved funnel keeps its own.
    pub window_days: Option<i32>,
    /// Explore's `date_range`: `30d`, `month`, `["2026-01-01", "2026-01-31"]`...
    pub date_range: Value,
    pub breakdown: Option<Breakdown>,
}

pub struct GroupFigures {
    pub value: String,
    pub figures: Vec<StepFigures>,
}

pub struct FunnelReport {
    pub site_id: i64,
    pub name: Option<String>,
    /// The steps' goal names, in order.
    pub steps: Vec<String>,
    pub window_days: Option<i32>,
    pub from: i64,
    pub to: i64,
    pub figures: Vec<StepFigures>,
    pub breakdown: Option<Breakdown>,
    /// Most visitors at the first step first; at most `MAX_GROUPS`.
    pub groups: Vec<GroupFigures>,
    /// A saved funnel's steps left out because their goal was deleted.
    pub removed_steps: usize,
}

/// Groups a breakdown answers at most.
pub const MAX_GROUPS: usize = 100;

/// What a report is of: the site, the steps' goals, the funnel's name and
/// window, and how many saved steps lost their goal.
struct Steps {
    site: site::Model,
    goals: Vec<Goal>,
    name: Option<String>,
    window_days: Option<i32>,
    removed: usize,
}

/// The steps asked for, on a site the viewer can read. A saved funnel whose
/// goals were deleted since is reported over the steps it has left (even
/// fewer than two), so its page still opens and says what went; goals named
/// on the spot must be two to eight of the site's.
async fn steps_of(db: &impl ConnectionTrait, viewer: &Viewer, ask: &FunnelAsk) -> AppResult<Steps> {
    match &ask.steps {
        StepsAsked::Funnel(id) => {
            let (Funnel { model, steps, removed_steps }, site) = super::get(db, viewer, *id).await?;
            let goals = steps.iter().filter_map(Goal::of).collect();
            Ok(Steps { site, goals, name: Some(model.name), window_days: model.window_days, removed: removed_steps })
        }
        StepsAsked::Goals(names) => {
            let site_id = ask.site_id.ok_or_else(|| AppError::validation("site_id", "is required with steps"))?;
            let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
            checked_count(names.len())?;
            let rules = goals::rules(db, site.id).await?;
            let goals = names
                .iter()
                .enumerate()
                .map(|(at, name)| {
                    rules.iter().find(|goal| goal.name == *name).cloned().ok_or_else(|| {
                        AppError::validation(
                            &format!("steps[{at}]"),
                            format!("the goal `{name}` is not configured for this site"),
                        )
                    })
                })
                .collect::<AppResult<Vec<_>>>()?;
            Ok(Steps { site, goals, name: None, window_days: checked_window(ask.window_days)?, removed: 0 })
        }
    }
}

/// Each visitor's furthest way through: the events reaching any step, read
/// once in order per visitor as the database sends them (holding every
/// step event of a month at 10M events as rows took 1.7 GB).
async fn reached_per_visitor(
    db: &(impl ConnectionTrait + StreamTrait),
    site_id: i64,
    steps: &[Goal],
    span: range::Span,
    window: Window,
) -> AppResult<Vec<(i64, Reached)>> {
    if steps.is_empty() {
        return Ok(Vec::new());
    }
    let backend = ConnectionTrait::get_database_backend(db);
    let mut sql = Sql::new(backend);
    sql.push("SELECT e.visitor_id AS vid, e.session_id AS sid, e.timestamp AS at, CAST(");
    for (at, goal) in steps.iter().enumerate() {
        if at > 0 {
            sql.push(" + ");
        }
        sql.push("(CASE WHEN ");
        reaches(&mut sql, backend, goal);
        sql.push(&format!(" THEN {} ELSE 0 END)", 1u32 << at));
    }
    sql.push(" AS BIGINT) AS steps FROM events e WHERE e.site_id = ")
        .bind(site_id)
        .push(" AND e.is_bot = ")
        .bind(false)
        .push(" AND e.timestamp >= ")
        .bind(span.from)
        .push(" AND e.timestamp < ")
        .bind(span.to)
        .push(" AND (");
    for (at, goal) in steps.iter().enumerate() {
        if at > 0 {
            sql.push(" OR ");
        }
        reaches(&mut sql, backend, goal);
    }
    sql.push(") ORDER BY e.visitor_id, e.timestamp, e.id");
    let rows = db.stream_raw(sql.statement()).await?;
    let mut rows = std::pin::pin!(rows);
    let mut walk = Walk::new(steps.len(), window);
    while let Some(row) = rows.try_next().await? {
        let bits: i64 = row.try_get("", "steps")?;
        let event = StepEvent {
            session: row.try_get("", "sid")?,
            at: row.try_get("", "at")?,
            steps: u8::try_from(bits).unwrap_or(u8::MAX),
        };
        walk.push(row.try_get("", "vid")?, event);
    }
    Ok(walk.done())
}

/// Each visitor's furthest way through, from step events that come by
/// visitor and then in the order they happened; only one visitor's events
/// are held at a time.
struct Walk {
    step_count: usize,
    window: Window,
    visitor: Option<i64>,
    own: Vec<StepEvent>,
    reached: Vec<(i64, Reached)>,
}

impl Walk {
    fn new(step_count: usize, window: Window) -> Walk {
        Walk { step_count, window, visitor: None, own: Vec::new(), reached: Vec::new() }
    }

    fn push(&mut self, visitor: i64, event: StepEvent) {
        if self.visitor != Some(visitor) {
            self.finish_visitor();
            self.visitor = Some(visitor);
        }
        self.own.push(event);
    }

    fn finish_visitor(&mut self) {
        if let Some(done) = self.visitor {
            self.reached.push((done, compute::furthest(&self.own, self.step_count, self.window)));
        }
        self.own.clear();
    }

    fn done(mut self) -> Vec<(i64, Reached)> {
        self.finish_visitor();
        self.reached
    }
}

/// Each visitor's group: the value of the visit where they began, or their account.
async fn group_values(
    db: &impl ConnectionTrait,
    breakdown: Breakdown,
    reached: &[(i64, Reached)],
) -> AppResult<HashMap<i64, String>> {
    let mut values = HashMap::new();
    if breakdown == Breakdown::Account {
        let ids: Vec<i64> = reached.iter().map(|(visitor, _)| *visitor).collect();
        for chunk in ids.chunks(IN_LIST_CHUNK) {
            let rows: Vec<(i64, Option<String>)> = visitor::Entity::find()
                .select_only()
                .column(visitor::Column::Id)
                .column(visitor::Column::AccountKey)
                .filter(visitor::Column::Id.is_in(chunk.iter().copied()))
                .into_tuple()
                .all(db)
                .await?;
            values.extend(rows.into_iter().map(|(id, key)| (id, key.unwrap_or_else(|| "(none)".to_owned()))));
        }
        return Ok(values);
    }
    let Breakdown::Visit(group) = breakdown else { return Ok(values) };
    let ids: Vec<i64> = reached.iter().filter_map(|(_, reached)| reached.start_session).collect();
    let sessions = visit_groups::origins_by_id(db, &ids).await?;
    let slugs = visit_groups::link_slugs(db, group, sessions.iter().filter_map(|session| session.link_id)).await?;
    let by_session: HashMap<i64, String> =
        sessions.iter().map(|session| (session.id, group.key(session, &slugs))).collect();
    for (visitor, reached) in reached {
        if let Some(value) = reached.start_session.and_then(|session| by_session.get(&session)) {
            values.insert(*visitor, value.clone());
        }
    }
    Ok(values)
}

/// Answers a funnel report; with `copies`, from the instance's event copy
/// where the steps read nothing it lacks (design §17), else from the rows.
pub async fn report(
    db: &(impl ConnectionTrait + StreamTrait),
    viewer: &Viewer,
    ask: FunnelAsk,
    (now, copies): (i64, Option<Arc<VisitCopies>>),
) -> AppResult<FunnelReport> {
    let date_range = parse_date_range(Some(&ask.date_range))?;
    let Steps { site, goals: steps, name, window_days, removed } = steps_of(db, viewer, &ask).await?;
    let first = if date_range == DateRange::All { first_event(db, site.id).await? } else { None };
    let span = range::resolve(&date_range, sites::timezone(&site), now, first);
    let window = window_days.map_or(Window::Visit, |days| Window::Span(i64::from(days) * DAY_MS));
    let site_key = SiteKey { id: site.id, created_at: site.created_at };
    let copied = match steps.is_empty() {
        true => Some(Vec::new()),
        false => Reading::of(copies).step_events(db, site_key, span, &steps, now).await?,
    };
    let reached = match copied {
        Some(events) => {
            let mut walk = Walk::new(steps.len(), window);
            for (visitor, event) in events {
                walk.push(visitor, event);
            }
            walk.done()
        }
        None => reached_per_visitor(db, site.id, &steps, span, window).await?,
    };
    let figures = compute::figures(reached.iter().map(|(_, r)| r.steps), steps.len());
    let mut groups = Vec::new();
    if let Some(breakdown) = ask.breakdown {
        let values = group_values(db, breakdown, &reached).await?;
        let mut by_value: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (visitor, reached) in &reached {
            if let Some(value) = values.get(visitor) {
                by_value.entry(value.as_str()).or_default().push(reached.steps);
            }
        }
        groups = by_value
            .into_iter()
            .map(|(value, reached)| GroupFigures {
                value: value.to_owned(),
                figures: compute::figures(reached.into_iter(), steps.len()),
            })
            .collect();
        groups.sort_by(|a, b| b.figures[0].visitors.cmp(&a.figures[0].visitors).then_with(|| a.value.cmp(&b.value)));
        groups.truncate(MAX_GROUPS);
    }
    Ok(FunnelReport {
        site_id: site.id,
        name,
        steps: steps.into_iter().map(|goal| goal.name).collect(),
        window_days,
        from: span.from,
        to: span.to,
        figures,
        breakdown: ask.breakdown,
        groups,
        removed_steps: removed,
    })
}
