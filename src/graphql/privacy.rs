//! Privacy requests: erase a visitor for good. (Access, the export of every
//! stored fact, is a streamed download at `GET /api/visitor/{id}/export`.)

use async_graphql::{Context, ID, Object, SimpleObject};

use super::context::ContextExt;
use crate::{error::AppResult, service::privacy};

/// What an erasure removed; the clicks stay as anonymous counts.
#[derive(SimpleObject)]
pub struct ErasedCounts {
    pub events: u64,
    pub sessions: u64,
    pub identities: u64,
    pub clicks: u64,
}

#[derive(SimpleObject)]
pub struct EraseResult {
    pub success: bool,
    pub erased: ErasedCounts,
}

#[derive(Default)]
pub struct PrivacyMutation;

#[Object]
impl PrivacyMutation {
    /// Removes a visitor with its events, sessions and identity history, and
    /// unties its clicks; every figure afterwards is as if it never came.
    /// Admins only.
    async fn erase_visitor(&self, ctx: &Context<'_>, site_id: i64, id: ID) -> AppResult<EraseResult> {
        let erased = privacy::erase_visitor(&*ctx.db().await?, ctx.viewer()?, site_id, &id).await?;
        Ok(EraseResult {
            success: true,
            erased: ErasedCounts {
                events: erased.events,
                sessions: erased.sessions,
                identities: erased.identities,
                clicks: erased.clicks,
            },
        })
    }
}
