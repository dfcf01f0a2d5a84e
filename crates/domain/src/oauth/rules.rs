//! The state machine of codes, grants and tokens, as pure functions of a record and `now`.
//!
//! A code is fresh until it is redeemed (once) or expires. A grant lives until it is revoked;
//! within it, each refresh token is current until it is rotated (replaced by its successor),
//! expires (idle expiry: every rotation issues a successor with a fresh lifetime) or its grant
//! is revoked. An access token is active until it expires or it or its grant is revoked.
//! Revocation wins over every other state, and a replay (a rotated token used again) over
//! expiry, because a replay must revoke the grant whatever the token's age.

use time::OffsetDateTime;

use super::model::{AccessToken, AuthorizationCode, Grant, RefreshToken};
use crate::identity::{Scopes, UnknownScope};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeState {
    Fresh,
    /// Exchanged before: a replay.
    Redeemed,
    Expired,
}

pub fn code_state(code: &AuthorizationCode, now: OffsetDateTime) -> CodeState {
    if code.redeemed_at.is_some() {
        CodeState::Redeemed
    } else if now >= code.expires_at {
        CodeState::Expired
    } else {
        CodeState::Fresh
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshTokenState {
    Current,
    /// Replaced by a successor: using it again is a replay, which revokes the grant.
    Rotated,
    Expired,
    Revoked,
}

pub fn refresh_token_state(
    token: &RefreshToken,
    grant: &Grant,
    now: OffsetDateTime,
) -> RefreshTokenState {
    if grant.revoked_at.is_some() {
        RefreshTokenState::Revoked
    } else if token.rotated_at.is_some() {
        RefreshTokenState::Rotated
    } else if now >= token.expires_at {
        RefreshTokenState::Expired
    } else {
        RefreshTokenState::Current
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessTokenState {
    Active,
    Expired,
    Revoked,
}

pub fn access_token_state(
    token: &AccessToken,
    grant: &Grant,
    now: OffsetDateTime,
) -> AccessTokenState {
    if token.revoked_at.is_some() || grant.revoked_at.is_some() {
        AccessTokenState::Revoked
    } else if now >= token.expires_at {
        AccessTokenState::Expired
    } else {
        AccessTokenState::Active
    }
}

/// Why a requested scope was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeRefused {
    #[error(transparent)]
    Unknown(#[from] UnknownScope),
    #[error("no scope was requested")]
    Empty,
    #[error("{0} is not allowed here")]
    NotAllowed(String),
}

/// The scopes of a request (`scope`, space-delimited) within `allowed`: every one known, at
/// least one, none outside `allowed`.
pub fn requested_scopes(requested: &str, allowed: &Scopes) -> Result<Scopes, ScopeRefused> {
    let requested = Scopes::parse_list(requested)?;
    if requested.is_empty() {
        return Err(ScopeRefused::Empty);
    }
    let outside = requested.iter().find(|scope| !allowed.contains(*scope));
    match outside {
        Some(outside) => Err(ScopeRefused::NotAllowed(outside.as_str().to_owned())),
        None => Ok(requested),
    }
}

/// The scopes of a refreshed access token: the grant's, or the narrower set asked for. The
/// grant itself keeps its scopes (RFC 6749 §6), so a later refresh may ask for them again.
pub fn narrowed_scopes(granted: &Scopes, requested: Option<&str>) -> Result<Scopes, ScopeRefused> {
    match requested {
        None => Ok(granted.clone()),
        Some(requested) => requested_scopes(requested, granted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::UserId;
    use crate::oauth::model::{ClientId, GrantId};
    use deckhand_auth::TokenHash;
    use time::Duration;
    use time::macros::datetime;
    use uuid::Uuid;

    const NOW: OffsetDateTime = datetime!(2026-03-01 12:00 UTC);

    fn scopes(list: &str) -> Scopes {
        Scopes::parse_list(list).unwrap()
    }

    fn grant() -> Grant {
        Grant {
            id: GrantId(Uuid::from_u128(1)),
            client_id: ClientId(Uuid::from_u128(2)),
            user_id: UserId(Uuid::from_u128(3)),
            scopes: scopes("decks:read decks:write"),
            jkt: None,
            created_at: NOW,
            revoked_at: None,
        }
    }

    fn code() -> AuthorizationCode {
        AuthorizationCode {
            code_hash: TokenHash::of("dh_ac_x"),
            client_id: ClientId(Uuid::from_u128(2)),
            user_id: UserId(Uuid::from_u128(3)),
            redirect_uri: "https://app.example/cb".into(),
            scopes: scopes("decks:read"),
            code_challenge: "c".repeat(43),
            created_at: NOW,
            expires_at: NOW + Duration::minutes(10),
            redeemed_at: None,
            grant_id: None,
        }
    }

    fn refresh() -> RefreshToken {
        RefreshToken {
            token_hash: TokenHash::of("dh_rt_x"),
            grant_id: GrantId(Uuid::from_u128(1)),
            issued_at: NOW,
            expires_at: NOW + Duration::days(30),
            rotated_at: None,
        }
    }

    fn access() -> AccessToken {
        AccessToken {
            token_hash: TokenHash::of("dh_at_x"),
            grant_id: GrantId(Uuid::from_u128(1)),
            scopes: scopes("decks:read"),
            issued_at: NOW,
            expires_at: NOW + Duration::hours(1),
            revoked_at: None,
        }
    }

    #[test]
    fn a_code_is_fresh_for_its_lifetime_then_expired() {
        assert_eq!(code_state(&code(), NOW), CodeState::Fresh);
        assert_eq!(
            code_state(
                &code(),
                NOW + Duration::minutes(10) - Duration::microseconds(1)
            ),
            CodeState::Fresh
        );
        assert_eq!(
            code_state(&code(), NOW + Duration::minutes(10)),
            CodeState::Expired
        );
    }

    #[test]
    fn a_redeemed_code_is_a_replay_even_after_it_expired() {
        let redeemed = AuthorizationCode {
            redeemed_at: Some(NOW),
            ..code()
        };
        assert_eq!(code_state(&redeemed, NOW), CodeState::Redeemed);
        assert_eq!(
            code_state(&redeemed, NOW + Duration::days(1)),
            CodeState::Redeemed
        );
    }

    #[test]
    fn a_refresh_token_is_current_until_idle_expiry() {
        assert_eq!(
            refresh_token_state(&refresh(), &grant(), NOW + Duration::days(29)),
            RefreshTokenState::Current
        );
        assert_eq!(
            refresh_token_state(&refresh(), &grant(), NOW + Duration::days(30)),
            RefreshTokenState::Expired
        );
    }

    #[test]
    fn a_rotated_refresh_token_is_a_replay_and_revocation_wins_over_everything() {
        let rotated = RefreshToken {
            rotated_at: Some(NOW),
            ..refresh()
        };
        assert_eq!(
            refresh_token_state(&rotated, &grant(), NOW),
            RefreshTokenState::Rotated
        );
        // Expired or not, a replay is a replay.
        assert_eq!(
            refresh_token_state(&rotated, &grant(), NOW + Duration::days(90)),
            RefreshTokenState::Rotated
        );
        let revoked = Grant {
            revoked_at: Some(NOW),
            ..grant()
        };
        assert_eq!(
            refresh_token_state(&rotated, &revoked, NOW),
            RefreshTokenState::Revoked
        );
        assert_eq!(
            refresh_token_state(&refresh(), &revoked, NOW),
            RefreshTokenState::Revoked
        );
    }

    #[test]
    fn an_access_token_expires_after_its_lifetime_and_dies_with_its_grant() {
        assert_eq!(
            access_token_state(&access(), &grant(), NOW),
            AccessTokenState::Active
        );
        assert_eq!(
            access_token_state(&access(), &grant(), NOW + Duration::hours(1)),
            AccessTokenState::Expired
        );
        let revoked_grant = Grant {
            revoked_at: Some(NOW),
            ..grant()
        };
        assert_eq!(
            access_token_state(&access(), &revoked_grant, NOW + Duration::hours(2)),
            AccessTokenState::Revoked
        );
        let revoked_token = AccessToken {
            revoked_at: Some(NOW),
            ..access()
        };
        assert_eq!(
            access_token_state(&revoked_token, &grant(), NOW),
            AccessTokenState::Revoked
        );
    }

    #[test]
    fn requested_scopes_must_be_known_present_and_allowed() {
        let allowed = scopes("decks:read decks:write");
        assert_eq!(
            requested_scopes("decks:read", &allowed),
            Ok(scopes("decks:read"))
        );
        assert_eq!(requested_scopes("", &allowed), Err(ScopeRefused::Empty));
        assert!(matches!(
            requested_scopes("decks:admin", &allowed),
            Err(ScopeRefused::Unknown(_))
        ));
        assert_eq!(
            requested_scopes("decks:read sideboards:read", &allowed),
            Err(ScopeRefused::NotAllowed("sideboards:read".into()))
        );
    }

    #[test]
    fn a_refresh_may_narrow_but_never_widen() {
        let granted = scopes("decks:read decks:write");
        assert_eq!(narrowed_scopes(&granted, None), Ok(granted.clone()));
        assert_eq!(
            narrowed_scopes(&granted, Some("decks:read")),
            Ok(scopes("decks:read"))
        );
        assert!(narrowed_scopes(&granted, Some("decks:read sideboards:write")).is_err());
    }
}
