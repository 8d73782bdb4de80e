//! Public hot paths: the collect endpoint, the tracker script and the
//! short-link redirect. They bypass GraphQL: validate, enrich, hand the write
//! to `service::tracking`'s writer, answer.

pub mod collect;
pub mod redirect;
pub mod script;
pub mod wire;
