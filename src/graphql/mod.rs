//! The GraphQL schema. Resolvers authorize, convert and call `service`; they hold no SQL.

pub mod account;
pub mod accounts;
pub mod alerts;
pub mod analytics;
pub mod context;
pub mod conversions;
pub mod cost;
pub mod credit;
pub mod email;
pub mod errors;
pub mod executor;
pub mod explore;
pub mod explorer;
pub mod funnels;
pub mod gate;
pub mod goals;
pub mod handler;
pub mod http;
pub mod identify;
pub mod invitations;
pub mod limits;
pub mod link_analytics;
pub mod links;
pub mod live;
pub mod loaders;
pub mod nul;
pub mod orgs;
pub mod people;
pub mod privacy;
pub mod saved_views;
pub mod session;
pub mod sites;
pub mod socket;
pub mod types;
pub mod variables;
pub mod visitor;
pub mod visitor_list;
pub mod webhooks;
pub mod workspace;

use async_graphql::{MergedObject, Schema, SchemaBuilder};

use crate::state::AppState;

#[derive(MergedObject, Default)]
pub struct Query(
    account::AccountQuery,
    email::EmailQuery,
    orgs::OrgQuery,
    invitations::InvitationQuery,
    sites::SiteQuery,
    identify::IdentifyQuery,
    links::LinkQuery,
    analytics::AnalyticsQuery,
    explore::ExploreQuery,
    goals::GoalQuery,
    funnels::FunnelQuery,
    credit::CreditQuery,
    webhooks::WebhookQuery,
    alerts::AlertQuery,
    saved_views::SavedViewQuery,
    accounts::AccountsQuery,
    workspace::WorkspaceQuery,
);

#[derive(MergedObject, Default)]
pub struct Mutation(
    account::AccountMutation,
    email::EmailMutation,
    orgs::OrgMutation,
    invitations::InvitationMutation,
    sites::SiteMutation,
    identify::IdentifyMutation,
    links::LinkMutation,
    webhooks::WebhookMutation,
    privacy::PrivacyMutation,
    alerts::AlertMutation,
    saved_views::SavedViewMutation,
    goals::GoalMutation,
    funnels::FunnelMutation,
    conversions::ConversionMutation,
    accounts::AccountsMutation,
);

pub type Subscription = live::LiveSubscription;

pub type AppSchema = Schema<Query, Mutation, Subscription>;

pub use limits::{MAX_BATCH, MAX_COMPLEXITY, MAX_DEPTH, MAX_ROOT_FIELDS};

/// The depth and complexity limits are `limits::Limits`, not async-graphql's
/// own: those name no error code and cannot tell schema tooling from queries.
fn builder(introspection: bool) -> SchemaBuilder<Query, Mutation, Subscription> {
    Schema::build(Query::default(), Mutation::default(), Subscription::default())
        .extension(limits::Limits { introspection })
}

pub fn build_schema(state: AppState) -> AppSchema {
    let introspection = state.config.graphql_introspection;
    let builder = builder(introspection).data(state);
    if introspection { builder.finish() } else { builder.disable_introspection().finish() }
}

/// A schema without state, for introspection only (the OpenAPI document).
pub fn introspection_schema() -> AppSchema {
    builder(true).finish()
}

/// What introspection answers for `__schema { description }`: async-graphql
/// serves this text and its SDL export leaves it out, so it is added here and
/// `schema.graphql` prints as the served schema does.
const SCHEMA_DESCRIPTION: &str = "A GraphQL Schema defines the capabilities of a GraphQL server. It exposes all available types and directives on the server, as well as the entry points for query, mutation, and subscription operations.";

/// The SDL that `schema.graphql` holds.
pub fn sdl() -> String {
    let sdl = builder(true).finish().sdl();
    match sdl.rfind("schema {") {
        Some(at) => format!("{}\"\"\"\n{SCHEMA_DESCRIPTION}\n\"\"\"\n{}", &sdl[..at], &sdl[at..]),
        None => sdl,
    }
}
