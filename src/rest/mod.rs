//! The `/api` routes: each is a row of `routes::OPERATIONS`, a static GraphQL
//! document run through the bridge by the one generic handler.

mod auth;
pub mod bridge;
mod handler;
mod hooks;
pub mod openapi;
pub mod operation;
pub mod routes;

use axum::Router;

use crate::server::RouterState;

pub fn routes() -> Router<RouterState> {
    routes::OPERATIONS.iter().fold(Router::new(), |router, op| {
        let route = match &op.hook {
            Some(hook) => (hook.route)(op),
            None => handler::route(op),
        };
        router.route(op.path, route)
    })
}

/// Every `/api` route as (method, path pattern).
pub fn route_list() -> Vec<(&'static str, &'static str)> {
    routes::OPERATIONS.iter().map(|op| (op.method, op.path)).collect()
}
