//! Where a visit came from, as a group: its channel, source, campaign or
//! the tracking link whose click began it. The funnel breakdown and the
//! attribution report group visits the same way, blanks named as Explore
//! names them.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, FromQueryResult, QueryFilter, QuerySelect, Select};

use entity::{link, tracked_session};

use super::IN_LIST_CHUNK;
use crate::error::AppResult;

/// What grouping needs of a visit: a few of its row's columns, not the
/// whole row (a funnel's breakdown reads the visit of every step).
#[derive(Debug, Clone, PartialEq, Eq, FromQueryResult)]
pub struct VisitOrigin {
    pub id: i64,
    pub visitor_id: i64,
    pub started_at: i64,
    pub channel: String,
    pub source: Option<String>,
    pub utm_campaign: Option<String>,
    pub link_id: Option<i64>,
}

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
    pub fn key(self, session: &VisitOrigin, slugs: &HashMap<i64, String>) -> String {
        self.shown(match self {
            VisitGroup::Channel => Some(session.channel.clone()),
            VisitGroup::Source => session.source.clone(),
            VisitGroup::Campaign => session.utm_campaign.clone(),
            VisitGroup::Link => session.link_id.and_then(|id| slugs.get(&id).cloned()),
        })
    }

    /// A group's value as shown, blanks named as Explore names them.
    pub fn shown(self, value: Option<String>) -> String {
        let blank = match self {
            VisitGroup::Channel => "Direct",
            VisitGroup::Source => "Direct / None",
            VisitGroup::Campaign => "(not set)",
            VisitGroup::Link => "(none)",
        };
        value.filter(|text| !text.is_empty()).unwrap_or_else(|| blank.to_owned())
    }
}

/// The slugs of these links (the ones that began some visits), by link id;
/// none are read unless the grouping is by link.
pub async fn link_slugs(
    db: &impl ConnectionTrait,
    group: VisitGroup,
    ids: impl IntoIterator<Item = i64>,
) -> AppResult<HashMap<i64, String>> {
    let mut slugs = HashMap::new();
    if group != VisitGroup::Link {
        return Ok(slugs);
    }
    let mut ids: Vec<i64> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    for chunk in ids.chunks(IN_LIST_CHUNK) {
        let found: Vec<(i64, String)> = link::Entity::find()
            .select_only()
            .columns([link::Column::Id, link::Column::Slug])
            .filter(link::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(db)
            .await?;
        slugs.extend(found);
    }
    Ok(slugs)
}

/// The visits' rows, only the columns `VisitOrigin` keeps.
fn origins() -> Select<tracked_session::Entity> {
    use tracked_session::Column as C;
    tracked_session::Entity::find().select_only().columns([
        C::Id,
        C::VisitorId,
        C::StartedAt,
        C::Channel,
        C::Source,
        C::UtmCampaign,
        C::LinkId,
    ])
}

/// Visits by id, read in chunks.
pub async fn origins_by_id(db: &impl ConnectionTrait, ids: &[i64]) -> AppResult<Vec<VisitOrigin>> {
    let mut sessions = Vec::new();
    for chunk in ids.chunks(IN_LIST_CHUNK) {
        let found = origins()
            .filter(tracked_session::Column::Id.is_in(chunk.iter().copied()))
            .into_model::<VisitOrigin>()
            .all(db)
            .await?;
        sessions.extend(found);
    }
    Ok(sessions)
}
