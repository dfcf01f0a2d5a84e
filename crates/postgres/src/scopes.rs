//! Scopes as read back from the store, for every holder of them (tokens, partners).

use deckhand_domain::identity::{Scope, Scopes};

/// The scopes of `holder` stored as `names`. A scope this release does not know (written by a
/// newer release, then read by an older one after a rollback) is dropped with a warning:
/// dropping what this release cannot enforce leaves the holder less powerful, never more, and
/// keeps it working.
pub(crate) fn stored_scopes(names: &[String], holder: std::fmt::Arguments<'_>) -> Scopes {
    names
        .iter()
        .filter_map(|name| match Scope::parse(name) {
            Ok(scope) => Some(scope),
            Err(unknown) => {
                tracing::warn!(%holder, %unknown, "ignoring a stored scope");
                None
            }
        })
        .collect()
}
