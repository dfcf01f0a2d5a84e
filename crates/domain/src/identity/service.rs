use std::future::Future;
use std::sync::Arc;

use deckhand_auth::{SealingKey, TokenHash, TokenKind, hash_password, mint_token};
use time::Duration;

use super::ports::{
    ApiKeyRepository, InsertPatError, InsertUserError, PartnerRepository, PatRepository,
    SignatureReplayRepository, UserRepository,
};
use super::{
    InvalidUsername, LaneCredentials, PatId, PersonalAccessToken, Principal, RequestFacts, Scopes,
    User, UserId, UserLookup, Username,
};
use crate::system::SystemPorts;

/// Users, their personal access tokens, partners, and the lanes of both.
#[derive(Clone)]
pub struct IdentityService {
    pub(super) users: Arc<dyn UserRepository>,
    pub(super) pats: Arc<dyn PatRepository>,
    pub(super) partners: Arc<dyn PartnerRepository>,
    pub(super) api_keys: Arc<dyn ApiKeyRepository>,
    pub(super) signature_replays: Arc<dyn SignatureReplayRepository>,
    pub(super) system: SystemPorts,
    /// Seals partner secrets at rest (`DECKHAND_SECRET_KEY`).
    pub(super) sealing_key: SealingKey,
}

/// The repositories [`IdentityService`] reads and writes.
#[derive(Clone)]
pub struct IdentityRepositories {
    pub users: Arc<dyn UserRepository>,
    pub pats: Arc<dyn PatRepository>,
    pub partners: Arc<dyn PartnerRepository>,
    pub api_keys: Arc<dyn ApiKeyRepository>,
    pub signature_replays: Arc<dyn SignatureReplayRepository>,
}

/// The stored credential that a presented token of `kind` names, by `find` (a lookup by its
/// hash), kept only when `usable` says so. A token of the wrong shape is refused before any
/// lookup; a malformed, unknown or unusable one is [`AuthError::Failed`] alike, so a caller
/// learns nothing about which. Every lane of a bearer secret (personal tokens, API keys, OAuth
/// access tokens) looks its secret up through here.
pub(crate) async fn find_usable<T, Found>(
    kind: TokenKind,
    token: &str,
    find: impl FnOnce(TokenHash) -> Found,
    usable: impl FnOnce(&T) -> bool,
) -> Result<T, AuthError>
where
    Found: Future<Output = anyhow::Result<Option<T>>>,
{
    let hash = kind.lookup_hash(token).ok_or(AuthError::Failed)?;
    let found = find(hash).await?.ok_or(AuthError::Failed)?;
    if usable(&found) {
        Ok(found)
    } else {
        Err(AuthError::Failed)
    }
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
    /// credentials, a lane this endpoint does not accept, or any failed partner check (bad,
    /// stale or replayed signature, unknown or disabled partner, revoked API key).
    #[error("authentication failed")]
    Failed,
    /// An OAuth access token past its lifetime.
    #[error("the access token has expired")]
    TokenExpired,
    /// An OAuth token whose grant was revoked.
    #[error("the token has been revoked")]
    TokenRevoked,
    /// A DPoP proof failed a check, or the DPoP scheme came without one (the reason is for
    /// the `error_description`).
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
        repositories: IdentityRepositories,
        system: SystemPorts,
        sealing_key: SealingKey,
    ) -> Self {
        let IdentityRepositories {
            users,
            pats,
            partners,
            api_keys,
            signature_replays,
        } = repositories;
        Self {
            users,
            pats,
            partners,
            api_keys,
            signature_replays,
            system,
            sealing_key,
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
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

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn find_user(&self, lookup: &UserLookup) -> Result<User, LookupUserError> {
        let found = match lookup {
            UserLookup::Id(id) => self.users.find_by_id(*id).await?,
            UserLookup::Username(username) => self.users.find_by_username(username).await?,
        };
        found.ok_or(LookupUserError::NotFound)
    }

    /// Deactivates a user: every credential of theirs stops working at once, because every
    /// authentication reads the user's active flag.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn deactivate_user(&self, lookup: &UserLookup) -> Result<User, LookupUserError> {
        let user = self.find_user(lookup).await?;
        self.users
            .set_active(user.id, false)
            .await?
            .ok_or(LookupUserError::NotFound)
    }

    /// Creates a token and returns it with its one-time secret, which is never stored.
    #[tracing::instrument(level = "debug", skip_all)]
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

    /// The principal of a request on a personal-token or partner lane (anonymous included).
    /// The OAuth lanes are the OAuth server's: `authentication::Authenticator` sends them
    /// there, and here they fail.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate_lane(
        &self,
        lane: LaneCredentials,
        facts: &RequestFacts,
    ) -> Result<Principal, AuthError> {
        match lane {
            LaneCredentials::Anonymous => Ok(Principal::anonymous()),
            LaneCredentials::PersonalAccessToken(token) => {
                let (pat, user) = self.authenticate_pat(&token).await?;
                Ok(Principal::personal_access_token(&user, pat.scopes))
            }
            LaneCredentials::PartnerSignature {
                partner_id,
                signature,
            } => {
                self.authenticate_signature(&partner_id, &signature, None, facts)
                    .await
            }
            LaneCredentials::PartnerSignatureWithPat {
                partner_id,
                signature,
                pat,
            } => {
                self.authenticate_signature(&partner_id, &signature, Some(&pat), facts)
                    .await
            }
            LaneCredentials::PartnerApiKey(key) => self.authenticate_api_key(&key).await,
            LaneCredentials::OAuthBearer(_) | LaneCredentials::OAuthDpop { .. } => {
                Err(AuthError::Failed)
            }
        }
    }

    pub(super) async fn authenticate_pat(
        &self,
        token: &str,
    ) -> Result<(PersonalAccessToken, User), AuthError> {
        let now = self.system.clock.now();
        find_usable(
            TokenKind::PersonalAccessToken,
            token,
            |hash| async move { self.pats.find_by_hash(&hash).await },
            |(pat, user): &(PersonalAccessToken, User)| user.active && pat.is_usable_at(now),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::ports::{
        MockApiKeyRepository, MockPartnerRepository, MockPatRepository,
        MockSignatureReplayRepository, MockUserRepository,
    };
    use crate::identity::{AuthorizationHeader, Lane, PresentedCredentials, Scope};
    use crate::system::{FixedClock, MockIdGenerator, MockRandom};

    /// A service over these user and token mocks; every other port is a mock that expects
    /// nothing, so touching it fails the test.
    fn service_over(users: MockUserRepository, pats: MockPatRepository) -> IdentityService {
        let repositories = IdentityRepositories {
            users: Arc::new(users),
            pats: Arc::new(pats),
            partners: Arc::new(MockPartnerRepository::new()),
            api_keys: Arc::new(MockApiKeyRepository::new()),
            signature_replays: Arc::new(MockSignatureReplayRepository::new()),
        };
        IdentityService::new(repositories, system(), SealingKey([3; 32]))
    }

    fn authenticate(
        service: &IdentityService,
        credentials: &PresentedCredentials,
    ) -> Result<Principal, AuthError> {
        let lane = credentials.lane().map_err(|_| AuthError::Failed)?;
        block_on(service.authenticate_lane(lane, &RequestFacts::get("/")))
    }
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
            passwords: Arc::new(crate::system::InlinePasswordVerifier),
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
        service_over(MockUserRepository::new(), pats)
    }

    const TOKEN: &str = "dh_pat_KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio";

    #[test]
    fn a_live_pat_of_an_active_user_authenticates_with_its_scopes() {
        let user = alice(true);
        let service = service_finding(Some((pat_of(&user, TOKEN), user.clone())));
        let principal = authenticate(&service, &bearer(TOKEN)).unwrap();
        assert_eq!(principal.lane, Lane::PersonalAccessToken);
        assert_eq!(principal.caller(), format!("user:{}", user.id));
        assert!(principal.scopes.contains(Scope::DecksRead));
    }

    #[test]
    fn inactive_users_revoked_and_expired_tokens_fail() {
        let user = alice(false);
        let service = service_finding(Some((pat_of(&user, TOKEN), user)));
        assert!(matches!(
            authenticate(&service, &bearer(TOKEN)),
            Err(AuthError::Failed)
        ));

        let user = alice(true);
        let mut revoked = pat_of(&user, TOKEN);
        revoked.revoked_at = Some(datetime!(2026-02-01 0:00 UTC));
        let service = service_finding(Some((revoked, user.clone())));
        assert!(matches!(
            authenticate(&service, &bearer(TOKEN)),
            Err(AuthError::Failed)
        ));

        let mut expired = pat_of(&user, TOKEN);
        expired.expires_at = Some(datetime!(2026-03-01 12:00 UTC));
        let service = service_finding(Some((expired, user)));
        assert!(matches!(
            authenticate(&service, &bearer(TOKEN)),
            Err(AuthError::Failed)
        ));
    }

    #[test]
    fn malformed_tokens_fail_without_a_lookup() {
        // No expectation on the repository: a lookup would panic the mock.
        let service = service_over(MockUserRepository::new(), MockPatRepository::new());
        let result = authenticate(&service, &bearer("dh_pat_short"));
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
        let service = service_over(users, pats);
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
        let service = service_over(MockUserRepository::new(), MockPatRepository::new());
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
        let service = service_over(users, MockPatRepository::new());
        let result = block_on(service.create_user("alice", None, false));
        assert!(matches!(result, Err(CreateUserError::UsernameTaken)));
        let result = block_on(service.create_user("alice", Some("short"), false));
        assert!(matches!(result, Err(CreateUserError::InvalidPassword)));
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        futures_executor::block_on(future)
    }
}
