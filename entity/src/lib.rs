//! SeaORM entities, one module per table. Timestamps are UTC epoch milliseconds.

pub mod account;
pub mod account_setting;
pub mod alert_delivery;
pub mod alert_destination;
pub mod api_key;
pub mod auth_session;
pub mod conversion;
pub mod daily_salt;
pub mod event;
pub mod goal;
pub mod identity;
pub mod invitation;
pub mod link;
pub mod link_click;
pub mod link_click_day;
pub mod member;
pub mod org;
pub mod page_hour;
pub mod saved_view;
pub mod session_hour;
pub mod site;
pub mod tracked_session;
pub mod user;
pub mod visitor;
pub mod visitor_hour;
pub mod webhook_delivery;
