use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use super::Scopes;
use deckhand_auth::TokenHash;

/// The bare user id: a UUID, rendered as a string on the wire (`user.id`, `author.id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct UserId(pub Uuid);

impl std::fmt::Display for UserId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The mutable display handle: 3 to 32 of `[a-z0-9_-]`. Input is accepted in any case and kept
/// in lower case, which makes uniqueness case-insensitive by construction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Username(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a username is 3 to 32 characters of a-z, 0-9, '_' and '-'")]
pub struct InvalidUsername;

impl Username {
    pub fn parse(input: &str) -> Result<Self, InvalidUsername> {
        let lower = input.to_ascii_lowercase();
        let allowed =
            |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
        if (3..=32).contains(&lower.len()) && lower.chars().all(allowed) {
            Ok(Self(lower))
        } else {
            Err(InvalidUsername)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: UserId,
    pub username: Username,
    pub active: bool,
    pub premium: bool,
    /// argon2id PHC string; `None` for users who cannot sign in with a password.
    pub password_hash: Option<String>,
    pub created_at: OffsetDateTime,
}

/// A user to insert. The service fills every field; the repository only stores it.
pub type NewUser = User;

/// How an operator names a user on the command line: by id or by username.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserLookup {
    Id(UserId),
    Username(Username),
}

impl UserLookup {
    pub fn parse(input: &str) -> Result<Self, InvalidUsername> {
        match Uuid::parse_str(input) {
            Ok(id) => Ok(Self::Id(UserId(id))),
            Err(_) => Username::parse(input).map(Self::Username),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct PatId(pub Uuid);

/// A personal access token as stored: its hash, never the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonalAccessToken {
    pub id: PatId,
    pub user_id: UserId,
    pub name: Option<String>,
    pub token_hash: TokenHash,
    pub scopes: Scopes,
    pub created_at: OffsetDateTime,
    pub expires_at: Option<OffsetDateTime>,
    pub revoked_at: Option<OffsetDateTime>,
}

impl PersonalAccessToken {
    /// Whether the token may authenticate at `now`.
    pub fn is_usable_at(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|expiry| now < expiry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_lower_cased_and_bounded() {
        assert_eq!(Username::parse("Alice_01").unwrap().as_str(), "alice_01");
        assert!(Username::parse("ab").is_err());
        assert!(Username::parse(&"a".repeat(32)).is_ok());
        assert!(Username::parse(&"a".repeat(33)).is_err());
        assert!(Username::parse("with space").is_err());
        assert!(Username::parse("émile").is_err());
    }

    #[test]
    fn a_lookup_is_an_id_when_it_parses_as_a_uuid() {
        let id = Uuid::now_v7();
        assert_eq!(
            UserLookup::parse(&id.to_string()).unwrap(),
            UserLookup::Id(UserId(id))
        );
        assert!(matches!(
            UserLookup::parse("bob").unwrap(),
            UserLookup::Username(_)
        ));
    }
}
