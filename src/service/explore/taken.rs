//! What one snapshot has taken, shared by the queries read on it (the
//! explorer page's, or one query's periods): the site's goals, the
//! stretches of its spans, and the visit copy with its tail and cut visits.

use std::sync::Arc;

use sea_orm::ConnectionTrait;
use tokio::sync::OnceCell;

use super::{
    visit_copy::{Reading, VisitCopies},
    visits::Stretches,
};
use crate::{
    error::{AppError, AppResult},
    service::goals::{self, Goal},
};

#[derive(Default)]
pub struct Taken {
    pub stretches: Stretches,
    pub visits: Reading,
    /// The goals of the site first asked for, with its id: every query of
    /// the explorer page reads them, and they cannot change on a snapshot.
    goals: OnceCell<(i64, Vec<Goal>)>,
}

impl Taken {
    /// A snapshot's; with `copies`, whole-visit queries read the instance's copies.
    pub fn of(copies: Option<Arc<VisitCopies>>) -> Taken {
        Taken { visits: Reading::of(copies), ..Taken::default() }
    }

    /// The rules of the site's goals, read on the snapshot's first ask.
    pub async fn goals(&self, db: &impl ConnectionTrait, site_id: i64) -> AppResult<&[Goal]> {
        let read = || async { AppResult::Ok((site_id, goals::rules(db, site_id).await?)) };
        let (of, goals) = self.goals.get_or_try_init(read).await?;
        // A snapshot serves one site; another's goals are never these.
        if *of != site_id {
            return Err(AppError::internal("a snapshot's goals were asked for two sites"));
        }
        Ok(goals)
    }
}
