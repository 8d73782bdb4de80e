//! Where a visit came from, as a group: its channel, source, campaign or
//! the tracking link whose click began it. The funnel breakdown and the
//! attribution report group visits the same way, blanks named as Explore
//! names them.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use entity::{link, tracked_session};

use super::IN_LIST_CHUNK;
use crate::error::AppResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisitGroup {
    Channel,
    Source,
    Campaign,
    Link,
}

impl VisitGroup {
    pub fn parse(name: &str) -> Option<VisitGroup> {
        match name {
            "channel" => Some(VisitGroup::Channel),
            "source" => Some(VisitGroup::Source),
            "campaign" => Some(VisitGroup::Campaign),
            "link" => Some(VisitGroup::Link),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            VisitGroup::Channel => "channel",
            VisitGroup::Source => "source",
            VisitGroup::Campaign => "campaign",
            VisitGroup::Link => "link",
        }
    }

    /// The visit's group; `slugs` are the links' slugs by id (`link_slugs`).
    pub fn key(self, session: &tracked_session::Model, slugs: &HashMap<i64, String>) -> String {
        let or = |text: Option<String>, blank: &str| text.filter(|t| !t.is_empty()).unwrap_or_else(|| blank.to_owned());
        match self {
            VisitGroup::Channel => session.channel.clone(),
            VisitGroup::Source => or(session.source.clone(), "Direct / None"),
            VisitGroup::Campaign => or(session.utm_campaign.clone(), "(not set)"),
            VisitGroup::Link => or(session.link_id.and_then(|id| slugs.get(&id).cloned()), "(none)"),
        }
    }
}

/// The slugs of the links that began these visits, by link id; none are
/// read unless the grouping is by link.
pub async fn link_slugs(
    db: &impl ConnectionTrait,
    group: VisitGroup,
    sessions: &[tracked_session::Model],
) -> AppResult<HashMap<i64, String>> {
    let mut slugs = HashMap::new();
    if group != VisitGroup::Link {
        return Ok(slugs);
    }
    let ids: Vec<i64> = sessions.iter().filter_map(|session| session.link_id).collect();
    for chunk in ids.chunks(IN_LIST_CHUNK) {
        let found = link::Entity::find().filter(link::Column::Id.is_in(chunk.iter().copied())).all(db).await?;
        slugs.extend(found.into_iter().map(|link| (link.id, link.slug)));
    }
    Ok(slugs)
}

/// Visits by id, read in chunks.
pub async fn sessions_by_id(db: &impl ConnectionTrait, ids: &[i64]) -> AppResult<Vec<tracked_session::Model>> {
    let mut sessions = Vec::new();
    for chunk in ids.chunks(IN_LIST_CHUNK) {
        sessions.extend(
            tracked_session::Entity::find()
                .filter(tracked_session::Column::Id.is_in(chunk.iter().copied()))
                .all(db)
                .await?,
        );
    }
    Ok(sessions)
}
