//! Signing in on the consent page: the password check under the sign-in throttle, and the
//! session it opens.

use deckhand_auth::{TokenHash, TokenKind, mint_token};
use time::OffsetDateTime;

use super::OAuthService;
use crate::identity::{User, Username};
use crate::oauth::model::Session;
use crate::oauth::throttle::ThrottleKey;

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// Wrong credentials; `retry_at` when this failure started a delay.
    #[error("the username or password is wrong")]
    InvalidCredentials { retry_at: Option<OffsetDateTime> },
    /// Too many failed sign-ins for this username or from this address: refused, without
    /// checking the password, until `retry_at`.
    #[error("too many failed sign-ins; try again later")]
    Throttled { retry_at: OffsetDateTime },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// An argon2id hash of a password nobody knows, verified when the user does not exist or has
/// no password, so that a wrong username costs as much time as a wrong password.
pub(super) const DECOY_PASSWORD_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$SqlVzpRs4KmcPaxKgEi4fPdNoRgfAh4F8jhnUWNTv3A";

impl OAuthService {
    /// Checks a username and password and opens a session; returns the user and the cookie.
    /// `client` is the caller's address key (IPv4, or an IPv6 /64), when known. Refused
    /// without a password check while the username or the address is throttled
    /// ([`crate::oauth::SignInThrottle`]); a failure is counted under both, a success forgets the
    /// username's count.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_in(
        &self,
        username: &str,
        password: &str,
        client: Option<&str>,
    ) -> Result<(User, String), SignInError> {
        let username = Username::parse(username).ok();
        let keys: Vec<ThrottleKey> = username
            .iter()
            .map(ThrottleKey::username)
            .chain(client.map(|ip| ThrottleKey::Ip(ip.to_owned())))
            .collect();
        let throttle = self.policy.sign_in;
        let now = self.system.clock.now();
        let counts = self.repository.sign_in_failures(&keys).await?;
        let counted: Vec<_> = keys
            .iter()
            .cloned()
            .zip(counts)
            .filter_map(|(key, count)| Some((key, count?)))
            .collect();
        if let Some(retry_at) = throttle.refused_until_any(&counted, now) {
            return Err(SignInError::Throttled { retry_at });
        }
        let user = match &username {
            Some(username) => self.users.find_by_username(username).await?,
            None => None,
        };
        let stored_hash = user
            .as_ref()
            .filter(|user| user.active)
            .and_then(|user| user.password_hash.clone());
        let has_password = stored_hash.is_some();
        let matches = self
            .system
            .passwords
            .verify(
                password,
                stored_hash.as_deref().unwrap_or(DECOY_PASSWORD_HASH),
            )
            .await?;
        let user = match (user, matches, has_password) {
            (Some(user), true, true) => user,
            _ => {
                let now = self.system.clock.now();
                let counts = self
                    .repository
                    .record_sign_in_failure(&keys, now, throttle.counts_restart_before(now))
                    .await?;
                let counted: Vec<_> = keys.into_iter().zip(counts).collect();
                let retry_at = throttle.refused_until_any(&counted, now);
                return Err(SignInError::InvalidCredentials { retry_at });
            }
        };
        if let Some(key) = keys
            .iter()
            .find(|key| matches!(key, ThrottleKey::Username(_)))
        {
            self.repository.clear_sign_in_failures(key).await?;
        }
        let cookie = mint_token(TokenKind::SessionCookie, &self.system.random.bytes32()?);
        let now = self.system.clock.now();
        self.repository
            .insert_session(&Session {
                token_hash: TokenHash::of(&cookie),
                user_id: user.id,
                created_at: now,
                expires_at: now + self.policy.session_ttl,
            })
            .await?;
        Ok((user, cookie))
    }

    /// The active user of a session cookie, if it names a live session.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn session_user(&self, cookie: &str) -> anyhow::Result<Option<User>> {
        let Some(hash) = TokenKind::SessionCookie.lookup_hash(cookie) else {
            return Ok(None);
        };
        let now = self.system.clock.now();
        Ok(self
            .repository
            .find_session(&hash)
            .await?
            .filter(|(session, user)| now < session.expires_at && user.active)
            .map(|(_, user)| user))
    }
}
