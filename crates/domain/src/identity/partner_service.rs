//! The partner use cases of [`IdentityService`]: creating partners and their API keys,
//! disabling them, and the two partner lanes (signed requests and API keys). The partner model
//! is in `partner.rs`.

use anyhow::Context as _;
use deckhand_auth::{CanonicalRequest, SignatureHeader, TokenHash, TokenKind, mint_token};
use time::Duration;

use super::ports::{InsertApiKeyError, InsertPartnerError};
use super::service::find_usable;
use super::{
    ApiKey, ApiKeyId, AuthError, GameScopes, IdentityService, Lane, LookupUserError, Partner,
    PartnerSlug, Principal, RequestFacts, Scopes, Tier, UserLookup,
};

/// How far a signature's timestamp may be from the server clock, either way.
pub const SIGNATURE_WINDOW: Duration = Duration::seconds(300);
/// How long a used signature is remembered: longer than the window on both sides, so a
/// signature cannot outlive its record.
pub const SIGNATURE_REPLAY_TTL: Duration = Duration::seconds(600);

pub struct NewPartnerRequest {
    pub slug: PartnerSlug,
    pub owner: UserLookup,
    pub scopes: Scopes,
    pub game_scopes: GameScopes,
    pub tier: Option<Tier>,
}

#[derive(Debug, thiserror::Error)]
pub enum CreatePartnerError {
    #[error("no such user")]
    UnknownUser,
    #[error("that partner slug is taken")]
    SlugTaken,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum PartnerLookupError {
    #[error("no such partner")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum CreateApiKeyError {
    #[error("no such partner")]
    UnknownPartner,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum RevokeApiKeyError {
    #[error("no such API key")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl Principal {
    /// A partner alone (signature or API key): the partner's scopes, acting as its creator.
    pub fn partner(partner: &Partner, lane: Lane) -> Self {
        Self {
            lane,
            user: None,
            partner: Some(partner.reference()),
            scopes: partner.scopes.clone(),
        }
    }

    /// A partner on behalf of a PAT's user: only the scopes both hold.
    pub fn partner_with_user(partner: &Partner, user: &super::User, pat_scopes: &Scopes) -> Self {
        Self {
            lane: Lane::PartnerSignatureWithPat,
            user: Some(user.into()),
            partner: Some(partner.reference()),
            scopes: partner.scopes.intersection(pat_scopes),
        }
    }
}

impl IdentityService {
    /// Creates a partner and returns it with its one-time HMAC secret, which is stored only
    /// sealed under the service's secret key.
    #[tracing::instrument(level = "debug", skip_all, fields(partner = %request.slug.as_str()))]
    pub async fn create_partner(
        &self,
        request: NewPartnerRequest,
    ) -> Result<(Partner, String), CreatePartnerError> {
        let owner = match self.find_user(&request.owner).await {
            Ok(user) => user,
            Err(LookupUserError::NotFound) => return Err(CreatePartnerError::UnknownUser),
            Err(LookupUserError::Unexpected(error)) => return Err(error.into()),
        };
        let secret = mint_token(TokenKind::PartnerSecret, &self.system.random.bytes32()?);
        let mut nonce = [0u8; 12];
        nonce.copy_from_slice(&self.system.random.bytes32()?[..12]);
        let sealed_secret = deckhand_auth::seal(
            &self.sealing_key,
            nonce,
            request.slug.as_str().as_bytes(),
            secret.as_bytes(),
        )
        .context("sealing a partner secret")?;
        let partner = Partner {
            slug: request.slug,
            created_by: owner.id,
            scopes: request.scopes,
            game_scopes: request.game_scopes,
            tier: request.tier.unwrap_or_else(Tier::partner),
            sealed_secret,
            active: true,
            created_at: self.system.clock.now(),
        };
        match self.partners.insert(&partner).await {
            Ok(()) => Ok((partner, secret)),
            Err(InsertPartnerError::SlugTaken) => Err(CreatePartnerError::SlugTaken),
            Err(InsertPartnerError::UnknownUser) => Err(CreatePartnerError::UnknownUser),
            Err(InsertPartnerError::Unexpected(error)) => Err(error.into()),
        }
    }

    /// Every partner, by slug.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_partners(&self) -> anyhow::Result<Vec<Partner>> {
        self.partners.list().await
    }

    /// Every API key, or those of `partner`, oldest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_api_keys(&self, partner: Option<PartnerSlug>) -> anyhow::Result<Vec<ApiKey>> {
        self.api_keys.list(partner).await
    }

    /// Disables a partner: every lane of it stops at once, because each reads the flag.
    #[tracing::instrument(level = "debug", skip_all, fields(partner = %slug.as_str()))]
    pub async fn disable_partner(&self, slug: &PartnerSlug) -> Result<Partner, PartnerLookupError> {
        self.partners
            .set_active(slug, false)
            .await?
            .ok_or(PartnerLookupError::NotFound)
    }

    /// Creates an API key for a partner and returns it with its one-time secret.
    #[tracing::instrument(level = "debug", skip_all, fields(partner = %partner.as_str()))]
    pub async fn create_api_key(
        &self,
        partner: &PartnerSlug,
    ) -> Result<(ApiKey, String), CreateApiKeyError> {
        let secret = mint_token(TokenKind::PartnerApiKey, &self.system.random.bytes32()?);
        let key = ApiKey {
            id: ApiKeyId(self.system.ids.new_id()),
            partner: partner.clone(),
            key_hash: TokenHash::of(&secret),
            created_at: self.system.clock.now(),
            revoked_at: None,
        };
        match self.api_keys.insert(&key).await {
            Ok(()) => Ok((key, secret)),
            Err(InsertApiKeyError::UnknownPartner) => Err(CreateApiKeyError::UnknownPartner),
            Err(InsertApiKeyError::Unexpected(error)) => Err(error.into()),
        }
    }

    #[tracing::instrument(level = "debug", skip_all, fields(key = %id.0))]
    pub async fn revoke_api_key(&self, id: ApiKeyId) -> Result<ApiKey, RevokeApiKeyError> {
        self.api_keys
            .revoke(id, self.system.clock.now())
            .await?
            .ok_or(RevokeApiKeyError::NotFound)
    }

    pub(super) async fn authenticate_api_key(&self, key: &str) -> Result<Principal, AuthError> {
        let (_, partner) = find_usable(
            TokenKind::PartnerApiKey,
            key,
            |hash| async move { self.api_keys.find_by_hash(&hash).await },
            |(key, partner): &(ApiKey, Partner)| key.revoked_at.is_none() && partner.active,
        )
        .await?;
        self.ensure_acting_user_active(&partner).await?;
        Ok(Principal::partner(&partner, Lane::PartnerApiKey))
    }

    /// A partner-only call acts as the partner's `created_by` user (it owns what the call
    /// creates), so it stops working when that user is deactivated, as the user's own
    /// credentials do.
    async fn ensure_acting_user_active(&self, partner: &Partner) -> Result<(), AuthError> {
        match self.users.find_by_id(partner.created_by).await? {
            Some(user) if user.active => Ok(()),
            _ => Err(AuthError::Failed),
        }
    }

    /// The signature lane, alone or with a PAT. The checks run cheapest first, and the
    /// signature is recorded as used only once everything else has passed, so a forged or
    /// otherwise refused request cannot burn a partner's genuine signature.
    pub(super) async fn authenticate_signature(
        &self,
        partner_id: &str,
        signature: &str,
        pat: Option<&str>,
        facts: &RequestFacts,
    ) -> Result<Principal, AuthError> {
        let header = SignatureHeader::parse(signature).map_err(|_| AuthError::Failed)?;
        let now = self.system.clock.now();
        let skew = now.unix_timestamp().abs_diff(header.timestamp);
        if skew > SIGNATURE_WINDOW.whole_seconds().unsigned_abs() {
            return Err(AuthError::Failed);
        }
        let slug = PartnerSlug::parse(partner_id).map_err(|_| AuthError::Failed)?;
        let partner = self
            .partners
            .find_by_slug(&slug)
            .await?
            .filter(|partner| partner.active)
            .ok_or(AuthError::Failed)?;
        let secret = deckhand_auth::open(
            &self.sealing_key,
            slug.as_str().as_bytes(),
            &partner.sealed_secret,
        )
        .map_err(|error| {
            // Not the caller's fault: the key was changed, or the row was damaged or moved.
            anyhow::Error::new(error).context(format!(
                "opening the secret of partner {slug}: is DECKHAND_SECRET_KEY the one it was created with?"
            ))
        })?;
        let request = CanonicalRequest {
            timestamp: header.timestamp,
            method: &facts.method,
            path: &facts.path,
            query: &facts.query,
            partner_slug: slug.as_str(),
            body_sha256: &facts.body_sha256,
        };
        if !request.verify(&secret, &header.mac) {
            return Err(AuthError::Failed);
        }
        let principal = match pat {
            None => {
                self.ensure_acting_user_active(&partner).await?;
                Principal::partner(&partner, Lane::PartnerSignature)
            }
            Some(token) => {
                let (pat, user) = self.authenticate_pat(token).await?;
                Principal::partner_with_user(&partner, &user, &pat.scopes)
            }
        };
        if !facts.is_safe_method() {
            let first_use = self
                .signature_replays
                .record_signature_once(
                    &slug,
                    &deckhand_auth::sha256(&header.mac),
                    now,
                    now + SIGNATURE_REPLAY_TTL,
                )
                .await?;
            if !first_use {
                return Err(AuthError::Failed);
            }
        }
        Ok(principal)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use deckhand_auth::sha256;
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::identity::IdentityRepositories;
    use crate::identity::ports::{
        MockApiKeyRepository, MockPartnerRepository, MockPatRepository,
        MockSignatureReplayRepository, MockUserRepository,
    };
    use crate::identity::{PresentedCredentials, UserId};
    use crate::system::{FixedClock, SystemPorts, UuidV7Ids};

    const NOW: i64 = 1_767_225_600;
    const SECRET: &str = "dh_ps_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";
    const KEY: [u8; 32] = [5; 32];

    fn partner(active: bool) -> Partner {
        Partner {
            slug: PartnerSlug::parse("acme").unwrap(),
            created_by: UserId(Uuid::from_u128(9)),
            scopes: Scopes::parse_list("decks:read decks:write").unwrap(),
            game_scopes: GameScopes::All,
            tier: Tier::partner(),
            sealed_secret: deckhand_auth::seal(
                &deckhand_auth::SealingKey(KEY),
                [1; 12],
                b"acme",
                SECRET.as_bytes(),
            )
            .unwrap(),
            active,
            created_at: datetime!(2026-01-01 0:00 UTC),
        }
    }

    struct Setup {
        partners: MockPartnerRepository,
        replays: MockSignatureReplayRepository,
        users: MockUserRepository,
    }

    /// The partner `acme`, active or not, whose `created_by` user is active.
    fn setup(active: bool) -> Setup {
        setup_with_owner(active, true)
    }

    fn setup_with_owner(active: bool, owner_active: bool) -> Setup {
        let mut partners = MockPartnerRepository::new();
        partners
            .expect_find_by_slug()
            .returning(move |slug| Ok((slug.as_str() == "acme").then(|| partner(active))));
        let mut users = MockUserRepository::new();
        users.expect_find_by_id().returning(move |id| {
            Ok(Some(crate::identity::User {
                id,
                username: crate::identity::Username::parse("owner").unwrap(),
                active: owner_active,
                premium: false,
                password_hash: None,
                created_at: datetime!(2026-01-01 0:00 UTC),
            }))
        });
        Setup {
            partners,
            replays: MockSignatureReplayRepository::new(),
            users,
        }
    }

    fn service(setup: Setup) -> IdentityService {
        let repositories = IdentityRepositories {
            users: Arc::new(setup.users),
            pats: Arc::new(MockPatRepository::new()),
            partners: Arc::new(setup.partners),
            api_keys: Arc::new(MockApiKeyRepository::new()),
            signature_replays: Arc::new(setup.replays),
        };
        let system = SystemPorts {
            clock: Arc::new(FixedClock::at(
                OffsetDateTime::from_unix_timestamp(NOW).unwrap(),
            )),
            ids: Arc::new(UuidV7Ids),
            random: Arc::new(deckhand_auth::OsRandom::new()),
            passwords: Arc::new(crate::system::InlinePasswordVerifier),
        };
        IdentityService::new(repositories, system, deckhand_auth::SealingKey(KEY))
    }

    fn facts(method: &str, body: &[u8]) -> RequestFacts {
        RequestFacts {
            method: method.into(),
            path: "/api/public/v1/_probe/partner".into(),
            query: "a=1".into(),
            body_sha256: sha256(body),
            public_uri: "https://api.example.com/api/public/v1/_probe/partner".into(),
        }
    }

    fn signed(facts: &RequestFacts, timestamp: i64) -> PresentedCredentials {
        let header = CanonicalRequest {
            timestamp,
            method: &facts.method,
            path: &facts.path,
            query: &facts.query,
            partner_slug: "acme",
            body_sha256: &facts.body_sha256,
        }
        .sign(SECRET.as_bytes());
        PresentedCredentials {
            partner_id: Some("acme".into()),
            signature: Some(header.render()),
            ..Default::default()
        }
    }

    fn run(
        service: &IdentityService,
        credentials: &PresentedCredentials,
        facts: &RequestFacts,
    ) -> Result<Principal, AuthError> {
        let lane = credentials.lane().map_err(|_| AuthError::Failed)?;
        futures_executor::block_on(service.authenticate_lane(lane, facts))
    }

    use time::OffsetDateTime;

    #[test]
    fn a_signed_get_authenticates_as_the_partner_and_may_repeat() {
        // No expectation on the replay store: a safe method must not touch it.
        let service = service(setup(true));
        let get = facts("GET", b"");
        let credentials = signed(&get, NOW);
        for _ in 0..2 {
            let principal = run(&service, &credentials, &get).unwrap();
            assert_eq!(principal.caller(), "partner:acme");
            assert_eq!(principal.lane, Lane::PartnerSignature);
            assert_eq!(principal.scopes.names(), ["decks:read", "decks:write"]);
        }
    }

    #[test]
    fn timestamps_more_than_300_seconds_away_fail() {
        let service = service(setup(true));
        let get = facts("GET", b"");
        for (timestamp, ok) in [
            (NOW - 300, true),
            (NOW + 300, true),
            (NOW - 301, false),
            (NOW + 301, false),
        ] {
            let result = run(&service, &signed(&get, timestamp), &get);
            assert_eq!(result.is_ok(), ok, "{timestamp}");
        }
    }

    #[test]
    fn any_change_to_the_request_fails() {
        let service = service(setup(true));
        let original = facts("GET", b"{}");
        let credentials = signed(&original, NOW);
        let mut changed = [original.clone(), original.clone(), original.clone()];
        changed[0].body_sha256 = sha256(b"{ }");
        changed[1].path.push('x');
        changed[2].query = "a=2".into();
        for facts in changed {
            assert!(matches!(
                run(&service, &credentials, &facts),
                Err(AuthError::Failed)
            ));
        }
    }

    #[test]
    fn unsafe_methods_record_the_signature_once_after_verifying_it() {
        let mut setup = setup(true);
        let mut first = true;
        setup
            .replays
            .expect_record_signature_once()
            .times(2)
            .returning(move |slug, _, now, expires_at| {
                assert_eq!(slug.as_str(), "acme");
                assert_eq!(expires_at - now, SIGNATURE_REPLAY_TTL);
                Ok(std::mem::replace(&mut first, false))
            });
        let service = service(setup);
        let post = facts("POST", b"{}");
        let credentials = signed(&post, NOW);
        assert!(run(&service, &credentials, &post).is_ok());
        assert!(matches!(
            run(&service, &credentials, &post),
            Err(AuthError::Failed)
        ));
        // A forged MAC never reaches the replay store (it allows only two calls).
        let mut forged = credentials.clone();
        forged.signature = Some(format!("v1.{NOW}.{}", "0".repeat(64)));
        assert!(matches!(
            run(&service, &forged, &post),
            Err(AuthError::Failed)
        ));
    }

    #[test]
    fn unknown_and_disabled_partners_fail() {
        let get = facts("GET", b"");
        let service_disabled = service(setup(false));
        assert!(matches!(
            run(&service_disabled, &signed(&get, NOW), &get),
            Err(AuthError::Failed)
        ));
        let service = service(setup(true));
        let mut unknown = signed(&get, NOW);
        unknown.partner_id = Some("umbrella".into());
        assert!(matches!(
            run(&service, &unknown, &get),
            Err(AuthError::Failed)
        ));
    }

    #[test]
    fn a_partner_whose_owner_was_deactivated_cannot_act_alone() {
        let get = facts("GET", b"");
        let service = service(setup_with_owner(true, false));
        assert!(matches!(
            run(&service, &signed(&get, NOW), &get),
            Err(AuthError::Failed)
        ));
    }

    #[test]
    fn a_secret_sealed_under_another_key_is_an_unexpected_error() {
        let mut partners = MockPartnerRepository::new();
        partners.expect_find_by_slug().returning(|_| {
            let mut partner = partner(true);
            partner.sealed_secret =
                deckhand_auth::seal(&deckhand_auth::SealingKey([6; 32]), [1; 12], b"acme", b"x")
                    .unwrap();
            Ok(Some(partner))
        });
        let service = service(Setup {
            partners,
            replays: MockSignatureReplayRepository::new(),
            users: MockUserRepository::new(),
        });
        let get = facts("GET", b"");
        assert!(matches!(
            run(&service, &signed(&get, NOW), &get),
            Err(AuthError::Unexpected(_))
        ));
    }
}
