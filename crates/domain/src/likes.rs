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

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::identity::{Scopes, User, Username};

    #[test]
    fn a_like_is_the_user_of_the_credentials_never_a_partner_alone() {
        let user = User {
            id: UserId(Uuid::from_u128(7)),
            username: Username::parse("alice").unwrap(),
            active: true,
            premium: false,
            password_hash: None,
            created_at: datetime!(2026-01-01 0:00 UTC),
        };
        let principal = Principal::personal_access_token(&user, Scopes::default());
        assert_eq!(liker(&principal).ok(), Some(user.id));
        assert!(matches!(
            liker(&Principal::anonymous()),
            Err(LikeError::NoUser)
        ));
    }
}
