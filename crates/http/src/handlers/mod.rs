//! One file per operation: extract, call one service method, map the result.

pub mod cards;
pub mod decks;
pub mod games;
pub mod health;
pub mod oauth;
pub mod probes;
