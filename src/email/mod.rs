//! Sending email (design §21): the SMTP transport from `SMTP_URL`, and the
//! messages built from what a service rendered. What to send, and when, is
//! `service::email`'s job; nothing here touches SQL.

pub mod message;
pub mod templates;
pub mod transport;

pub use message::Outgoing;
pub use transport::{Mailer, SendError};
