//! Identity probes: what the service makes of the caller's credentials.

pub(crate) mod partner;
pub(crate) mod public;
pub(crate) mod user;
