//! End-to-end tests: the real application over HTTP on an ephemeral port, with credentials made
//! through the admin commands, checking status, headers and body.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

mod card_search;
mod catalog;
mod collections;
mod decks;
mod docs_browser;
mod dpop;
mod events;
mod export;
mod fab;
mod faults;
mod forks;
mod format_history;
mod formats;
mod gate;
mod guides;
mod hostile;
mod idempotency;
mod input_properties;
mod likes;
mod locations;
mod methods;
mod oauth;
mod oauth_browser;
mod oauth_support;
mod operations;
mod partners;
mod pooler;
mod probes;
mod queries;
mod replicas;
mod resilience;
mod sideboard_guides;
mod sign_in_throttling;
mod support;
mod sync;
