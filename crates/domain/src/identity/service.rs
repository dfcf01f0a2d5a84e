use std::sync::Arc;

use deckhand_auth::{TokenHash, TokenKind, hash_password, mint_token};
use time::Duration;

use super::ports::{InsertPatError, InsertUserError, PatRepository, UserRepository};
use super::{
    InvalidUsername, LaneCredentials, PatId, PersonalAccessToken, PresentedCredentials, Principal,
    Scopes, User, UserId, UserLookup, Username,
};
use crate::ports::SystemPorts;

/// Users, their personal access tokens, and turning a request's credentials into a principal.
#[derive(Clone)]
pub struct IdentityService {
    users: Arc<dyn UserRepository>,
    pats: Arc<dyn PatRepository>,
    system: SystemPorts,
}

#[derive(Debug, thiserror::Error)]
pub enum CreateUserError {
    #[error(transparent)]
    InvalidUsername(#[from] InvalidUsername),
    #[error("a password must be 8 to 256 characters")]
    InvalidPassword,
    #[error("that username is taken")]
    UsernameTaken,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum LookupUserError {
    #[error("no such user")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum CreatePatError {
    #[error("no such user")]
    UnknownUser,
    #[error("a token needs at least one scope")]
    NoScopes,
    #[error("expiry must be 1 to 3650 days")]
    InvalidExpiry,
    #[error("a token name is at most 100 characters")]
    InvalidName,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why credentials were refused. Each maps to one 401 of the contract.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Unknown, malformed, revoked or expired PAT, inactive user, a rejected combination of
    /// credentials, or a lane this endpoint does not accept.
    #[error("authentication failed")]
    Failed,
    /// An OAuth access token past its lifetime.
    #[error("the access token has expired")]
    TokenExpired,
    /// An OAuth token whose grant was revoked.
    #[error("the token has been revoked")]
    TokenRevoked,
    /// A DPoP proof failed a check (the reason is for the `error_description`).
    #[error("invalid DPoP proof: {0}")]
    InvalidDpopProof(String),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

pub struct NewPatRequest {
    pub user: UserLookup,
    pub scopes: Scopes,
    pub name: Option<String>,
    pub expires_in_days: Option<u32>,
}

impl IdentityService {
    pub fn new(
        users: Arc<dyn UserRepository>,
        pats: Arc<dyn PatRepository>,
        system: SystemPorts,
    ) -> Self {
        Self {
            users,
            pats,
            system,
        }
    }

    pub async fn create_user(
        &self,
        username: &str,
        password: Option<&str>,
        premium: bool,
    ) -> Result<User, CreateUserError> {
        let username = Username::parse(username)?;
        let password_hash = match password {
            Some(password) if !(8..=256).contains(&password.chars().count()) => {
                return Err(CreateUserError::InvalidPassword);
            }
            Some(password) => {
                let salt = self.system.random.bytes32()?;
                Some(hash_password(password, &salt).map_err(anyhow::Error::new)?)
            }
            None => None,
        };
        let user = User {
            id: UserId(self.system.ids.new_id()),
            username,
            active: true,
            premium,
            password_hash,
            created_at: self.system.clock.now(),
        };
        match self.users.insert(&user).await {
            Ok(()) => Ok(user),
            Err(InsertUserError::UsernameTaken) => Err(CreateUserError::UsernameTaken),
            Err(InsertUserError::Unexpected(error)) => Err(error.into()),
        }
    }

    pub async fn find_user(&self, lookup: &UserLookup) -> Result<User, LookupUserError> {
        let found = match lookup {
            UserLookup::Id(id) => self.users.find_by_id(*id).await?,
            UserLookup::Username(username) => self.users.find_by_username(username).await?,
        };
        found.ok_or(LookupUserError::NotFound)
    }

    /// Deactivates a user: every credential of theirs stops working at once, because every
    /// authentication reads the user's active flag.
    pub async fn deactivate_user(&self, lookup: &UserLookup) -> Result<User, LookupUserError> {
        let user = self.find_user(lookup).await?;
        self.users
            .set_active(user.id, false)
            .await?
            .ok_or(LookupUserError::NotFound)
    }

    /// Creates a token and returns it with its one-time secret, which is never stored.
    pub async fn create_pat(
        &self,
        request: NewPatRequest,
    ) -> Result<(PersonalAccessToken, String), CreatePatError> {
        if request.scopes.is_empty() {
            return Err(CreatePatError::NoScopes);
        }
        if request
            .name
            .as_ref()
            .is_some_and(|name| name.chars().count() > 100)
        {
            return Err(CreatePatError::InvalidName);
        }
        let lifetime = match request.expires_in_days {
            Some(days @ 1..=3650) => Some(Duration::days(i64::from(days))),
            Some(_) => return Err(CreatePatError::InvalidExpiry),
            None => None,
        };
        let user = match self.find_user(&request.user).await {
            Ok(user) => user,
            Err(LookupUserError::NotFound) => return Err(CreatePatError::UnknownUser),
            Err(LookupUserError::Unexpected(error)) => return Err(error.into()),
        };
        let secret = mint_token(
            TokenKind::PersonalAccessToken,
            &self.system.random.bytes32()?,
        );
        let now = self.system.clock.now();
        let pat = PersonalAccessToken {
            id: PatId(self.system.ids.new_id()),
            user_id: user.id,
            name: request.name,
            token_hash: TokenHash::of(&secret),
            scopes: request.scopes,
            created_at: now,
            expires_at: lifetime.map(|lifetime| now + lifetime),
            revoked_at: None,
        };
        match self.pats.insert(&pat).await {
            Ok(()) => Ok((pat, secret)),
            Err(InsertPatError::UnknownUser) => Err(CreatePatError::UnknownUser),
            Err(InsertPatError::Unexpected(error)) => Err(error.into()),
        }
    }

    /// The principal a request acts as. Anonymous requests are a principal too; whether an
    /// endpoint accepts them is [`Principal::authorize`]'s question.
    pub async fn authenticate(
        &self,
        credentials: &PresentedCredentials,
    ) -> Result<Principal, AuthError> {
        match credentials.lane().map_err(|_| AuthError::Failed)? {
            LaneCredentials::Anonymous => Ok(Principal::anonymous()),
            LaneCredentials::PersonalAccessToken(token) => self.authenticate_pat(&token).await,
            // The partner and OAuth lanes are recognised so that their combinations are
            // judged correctly, but no credential of theirs can be issued yet: refuse them.
            LaneCredentials::PartnerSignature { .. }
            | LaneCredentials::PartnerSignatureWithPat { .. }
            | LaneCredentials::PartnerApiKey(_)
            | LaneCredentials::OAuthBearer(_)
            | LaneCredentials::OAuthDpop { .. } => Err(AuthError::Failed),
        }
    }

    async fn authenticate_pat(&self, token: &str) -> Result<Principal, AuthError> {
        if !TokenKind::PersonalAccessToken.is_well_formed(token) {
            return Err(AuthError::Failed);
        }
        let (pat, user) = self
            .pats
            .find_by_hash(&TokenHash::of(token))
            .await?
            .ok_or(AuthError::Failed)?;
        if !user.active || !pat.is_usable_at(self.system.clock.now()) {
            return Err(AuthError::Failed);
        }
        Ok(Principal::personal_access_token(&user, pat.scopes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::ports::{MockPatRepository, MockUserRepository};
    use crate::identity::{AuthorizationHeader, Lane, Scope};
    use crate::ports::{FixedClock, MockIdGenerator, MockRandom};
    use time::macros::datetime;
    use uuid::Uuid;

    fn system() -> SystemPorts {
        let mut ids = MockIdGenerator::new();
        ids.expect_new_id().returning(Uuid::now_v7);
        let mut random = MockRandom::new();
        random.expect_bytes32().returning(|| Ok([42; 32]));
        SystemPorts {
            clock: Arc::new(FixedClock::at(datetime!(2026-03-01 12:00 UTC))),
            ids: Arc::new(ids),
            random: Arc::new(random),
        }
    }

    fn alice(active: bool) -> User {
        User {
            id: UserId(Uuid::from_u128(1)),
            username: Username::parse("alice").unwrap(),
            active,
            premium: false,
            password_hash: None,
            created_at: datetime!(2026-01-01 0:00 UTC),
        }
    }

    fn pat_of(user: &User, token: &str) -> PersonalAccessToken {
        PersonalAccessToken {
            id: PatId(Uuid::from_u128(2)),
            user_id: user.id,
            name: None,
            token_hash: TokenHash::of(token),
            scopes: Scopes::parse_list("decks:read").unwrap(),
            created_at: datetime!(2026-01-01 0:00 UTC),
            expires_at: None,
            revoked_at: None,
        }
    }

    fn bearer(token: &str) -> PresentedCredentials {
        PresentedCredentials {
            authorization: Some(AuthorizationHeader::Bearer(token.into())),
            ..Default::default()
        }
    }

    fn service_finding(found: Option<(PersonalAccessToken, User)>) -> IdentityService {
        let mut pats = MockPatRepository::new();
        pats.expect_find_by_hash()
            .returning(move |_| Ok(found.clone()));
        IdentityService::new(
            Arc::new(MockUserRepository::new()),
            Arc::new(pats),
            system(),
        )
    }

    const TOKEN: &str = "dh_pat_KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio";

    #[test]
    fn a_live_pat_of_an_active_user_authenticates_with_its_scopes() {
        let user = alice(true);
        let service = service_finding(Some((pat_of(&user, TOKEN), user.clone())));
        let principal = block_on(service.authenticate(&bearer(TOKEN))).unwrap();
        assert_eq!(principal.lane, Lane::PersonalAccessToken);
        assert_eq!(principal.caller(), format!("user:{}", user.id));
        assert!(principal.scopes.contains(Scope::DecksRead));
    }

    #[test]
    fn inactive_users_revoked_and_expired_tokens_fail() {
        let user = alice(false);
        let service = service_finding(Some((pat_of(&user, TOKEN), user)));
        assert!(matches!(
            block_on(service.authenticate(&bearer(TOKEN))),
            Err(AuthError::Failed)
        ));

        let user = alice(true);
        let mut revoked = pat_of(&user, TOKEN);
        revoked.revoked_at = Some(datetime!(2026-02-01 0:00 UTC));
        let service = service_finding(Some((revoked, user.clone())));
        assert!(matches!(
            block_on(service.authenticate(&bearer(TOKEN))),
            Err(AuthError::Failed)
        ));

        let mut expired = pat_of(&user, TOKEN);
        expired.expires_at = Some(datetime!(2026-03-01 12:00 UTC));
        let service = service_finding(Some((expired, user)));
        assert!(matches!(
            block_on(service.authenticate(&bearer(TOKEN))),
            Err(AuthError::Failed)
        ));
    }

    #[test]
    fn malformed_tokens_fail_without_a_lookup() {
        // No expectation on the repository: a lookup would panic the mock.
        let service = IdentityService::new(
            Arc::new(MockUserRepository::new()),
            Arc::new(MockPatRepository::new()),
            system(),
        );
        let result = block_on(service.authenticate(&bearer("dh_pat_short")));
        assert!(matches!(result, Err(AuthError::Failed)));
    }

    #[test]
    fn creating_a_pat_stores_only_the_hash_of_the_returned_secret() {
        let user = alice(true);
        let mut users = MockUserRepository::new();
        let found = user.clone();
        users
            .expect_find_by_username()
            .returning(move |_| Ok(Some(found.clone())));
        let mut pats = MockPatRepository::new();
        pats.expect_insert().times(1).returning(|_| Ok(()));
        let service = IdentityService::new(Arc::new(users), Arc::new(pats), system());
        let (pat, secret) = block_on(service.create_pat(NewPatRequest {
            user: UserLookup::parse("alice").unwrap(),
            scopes: Scopes::parse_list("decks:read").unwrap(),
            name: None,
            expires_in_days: Some(30),
        }))
        .unwrap();
        assert!(TokenKind::PersonalAccessToken.is_well_formed(&secret));
        assert_eq!(pat.token_hash, TokenHash::of(&secret));
        assert_eq!(pat.expires_at, Some(datetime!(2026-03-31 12:00 UTC)));
    }

    #[test]
    fn pat_requests_are_validated_before_any_lookup() {
        let service = IdentityService::new(
            Arc::new(MockUserRepository::new()),
            Arc::new(MockPatRepository::new()),
            system(),
        );
        let request = |scopes: &str, days| NewPatRequest {
            user: UserLookup::parse("alice").unwrap(),
            scopes: Scopes::parse_list(scopes).unwrap(),
            name: None,
            expires_in_days: days,
        };
        assert!(matches!(
            block_on(service.create_pat(request("", None))),
            Err(CreatePatError::NoScopes)
        ));
        assert!(matches!(
            block_on(service.create_pat(request("decks:read", Some(0)))),
            Err(CreatePatError::InvalidExpiry)
        ));
    }

    #[test]
    fn taken_usernames_are_reported() {
        let mut users = MockUserRepository::new();
        users
            .expect_insert()
            .returning(|_| Err(InsertUserError::UsernameTaken));
        let service = IdentityService::new(
            Arc::new(users),
            Arc::new(MockPatRepository::new()),
            system(),
        );
        let result = block_on(service.create_user("alice", None, false));
        assert!(matches!(result, Err(CreateUserError::UsernameTaken)));
        let result = block_on(service.create_user("alice", Some("short"), false));
        assert!(matches!(result, Err(CreateUserError::InvalidPassword)));
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        futures_executor::block_on(future)
    }
}
