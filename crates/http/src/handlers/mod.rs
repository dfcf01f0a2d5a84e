//! One file per operation: extract, call one service method, map the result.

pub(crate) mod cards;
pub(crate) mod collections;
pub(crate) mod decks;
pub(crate) mod docs;
pub(crate) mod events;
pub(crate) mod games;
pub(crate) mod health;
pub(crate) mod likes;
pub(crate) mod oauth;
pub(crate) mod probes;
pub(crate) mod sideboards;
pub(crate) mod webhooks;
