//! Privacy: erasure and access for a person's request, and retention.

mod erase;
mod export;
pub mod retention;

pub use erase::{Erased, erase_visitor};
pub use export::export_visitor;
