//! Funnels (design §20): 2 to 8 goal steps done in order, within one visit
//! or within N days for a visitor. A funnel is kept per site (members save
//! them, everyone in the org reads them) or asked for on the spot with goal
//! names; `report` answers visitors, conversion and drop-off per step, and
//! optionally per channel, source, campaign, tracking link or account.

pub mod compute;
mod report;

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, PaginatorTrait,
    QueryFilter, QueryOrder,
};

use entity::{funnel, goal, site};

use super::{access, goals};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult, ErrorCode},
};

pub use report::{Breakdown, FunnelAsk, FunnelReport, GroupFigures, StepsAsked, report};

pub const MIN_STEPS: usize = 2;
pub const MAX_STEPS: usize = 8;
pub const MAX_WINDOW_DAYS: i32 = 90;
pub const MAX_FUNNELS: u64 = 50;
pub const MAX_NAME_CHARS: usize = 120;

/// A funnel as typed.
#[derive(Debug, Clone, Default)]
pub struct FunnelInput {
    pub name: String,
    /// Goal ids, in order.
    pub steps: Vec<i64>,
    /// None: within one visit.
    pub window_days: Option<i32>,
}

/// A stored funnel with its steps' goals, in order.
pub struct Funnel {
    pub model: funnel::Model,
    pub steps: Vec<goal::Model>,
    /// Steps left out because their goal was deleted since the funnel was saved.
    pub removed_steps: usize,
}

fn checked_name(raw: &str) -> AppResult<String> {
    super::checked_name(raw, MAX_NAME_CHARS)
}

/// A window in days, checked.
pub fn checked_window(days: Option<i32>) -> AppResult<Option<i32>> {
    match days {
        Some(days) if !(1..=MAX_WINDOW_DAYS).contains(&days) => Err(AppError::validation(
            "windowDays",
            format!("must be 1 to {MAX_WINDOW_DAYS} days, or none for one visit"),
        )),
        other => Ok(other),
    }
}

/// How many steps, checked.
pub fn checked_count(count: usize) -> AppResult<()> {
    if (MIN_STEPS..=MAX_STEPS).contains(&count) {
        Ok(())
    } else {
        Err(AppError::validation("steps", format!("a funnel has {MIN_STEPS} to {MAX_STEPS} steps")))
    }
}

/// The goals the ids name, in order; each must be a goal of the site.
fn step_goals(ids: &[i64], site_goals: &[goal::Model]) -> AppResult<Vec<goal::Model>> {
    checked_count(ids.len())?;
    ids.iter()
        .enumerate()
        .map(|(at, id)| {
            site_goals
                .iter()
                .find(|goal| goal.id == *id)
                .cloned()
                .ok_or_else(|| AppError::validation(&format!("steps[{at}]"), "is not a goal of this site"))
        })
        .collect()
}

/// A stored funnel's steps; a step whose goal was deleted since is left out.
fn resolved(model: funnel::Model, site_goals: &[goal::Model]) -> Funnel {
    let ids: Vec<i64> = serde_json::from_str(&model.steps).unwrap_or_default();
    let steps: Vec<goal::Model> =
        ids.iter().filter_map(|id| site_goals.iter().find(|goal| goal.id == *id).cloned()).collect();
    let removed_steps = ids.len() - steps.len();
    Funnel { model, steps, removed_steps }
}

/// The site's funnels, by name. Anyone who can read the site.
pub async fn list(db: &impl ConnectionTrait, viewer: &Viewer, site_id: i64) -> AppResult<Vec<Funnel>> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let site_goals = goals::of_site(db, site.id).await?;
    let found = funnel::Entity::find()
        .filter(funnel::Column::SiteId.eq(site.id))
        .order_by_asc(funnel::Column::Name)
        .order_by_asc(funnel::Column::Id)
        .all(db)
        .await?;
    Ok(found.into_iter().map(|model| resolved(model, &site_goals)).collect())
}

/// A funnel of a site the viewer holds `role` in, with its site; another
/// org's is not found.
async fn find(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    id: i64,
    role: Role,
) -> AppResult<(funnel::Model, site::Model)> {
    let found = funnel::Entity::find_by_id(id).one(db).await?.ok_or_else(|| AppError::not_found("funnel"))?;
    match access::site(db, viewer, found.site_id, role).await {
        Err(err) if err.code == ErrorCode::NotFound => Err(AppError::not_found("funnel")),
        Err(err) => Err(err),
        Ok((site, _)) => Ok((found, site)),
    }
}

/// A funnel the viewer can read, with its steps and its site.
pub async fn get(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<(Funnel, site::Model)> {
    let (found, site) = find(db, viewer, id, Role::Viewer).await?;
    let site_goals = goals::of_site(db, site.id).await?;
    Ok((resolved(found, &site_goals), site))
}

/// Saves a funnel for the site's org. Members and up.
pub async fn create(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    input: &FunnelInput,
    now: i64,
) -> AppResult<Funnel> {
    let (site, _) = access::site(db, viewer, site_id, Role::Member).await?;
    let name = checked_name(&input.name)?;
    let window = checked_window(input.window_days)?;
    let site_goals = goals::of_site(db, site.id).await?;
    let steps = step_goals(&input.steps, &site_goals)?;
    if funnel::Entity::find().filter(funnel::Column::SiteId.eq(site.id)).count(db).await? >= MAX_FUNNELS {
        return Err(AppError::validation("siteId", format!("a site has at most {MAX_FUNNELS} funnels")));
    }
    let model = funnel::ActiveModel {
        site_id: Set(site.id),
        name: Set(name),
        steps: Set(serde_json::json!(input.steps).to_string()),
        window_days: Set(window),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(Funnel { model, steps, removed_steps: 0 })
}

/// Replaces the funnel's name, steps and window. Members and up.
pub async fn update(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    id: i64,
    input: &FunnelInput,
    now: i64,
) -> AppResult<Funnel> {
    let (found, _) = find(db, viewer, id, Role::Member).await?;
    let name = checked_name(&input.name)?;
    let window = checked_window(input.window_days)?;
    let site_goals = goals::of_site(db, found.site_id).await?;
    let steps = step_goals(&input.steps, &site_goals)?;
    let mut active = found.into_active_model();
    active.name = Set(name);
    active.steps = Set(serde_json::json!(input.steps).to_string());
    active.window_days = Set(window);
    active.updated_at = Set(now);
    Ok(Funnel { model: active.update(db).await?, steps, removed_steps: 0 })
}

pub async fn delete(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<()> {
    let (found, _) = find(db, viewer, id, Role::Member).await?;
    funnel::Entity::delete_by_id(found.id).exec(db).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(id: i64) -> goal::Model {
        goal::Model {
            id,
            site_id: 1,
            name: format!("Goal {id}"),
            page_path: Some("/".to_owned()),
            event_name: None,
            prop_name: None,
            prop_value: None,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn steps_are_two_to_eight_goals_of_the_site() {
        let site_goals = [goal(1), goal(2), goal(3)];
        // (goal ids, the ids kept or the field refused)
        type Case = (Vec<i64>, Result<Vec<i64>, &'static str>);
        let table: [Case; 6] = [
            (vec![1, 2], Ok(vec![1, 2])),
            (vec![3, 1, 3], Ok(vec![3, 1, 3])),
            (vec![1], Err("steps")),
            (vec![1; 9], Err("steps")),
            (vec![1, 7], Err("steps[1]")),
            (vec![], Err("steps")),
        ];
        for (ids, expected) in table {
            match (step_goals(&ids, &site_goals), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got.iter().map(|g| g.id).collect::<Vec<_>>(), want),
                (Err(err), Err(field)) => assert_eq!(err.field.as_deref(), Some(field), "{ids:?}"),
                (got, want) => panic!("{ids:?}: {:?} but expected {want:?}", got.map(|g| g.len())),
            }
        }
        assert_eq!(checked_window(Some(0)).unwrap_err().field.as_deref(), Some("windowDays"));
        assert_eq!(checked_window(Some(91)).unwrap_err().field.as_deref(), Some("windowDays"));
        assert_eq!(checked_window(Some(30)).unwrap(), Some(30));
        assert_eq!(checked_name(" ").unwrap_err().field.as_deref(), Some("name"));
    }
}
