//! The GraphQL schema. Resolvers authorize, convert and call `service`; they hold no SQL.

pub mod account;
pub mod analytics;
pub mod context;
pub mod explorer;
pub mod handler;
pub mod identify;
pub mod link_analytics;
pub mod links;
pub mod live;
pub mod loaders;
pub mod orgs;
pub mod session;
pub mod sites;
pub mod types;
pub mod visitor;
pub mod webhooks;

use async_graphql::{MergedObject, Schema, SchemaBuilder};

use crate::state::AppState;

#[derive(MergedObject, Default)]
pub struct Query(
    account::AccountQuery,
    orgs::OrgQuery,
    sites::SiteQuery,
    identify::IdentifyQuery,
    links::LinkQuery,
    analytics::AnalyticsQuery,
    webhooks::WebhookQuery,
);

#[derive(MergedObject, Default)]
pub struct Mutation(
    account::AccountMutation,
    orgs::OrgMutation,
    sites::SiteMutation,
    identify::IdentifyMutation,
    links::LinkMutation,
    webhooks::WebhookMutation,
);

pub type Subscription = live::LiveSubscription;

pub type AppSchema = Schema<Query, Mutation, Subscription>;

/// Deep enough for every nested query we document, shallow enough to stop abuse.
pub const MAX_DEPTH: usize = 12;
pub const MAX_COMPLEXITY: usize = 2_000;
/// Operations in one batched request.
pub const MAX_BATCH: usize = 10;

fn builder() -> SchemaBuilder<Query, Mutation, Subscription> {
    Schema::build(Query::default(), Mutation::default(), Subscription::default())
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
}

pub fn build_schema(state: AppState) -> AppSchema {
    let introspection = state.config.graphql_introspection;
    let builder = builder().data(state);
    if introspection { builder.finish() } else { builder.disable_introspection().finish() }
}

/// A schema without state, for introspection only (the OpenAPI document).
pub fn introspection_schema() -> AppSchema {
    builder().finish()
}

/// The SDL that `schema.graphql` holds.
pub fn sdl() -> String {
    builder().finish().sdl()
}
