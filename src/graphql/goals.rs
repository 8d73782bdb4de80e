//! Goals (design §20): read by anyone who can read the site, managed by
//! its org's admins. The service checks.

use async_graphql::{Context, ID, InputObject, Object};

use entity::goal;

use super::{
    context::ContextExt,
    types::{Timestamp, parse_id},
};
use crate::{
    error::AppResult,
    service::goals::{self, GoalInput as Typed},
    time::now_ms,
};

/// A goal: `pagePath`, or `eventName` with an optional `propName` and
/// `propValue`.
#[derive(InputObject)]
pub struct GoalInput {
    /// What Explore's `event:goal` shows; unique within the site, at most
    /// 120 characters. Empty: made from the rest ("Visit /pricing").
    pub name: Option<String>,
    /// A pageview goal: a path where `*` stands for any characters
    /// (`/pricing`, `/blog/*`).
    pub page_path: Option<String>,
    /// A custom event goal: the event's name.
    pub event_name: Option<String>,
    /// With `propValue`: only events whose property has this value count.
    pub prop_name: Option<String>,
    pub prop_value: Option<String>,
}

impl From<GoalInput> for Typed {
    fn from(input: GoalInput) -> Self {
        Typed {
            name: input.name,
            page_path: input.page_path,
            event_name: input.event_name,
            prop_name: input.prop_name,
            prop_value: input.prop_value,
        }
    }
}

pub struct Goal(pub goal::Model);

#[Object]
impl Goal {
    async fn id(&self) -> ID {
        ID(self.0.id.to_string())
    }
    async fn site_id(&self) -> i64 {
        self.0.site_id
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn page_path(&self) -> Option<&str> {
        self.0.page_path.as_deref()
    }
    async fn event_name(&self) -> Option<&str> {
        self.0.event_name.as_deref()
    }
    async fn prop_name(&self) -> Option<&str> {
        self.0.prop_name.as_deref()
    }
    async fn prop_value(&self) -> Option<&str> {
        self.0.prop_value.as_deref()
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.0.created_at)
    }
    async fn updated_at(&self) -> Timestamp {
        Timestamp(self.0.updated_at)
    }
}

#[derive(Default)]
pub struct GoalQuery;

#[Object]
impl GoalQuery {
    /// The site's goals, by name.
    async fn goals(&self, ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<Goal>> {
        goals(ctx, site_id).await
    }
}

#[derive(Default)]
pub struct GoalMutation;

#[Object]
impl GoalMutation {
    /// Adds a goal to the site. Admins.
    async fn create_goal(&self, ctx: &Context<'_>, site_id: i64, input: GoalInput) -> AppResult<Goal> {
        let created = goals::create(&*ctx.db().await?, ctx.viewer()?, site_id, &input.into(), now_ms()).await?;
        Ok(Goal(created))
    }

    /// Replaces what the goal is. Admins.
    async fn update_goal(&self, ctx: &Context<'_>, id: ID, input: GoalInput) -> AppResult<Goal> {
        let id = parse_id(&id, "goal")?;
        Ok(Goal(goals::update(&*ctx.db().await?, ctx.viewer()?, id, &input.into(), now_ms()).await?))
    }

    /// Deletes the goal; the events that reached it stay. Admins.
    async fn delete_goal(&self, ctx: &Context<'_>, id: ID) -> AppResult<bool> {
        goals::delete(&*ctx.db().await?, ctx.viewer()?, parse_id(&id, "goal")?).await?;
        Ok(true)
    }
}

/// The read above as a function, which `workspace` also calls with its site
/// filled in.
pub(crate) async fn goals(ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<Goal>> {
    let found = goals::list(&*ctx.db().await?, ctx.viewer()?, site_id).await?;
    Ok(found.into_iter().map(Goal).collect())
}
