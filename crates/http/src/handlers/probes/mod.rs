//! Identity probes: what the service makes of the caller's credentials.

pub mod public;
pub mod user;
