//! Cards: resolution of partner-supplied identifiers (the shapes live in `crate::dto::cards`).

pub(crate) mod resolve;
