//! Cards: resolution of partner-supplied identifiers (the shapes live in `crate::dto::cards`),
//! and a card's statistics.

pub(crate) mod resolve;
pub(crate) mod stats;
