//! Goals (design §20): what a site counts as a conversion. A pageview goal
//! is reached by a pageview whose path matches a pattern with `*`; a custom
//! event goal by a custom event of a name, optionally with one property's
//! value. Admins manage them; Explore reads them for `event:goal` and
//! `conversion_rate`. A goal's name is what `event:goal` shows, so names are
//! unique within a site (ignoring case, as Explore's goal filters do).

use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, PaginatorTrait,
    QueryFilter, QueryOrder,
};

use entity::goal;

use super::{access, is_unique_violation, path_pattern::PathPattern};
use crate::{
    auth::{Role, Viewer},
    error::{AppError, AppResult, ErrorCode},
};

/// Goals per site at most.
pub const MAX_GOALS: u64 = 100;
pub const MAX_NAME_CHARS: usize = 120;
/// The longest path pattern, event name, property name or value.
pub const MAX_PART_CHARS: usize = 500;

/// A goal as typed: `page_path`, or `event_name` with an optional
/// `prop_name` and `prop_value`. An empty `name` is made from the rest.
#[derive(Debug, Clone, Default)]
pub struct GoalInput {
    pub name: Option<String>,
    pub page_path: Option<String>,
    pub event_name: Option<String>,
    pub prop_name: Option<String>,
    pub prop_value: Option<String>,
}

/// What reaches a goal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A pageview whose path matches.
    Page(PathPattern),
    /// A custom event of this name, with `prop` = value when given.
    Event { name: String, prop: Option<(String, String)> },
}

/// A goal as Explore reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Goal {
    pub name: String,
    pub target: Target,
}

impl Goal {
    /// A stored goal's rule. Stored goals were checked when written; one
    /// without a target (impossible through the service) reaches nothing.
    pub fn of(model: &goal::Model) -> Option<Goal> {
        let target = match (&model.page_path, &model.event_name) {
            (Some(path), _) => Target::Page(PathPattern::parse("pagePath", path.clone()).ok()?),
            (None, Some(name)) => {
                Target::Event { name: name.clone(), prop: model.prop_name.clone().zip(model.prop_value.clone()) }
            }
            (None, None) => return None,
        };
        Some(Goal { name: model.name.clone(), target })
    }
}

/// A text part of the input: trimmed, `None` when empty, refused as `field`
/// when too long or holding control characters.
fn part(field: &str, raw: Option<&str>) -> AppResult<Option<String>> {
    let Some(text) = raw.map(str::trim).filter(|text| !text.is_empty()) else { return Ok(None) };
    if text.chars().count() > MAX_PART_CHARS || text.chars().any(char::is_control) {
        return Err(AppError::validation(
            field,
            format!("must be at most {MAX_PART_CHARS} characters, without control characters"),
        ));
    }
    Ok(Some(text.to_owned()))
}

/// The stored columns of a goal, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub name: String,
    pub page_path: Option<String>,
    pub event_name: Option<String>,
    pub prop_name: Option<String>,
    pub prop_value: Option<String>,
}

/// Checks a goal as typed: exactly one of a page path and an event name; a
/// property only on an event goal, its name and value together.
pub fn check(input: &GoalInput) -> AppResult<Checked> {
    let page_path = part("pagePath", input.page_path.as_deref())?;
    let event_name = part("eventName", input.event_name.as_deref())?;
    let prop_name = part("propName", input.prop_name.as_deref())?;
    let prop_value = part("propValue", input.prop_value.as_deref())?;
    match (&page_path, &event_name) {
        (Some(_), Some(_)) => {
            return Err(AppError::validation("eventName", "a goal is a page path or an event name, not both"));
        }
        (None, None) => return Err(AppError::validation("pagePath", "give a page path or an event name")),
        (Some(path), None) => {
            PathPattern::parse("pagePath", path.clone())?;
            if prop_name.is_some() || prop_value.is_some() {
                return Err(AppError::validation("propName", "only a custom event goal has a property"));
            }
        }
        (None, Some(name)) if name == "pageview" => {
            return Err(AppError::validation("eventName", "pageviews are goals by page path"));
        }
        (None, Some(_)) => match (&prop_name, &prop_value) {
            (Some(_), None) => return Err(AppError::validation("propValue", "give the property's value")),
            (None, Some(_)) => return Err(AppError::validation("propName", "give the property's name")),
            _ => {}
        },
    }
    let made = match (&page_path, &event_name, &prop_name, &prop_value) {
        (Some(path), ..) => format!("Visit {path}"),
        (None, Some(name), Some(key), Some(value)) => format!("{name} ({key}: {value})"),
        (None, Some(name), ..) => name.clone(),
        _ => String::new(),
    };
    let name = match input.name.as_deref().map(str::trim).filter(|name| !name.is_empty()) {
        Some(name) => name.to_owned(),
        None => made.chars().take(MAX_NAME_CHARS).collect(),
    };
    if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(AppError::validation(
            "name",
            format!("must be at most {MAX_NAME_CHARS} characters, without control characters"),
        ));
    }
    Ok(Checked { name, page_path, event_name, prop_name, prop_value })
}

/// The site's goals, by name. Anyone who can read the site.
pub async fn list(db: &impl ConnectionTrait, viewer: &Viewer, site_id: i64) -> AppResult<Vec<goal::Model>> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    of_site(db, site.id).await
}

/// The goals of a site the caller has already been given.
pub async fn of_site(db: &impl ConnectionTrait, site_id: i64) -> AppResult<Vec<goal::Model>> {
    Ok(goal::Entity::find()
        .filter(goal::Column::SiteId.eq(site_id))
        .order_by_asc(goal::Column::Name)
        .order_by_asc(goal::Column::Id)
        .all(db)
        .await?)
}

/// The rules of a site's goals, for Explore.
pub async fn rules(db: &impl ConnectionTrait, site_id: i64) -> AppResult<Vec<Goal>> {
    Ok(of_site(db, site_id).await?.iter().filter_map(Goal::of).collect())
}

/// A goal of a site the viewer administers; another org's is not found.
async fn find_managed(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<goal::Model> {
    let found = goal::Entity::find_by_id(id).one(db).await?.ok_or_else(|| AppError::not_found("goal"))?;
    match access::site(db, viewer, found.site_id, Role::Admin).await {
        Err(err) if err.code == ErrorCode::NotFound => Err(AppError::not_found("goal")),
        Err(err) => Err(err),
        Ok(_) => Ok(found),
    }
}

/// Refuses a name another goal of the site has (ignoring case).
async fn name_is_free(db: &impl ConnectionTrait, site_id: i64, name: &str, except: Option<i64>) -> AppResult<()> {
    let taken = of_site(db, site_id)
        .await?
        .into_iter()
        .any(|other| Some(other.id) != except && other.name.to_lowercase() == name.to_lowercase());
    if taken { Err(name_taken(name)) } else { Ok(()) }
}

fn name_taken(name: &str) -> AppError {
    AppError::validation("name", format!("another goal of this site is named {name}"))
}

fn stored(err: sea_orm::DbErr, name: &str) -> AppError {
    if is_unique_violation(&err) { name_taken(name) } else { err.into() }
}

pub async fn create(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    site_id: i64,
    input: &GoalInput,
    now: i64,
) -> AppResult<goal::Model> {
    let (site, _) = access::site(db, viewer, site_id, Role::Admin).await?;
    let checked = check(input)?;
    let count = goal::Entity::find().filter(goal::Column::SiteId.eq(site.id)).count(db).await?;
    if count >= MAX_GOALS {
        return Err(AppError::validation("siteId", format!("a site has at most {MAX_GOALS} goals")));
    }
    name_is_free(db, site.id, &checked.name, None).await?;
    goal::ActiveModel {
        site_id: Set(site.id),
        name: Set(checked.name.clone()),
        page_path: Set(checked.page_path),
        event_name: Set(checked.event_name),
        prop_name: Set(checked.prop_name),
        prop_value: Set(checked.prop_value),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(|err| stored(err, &checked.name))
}

/// Replaces what the goal is (all of it, as `create` takes it).
pub async fn update(
    db: &impl ConnectionTrait,
    viewer: &Viewer,
    id: i64,
    input: &GoalInput,
    now: i64,
) -> AppResult<goal::Model> {
    let found = find_managed(db, viewer, id).await?;
    let checked = check(input)?;
    name_is_free(db, found.site_id, &checked.name, Some(found.id)).await?;
    let mut active = found.into_active_model();
    active.name = Set(checked.name.clone());
    active.page_path = Set(checked.page_path);
    active.event_name = Set(checked.event_name);
    active.prop_name = Set(checked.prop_name);
    active.prop_value = Set(checked.prop_value);
    active.updated_at = Set(now);
    active.update(db).await.map_err(|err| stored(err, &checked.name))
}

pub async fn delete(db: &impl ConnectionTrait, viewer: &Viewer, id: i64) -> AppResult<()> {
    let found = find_managed(db, viewer, id).await?;
    goal::Entity::delete_by_id(found.id).exec(db).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(name: &str, page: &str, event: &str, key: &str, value: &str) -> GoalInput {
        let some = |text: &str| (!text.is_empty()).then(|| text.to_owned());
        GoalInput {
            name: some(name),
            page_path: some(page),
            event_name: some(event),
            prop_name: some(key),
            prop_value: some(value),
        }
    }

    #[test]
    fn goals_are_a_page_or_an_event_and_named() {
        // (name, page, event, prop name, prop value) -> the name kept, or the field refused
        let table: [(GoalInput, Result<&str, &str>); 12] = [
            (typed("", "/pricing", "", "", ""), Ok("Visit /pricing")),
            (typed(" Pricing ", "/pricing*", "", "", ""), Ok("Pricing")),
            (typed("", "", "Signup", "", ""), Ok("Signup")),
            (typed("", "", "Signup", "plan", "pro"), Ok("Signup (plan: pro)")),
            (typed("", "*/thanks", "", "", ""), Ok("Visit */thanks")),
            (typed("", "pricing", "", "", ""), Err("pagePath")),
            (typed("", "", "", "", ""), Err("pagePath")),
            (typed("", "/a", "Signup", "", ""), Err("eventName")),
            (typed("", "/a", "", "plan", "pro"), Err("propName")),
            (typed("", "", "Signup", "plan", ""), Err("propValue")),
            (typed("", "", "Signup", "", "pro"), Err("propName")),
            (typed("", "", "pageview", "", ""), Err("eventName")),
        ];
        for (input, expected) in table {
            match (check(&input), expected) {
                (Ok(got), Ok(name)) => assert_eq!(got.name, name, "{input:?}"),
                (Err(err), Err(field)) => assert_eq!(err.field.as_deref(), Some(field), "{input:?}"),
                (got, want) => panic!("{input:?}: {:?} but expected {want:?}", got.map_err(|e| e.message)),
            }
        }
    }

    #[test]
    fn long_or_control_text_is_refused_beside_its_field() {
        let long = "x".repeat(MAX_PART_CHARS + 1);
        assert_eq!(check(&typed("", "", &long, "", "")).unwrap_err().field.as_deref(), Some("eventName"));
        assert_eq!(check(&typed("a\tb", "/a", "", "", "")).unwrap_err().field.as_deref(), Some("name"));
        let long_name = "n".repeat(MAX_NAME_CHARS + 1);
        assert_eq!(check(&typed(&long_name, "/a", "", "", "")).unwrap_err().field.as_deref(), Some("name"));
        // A made name is cut to fit rather than refused.
        let made = check(&typed("", &format!("/{}", "p".repeat(300)), "", "", "")).unwrap();
        assert_eq!(made.name.chars().count(), MAX_NAME_CHARS);
    }
}
