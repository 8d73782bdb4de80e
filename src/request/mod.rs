//! What every HTTP face needs of a request before its handler runs: the
//! caller, resolved from a cookie or bearer key (`middleware`, `credential`),
//! the client's address (`client_ip`), the cross-site check, and extractors
//! whose refusals are the JSON error body (`extract`).

pub mod client_ip;
pub mod credential;
pub mod extract;
pub mod middleware;
