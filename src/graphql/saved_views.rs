//! Saved views of the lead desk (design §19): shared in the site's org;
//! members save them, whoever saved one or an admin changes or deletes it.
//! The service checks.

use async_graphql::{Context, ID, InputObject, Object};

use entity::saved_view;

use super::{
    context::ContextExt,
    types::{Timestamp, parse_id},
};
use crate::{
    auth::{Role, Viewer},
    error::AppResult,
    service::saved_views,
    time::now_ms,
};

#[derive(InputObject)]
pub struct SavedViewInput {
    /// 1 to 60 characters.
    pub name: String,
    /// The `/leads` query string the view shows (`range`, `q`, `status`,
    /// `hot`, `bots`, `country`, `channel`, `campaign`, `link`, `visited`, `account`,
    /// `form`, `minScore`, `sort`, `order`), checked as the list checks
    /// them and kept in one canonical order. Omitted on update: unchanged.
    pub query: Option<String>,
}

pub struct SavedView {
    model: saved_view::Model,
    can_manage: bool,
}

impl SavedView {
    fn new(model: saved_view::Model, viewer: &Viewer, role: Role) -> Self {
        SavedView { can_manage: saved_views::may_manage(&model, viewer, role), model }
    }
}

#[Object]
impl SavedView {
    async fn id(&self) -> ID {
        ID(self.model.id.to_string())
    }
    async fn site_id(&self) -> i64 {
        self.model.site_id
    }
    async fn name(&self) -> &str {
        &self.model.name
    }
    /// The `/leads` query string that shows the view, canonical.
    async fn query(&self) -> &str {
        &self.model.query
    }
    /// Whether the viewer may rename or delete it.
    async fn can_manage(&self) -> bool {
        self.can_manage
    }
    async fn created_at(&self) -> Timestamp {
        Timestamp(self.model.created_at)
    }
    async fn updated_at(&self) -> Timestamp {
        Timestamp(self.model.updated_at)
    }
}

#[derive(Default)]
pub struct SavedViewQuery;

#[Object]
impl SavedViewQuery {
    /// The site's saved views of the lead desk, by name.
    async fn saved_views(&self, ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<SavedView>> {
        saved_views(ctx, site_id).await
    }
}

#[derive(Default)]
pub struct SavedViewMutation;

#[Object]
impl SavedViewMutation {
    /// Saves a view for everyone in the site's org. Members and up.
    async fn create_saved_view(&self, ctx: &Context<'_>, site_id: i64, input: SavedViewInput) -> AppResult<SavedView> {
        let viewer = ctx.viewer()?;
        let query = input.query.unwrap_or_default();
        let (view, role) =
            saved_views::create(&*ctx.db().await?, viewer, site_id, &input.name, &query, now_ms()).await?;
        Ok(SavedView::new(view, viewer, role))
    }

    /// Renames the view and, with `query`, replaces what it shows. Whoever
    /// saved it, or an admin.
    async fn update_saved_view(&self, ctx: &Context<'_>, id: ID, input: SavedViewInput) -> AppResult<SavedView> {
        let viewer = ctx.viewer()?;
        let id = parse_id(&id, "saved view")?;
        let (view, role) =
            saved_views::update(&*ctx.db().await?, viewer, id, &input.name, input.query.as_deref(), now_ms()).await?;
        Ok(SavedView::new(view, viewer, role))
    }

    /// Deletes the view. Whoever saved it, or an admin.
    async fn delete_saved_view(&self, ctx: &Context<'_>, id: ID) -> AppResult<bool> {
        saved_views::delete(&*ctx.db().await?, ctx.viewer()?, parse_id(&id, "saved view")?).await?;
        Ok(true)
    }
}

/// The read above as a function, which `workspace` also calls with its site
/// filled in.
pub(crate) async fn saved_views(ctx: &Context<'_>, site_id: i64) -> AppResult<Vec<SavedView>> {
    let viewer = ctx.viewer()?;
    let (views, role) = saved_views::list(&*ctx.db().await?, viewer, site_id).await?;
    Ok(views.into_iter().map(|view| SavedView::new(view, viewer, role)).collect())
}
