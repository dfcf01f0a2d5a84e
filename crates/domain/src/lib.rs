//! The rules of Deckhand: users and their tokens, principals and scopes, the OAuth server's
//! grants, and decks, guides, versions, visibility and ownership. Everything here is plain data and pure
//! functions plus services that reach the world only through the ports in [`ports`].
//!
//! This crate must never know about HTTP, SQL, a runtime or a pool: no actix, diesel, tokio or
//! deadpool (the `tidy` check in xtask enforces it). Adapters depend on it, never the reverse.

pub mod authentication;
pub mod catalog;
pub mod collections;
pub mod decks;
pub mod error;
pub mod events;
pub mod formats;
pub mod idempotency;
pub mod identity;
pub mod likes;
pub mod oauth;
pub mod patch;
pub mod ports;
pub mod pruning;
pub mod readable;
pub mod routing;
pub mod services;
pub mod settings;
pub mod sideboards;
pub mod system;
pub mod time;
pub mod validation;
pub mod webhooks;

pub use error::{StoreMisconfigured, StoreUnavailable};
pub use patch::Patch;
pub use services::Services;
pub use settings::ServiceSettings;
