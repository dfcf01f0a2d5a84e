//! The events feed (contract "Events").

pub(crate) mod feed;
