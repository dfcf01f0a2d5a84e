//! Likes of decks and sideboard guides: one per user and item, set with `PUT` and withdrawn
//! with `DELETE`, each idempotent. A like is a person's, so it needs the user of the
//! credentials (a PAT, an OAuth token, a signature with a PAT); a partner acting alone has no
//! user to like as (its `created_by` user owns what it writes, but does not like for it).
//! The store records the like and moves the item's `likes` counter in one statement, so
//! concurrent likes lose nothing and lists sorted by likes follow at once.

use crate::identity::{Principal, UserId};

#[derive(Debug, thiserror::Error)]
pub enum LikeError {
    /// The credentials carry no user (a partner acting alone).
    #[error("likes need a user identity")]
    NoUser,
    /// No such item, or one the caller may not see.
    #[error("not found")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// The user whose like this is.
pub fn liker(principal: &Principal) -> Result<UserId, LikeError> {
    principal
        .user
        .as_ref()
        .map(|user| user.id)
        .ok_or(LikeError::NoUser)
}
