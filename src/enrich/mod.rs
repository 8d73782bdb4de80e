//! What the server derives about a hit: client (browser, OS, device, bot),
//! location, and where the visit came from.

pub mod account;
pub mod geo;
pub mod network;
pub mod source;
pub mod user_agent;
pub mod visit_source;

pub use geo::{Geo, GeoIp};
pub use user_agent::ClientInfo;
