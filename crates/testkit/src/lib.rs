//! Test support shared by the crates' and the end-to-end tests: a throwaway PostgreSQL with an
//! isolated schema per test ([`db`]), domain fixtures ([`fixtures`]), and the one repository
//! contract suite every store adapter must pass ([`contract`]).
//!
//! It is only ever a dev-dependency: nothing in the service may depend on it.

pub mod app;
pub mod contract;
pub mod db;
pub mod fixtures;
pub mod tournament_decks;
pub mod webhook_workers;
