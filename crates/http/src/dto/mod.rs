//! Response and request shapes shared by more than one resource (and by `ApiError`). A leaf:
//! it knows the domain's types and serde, never handlers, state or errors.

pub(crate) mod cards;
pub(crate) mod decks;
pub(crate) mod envelope;
pub(crate) mod events;
pub(crate) mod formats;
pub(crate) mod games;
pub(crate) mod names;
