//! Per-request DataLoaders for the lists nested under visitors and sessions.
//! Each key type is one batched query, however many parents ask, so a
//! profile costs the same number of statements with 1 session or 50.

use std::{collections::HashMap, sync::Arc};

use async_graphql::{Context, dataloader::DataLoader, dataloader::Loader};

use entity::{conversion, event, identity, link_click, tracked_session};

use super::gate::Gate;
use crate::{
    error::{AppError, AppResult},
    service::{analytics::profile, conversions, people},
};

/// Loads the nested lists of visitors and sessions, in the operation's turn.
pub struct ActivityLoader {
    gate: Gate,
}

/// A fresh loader set for one request: its cache must not outlive the request.
pub fn per_request(gate: Gate) -> Loaders {
    Arc::new(DataLoader::new(ActivityLoader { gate }, tokio::spawn))
}

/// Shared by the operations of one batched request.
pub type Loaders = Arc<DataLoader<ActivityLoader>>;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionsOfVisitor(pub i64);
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventsOfSession(pub i64);
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdentitiesOfVisitor(pub i64);
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClicksOfVisitor(pub i64);
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConversionsOfVisitor(pub i64);
/// The (minor units, currency) of the revenue a visitor's events carry.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RevenueEventsOfVisitor(pub i64);

/// A visitor of a site, by its tracker id, for `person`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PersonOnSite {
    pub site_id: i64,
    pub tracker_vid: String,
}

type Loaded<K, V> = Result<HashMap<K, Arc<Vec<V>>>, Arc<AppError>>;

/// Wraps each group and re-keys it; ids without rows get no entry.
fn keyed<K: std::hash::Hash + Eq, V>(found: AppResult<HashMap<i64, Vec<V>>>, key: impl Fn(i64) -> K) -> Loaded<K, V> {
    Ok(found.map_err(Arc::new)?.into_iter().map(|(id, rows)| (key(id), Arc::new(rows))).collect())
}

impl Loader<SessionsOfVisitor> for ActivityLoader {
    type Value = Arc<Vec<tracked_session::Model>>;
    type Error = Arc<AppError>;

    async fn load(&self, keys: &[SessionsOfVisitor]) -> Loaded<SessionsOfVisitor, tracked_session::Model> {
        let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let found = match self.gate.lease().await {
            Ok(db) => profile::sessions_of_visitors(&*db, &ids).await,
            Err(err) => Err(err),
        };
        keyed(found, SessionsOfVisitor)
    }
}

impl Loader<EventsOfSession> for ActivityLoader {
    type Value = Arc<Vec<event::Model>>;
    type Error = Arc<AppError>;

    async fn load(&self, keys: &[EventsOfSession]) -> Loaded<EventsOfSession, event::Model> {
        let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let found = match self.gate.lease().await {
            Ok(db) => profile::events_of_sessions(&*db, &ids).await,
            Err(err) => Err(err),
        };
        keyed(found, EventsOfSession)
    }
}

impl Loader<IdentitiesOfVisitor> for ActivityLoader {
    type Value = Arc<Vec<identity::Model>>;
    type Error = Arc<AppError>;

    async fn load(&self, keys: &[IdentitiesOfVisitor]) -> Loaded<IdentitiesOfVisitor, identity::Model> {
        let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let found = match self.gate.lease().await {
            Ok(db) => profile::identities_of_visitors(&*db, &ids).await,
            Err(err) => Err(err),
        };
        keyed(found, IdentitiesOfVisitor)
    }
}

impl Loader<ClicksOfVisitor> for ActivityLoader {
    type Value = Arc<Vec<link_click::Model>>;
    type Error = Arc<AppError>;

    async fn load(&self, keys: &[ClicksOfVisitor]) -> Loaded<ClicksOfVisitor, link_click::Model> {
        let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let found = match self.gate.lease().await {
            Ok(db) => profile::clicks_of_visitors(&*db, &ids).await,
            Err(err) => Err(err),
        };
        keyed(found, ClicksOfVisitor)
    }
}

impl Loader<ConversionsOfVisitor> for ActivityLoader {
    type Value = Arc<Vec<conversion::Model>>;
    type Error = Arc<AppError>;

    async fn load(&self, keys: &[ConversionsOfVisitor]) -> Loaded<ConversionsOfVisitor, conversion::Model> {
        let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let found = match self.gate.lease().await {
            Ok(db) => conversions::of_visitors(&*db, &ids).await,
            Err(err) => Err(err),
        };
        keyed(found, ConversionsOfVisitor)
    }
}

impl Loader<RevenueEventsOfVisitor> for ActivityLoader {
    type Value = Arc<Vec<(i64, String)>>;
    type Error = Arc<AppError>;

    async fn load(&self, keys: &[RevenueEventsOfVisitor]) -> Loaded<RevenueEventsOfVisitor, (i64, String)> {
        let ids: Vec<i64> = keys.iter().map(|k| k.0).collect();
        let found = match self.gate.lease().await {
            Ok(db) => conversions::event_revenue_of_visitors(&*db, &ids).await,
            Err(err) => Err(err),
        };
        keyed(found, RevenueEventsOfVisitor)
    }
}

impl Loader<PersonOnSite> for ActivityLoader {
    type Value = people::Person;
    type Error = Arc<AppError>;

    async fn load(&self, keys: &[PersonOnSite]) -> Result<HashMap<PersonOnSite, people::Person>, Arc<AppError>> {
        let mut by_site: HashMap<i64, Vec<String>> = HashMap::new();
        for key in keys {
            by_site.entry(key.site_id).or_default().push(key.tracker_vid.clone());
        }
        let db = self.gate.lease().await.map_err(Arc::new)?;
        let mut found = HashMap::new();
        for (site_id, tracker_vids) in by_site {
            for (tracker_vid, person) in people::on_site(&*db, site_id, &tracker_vids).await.map_err(Arc::new)? {
                found.insert(PersonOnSite { site_id, tracker_vid }, person);
            }
        }
        Ok(found)
    }
}

/// The person behind a visitor, or none when no such visitor is left.
pub async fn load_person(ctx: &Context<'_>, key: PersonOnSite) -> AppResult<Option<people::Person>> {
    let loader = ctx.data_opt::<Loaders>().ok_or_else(|| AppError::internal("request has no loaders"))?;
    loader.load_one(key).await.map_err(|err| (*err).clone())
}

/// The rows a loader finds for one key; none is an empty list.
pub async fn load<K, V>(ctx: &Context<'_>, key: K) -> AppResult<Arc<Vec<V>>>
where
    K: Send + Sync + std::hash::Hash + Eq + Clone + 'static,
    ActivityLoader: Loader<K, Value = Arc<Vec<V>>, Error = Arc<AppError>>,
    V: Send + Sync + 'static,
{
    let loader = ctx.data_opt::<Loaders>().ok_or_else(|| AppError::internal("request has no loaders"))?;
    Ok(loader.load_one(key).await.map_err(|err| (*err).clone())?.unwrap_or_default())
}

/// The rows for many keys in one batch; keys without rows are absent.
pub async fn load_many<K, V>(ctx: &Context<'_>, keys: impl Iterator<Item = K>) -> AppResult<HashMap<K, Arc<Vec<V>>>>
where
    K: Send + Sync + std::hash::Hash + Eq + Clone + 'static,
    ActivityLoader: Loader<K, Value = Arc<Vec<V>>, Error = Arc<AppError>>,
    V: Send + Sync + 'static,
{
    let loader = ctx.data_opt::<Loaders>().ok_or_else(|| AppError::internal("request has no loaders"))?;
    loader.load_many(keys).await.map_err(|err| (*err).clone())
}
