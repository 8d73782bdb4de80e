//! The live stream: who is on the site in the last 24 hours, and what they did.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::{event, tracked_session, visitor};

use super::{ScoredVisitor, snapshot, stats};
use crate::{
    auth::{Role, Viewer},
    error::AppResult,
    service::access,
    time::HOUR_MS,
};

pub const WINDOW_MS: i64 = 24 * HOUR_MS;
/// Visitors listed, most recently seen first.
pub const MAX_VISITORS: u64 = 100;
/// Events listed in `activity`, newest first.
pub const MAX_ACTIVITY: u64 = 50;

/// A visitor in the stream, with their latest session.
pub struct LiveVisitor {
    pub visitor: ScoredVisitor,
    pub session: Option<tracked_session::Model>,
}

pub struct LiveActivity {
    pub event: event::Model,
    pub tracker_vid: String,
    pub identified_user_id: Option<String>,
}

pub struct LiveStats {
    pub unique_visitors: i64,
    pub sessions: i64,
    pub pageviews: i64,
    /// Mean length in seconds of the sessions active in the window, rounded.
    pub avg_duration: i64,
}

pub struct LiveStream {
    pub visitors: Vec<LiveVisitor>,
    pub activity: Vec<LiveActivity>,
    pub stats: LiveStats,
    pub countries: Vec<(Option<String>, i64)>,
    pub pages: Vec<(String, i64)>,
    pub generated_at: i64,
}

pub async fn stream(db: &DatabaseConnection, viewer: &Viewer, site_id: i64, now: i64) -> AppResult<LiveStream> {
    let view = snapshot(db).await?;
    let stream = stream_in(&view, viewer, site_id, now).await?;
    view.commit().await?;
    Ok(stream)
}

async fn stream_in(db: &impl ConnectionTrait, viewer: &Viewer, site_id: i64, now: i64) -> AppResult<LiveStream> {
    let (site, _) = access::site(db, viewer, site_id, Role::Viewer).await?;
    let start = now - WINDOW_MS;

    let visitors = visitor::Entity::find()
        .filter(visitor::Column::SiteId.eq(site.id))
        .filter(visitor::Column::IsBot.eq(false))
        .filter(visitor::Column::LastSeen.gte(start))
        .order_by_desc(visitor::Column::LastSeen)
        .order_by_desc(visitor::Column::Id)
        .limit(MAX_VISITORS)
        .all(db)
        .await?;
    let session_ids: Vec<i64> = visitors.iter().filter_map(|v| v.last_session_id).collect();
    let mut sessions: HashMap<i64, tracked_session::Model> = tracked_session::Entity::find()
        .filter(tracked_session::Column::Id.is_in(session_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|s| (s.id, s))
        .collect();
    let visitors = visitors
        .into_iter()
        .map(|v| {
            let session = v.last_session_id.and_then(|id| sessions.remove(&id));
            LiveVisitor { visitor: ScoredVisitor::new(v, site.hot_threshold, now), session }
        })
        .collect();

    let events = stats::window_events(site.id, Some(start))
        .order_by_desc(event::Column::Timestamp)
        .order_by_desc(event::Column::Id)
        .limit(MAX_ACTIVITY)
        .all(db)
        .await?;
    let mut owners: Vec<i64> = events.iter().map(|e| e.visitor_id).collect();
    owners.sort_unstable();
    owners.dedup();
    let owners: HashMap<i64, visitor::Model> = visitor::Entity::find()
        .filter(visitor::Column::Id.is_in(owners))
        .all(db)
        .await?
        .into_iter()
        .map(|v| (v.id, v))
        .collect();
    let activity = events
        .into_iter()
        .filter_map(|event| {
            let owner = owners.get(&event.visitor_id)?;
            Some(LiveActivity {
                tracker_vid: owner.tracker_vid.clone(),
                identified_user_id: owner.identified_user_id.clone(),
                event,
            })
        })
        .collect();

    let window = stats::summarize(db, &site, Some(start), now).await?;
    Ok(LiveStream {
        visitors,
        activity,
        stats: LiveStats {
            unique_visitors: window.overview.unique_visitors,
            sessions: window.overview.sessions,
            pageviews: window.overview.pageviews,
            avg_duration: window.avg_duration,
        },
        countries: window.countries,
        pages: window.top_pages,
        generated_at: now,
    })
}
