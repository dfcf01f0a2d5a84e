//! Identity probes: what the service makes of the caller's credentials.

pub mod partner;
pub mod public;
pub mod user;
