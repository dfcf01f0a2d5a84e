//! The OAuth lanes of the resource server, Bearer and DPoP: an access token becomes a principal
//! acting for its user through its client's partner, with the token's scopes.

use deckhand_auth::TokenKind;
use time::OffsetDateTime;

use super::dpop::{PresentedProof, key_matches, spend_jti};
use super::ports::{GrantContext, OAuthRepository};
use super::rules::{AccessTokenState, access_token_state};
use crate::identity::{AuthError, Lane, Principal, find_usable};
use crate::oauth::AccessToken;

/// The principal of a Bearer access token. Order: unknown or malformed, inactive user or
/// disabled partner, and a DPoP-bound token on the Bearer lane (the downgrade defence) fail;
/// then a revoked token or grant, then an expired token.
pub(crate) async fn authenticate_bearer(
    repository: &dyn OAuthRepository,
    token: &str,
    now: OffsetDateTime,
) -> Result<Principal, AuthError> {
    let (stored, context) = usable_access_token(repository, token).await?;
    if context.grant.jkt.is_some() {
        return Err(AuthError::Failed);
    }
    live_principal(stored, &context, now, Lane::OAuthBearer)
}

/// The principal of a DPoP-bound access token with its proof. Order: the proof's own checks
/// (with `ath` of this token); the token as on the Bearer lane (unknown, inactive user or
/// partner); the proof's key against the token's binding (an unbound token fails here); a
/// revoked or expired token; and last the proof's `jti`, spent only when everything else
/// passed.
pub(crate) async fn authenticate_dpop(
    repository: &dyn OAuthRepository,
    token: &str,
    proof: &PresentedProof,
    now: OffsetDateTime,
) -> Result<Principal, AuthError> {
    let refused = |refused: super::dpop::ProofRefused| AuthError::InvalidDpopProof(refused.0);
    let checked = proof.check(Some(token), now).map_err(refused)?;
    let (stored, context) = usable_access_token(repository, token).await?;
    key_matches(context.grant.jkt.as_deref(), &checked.jkt).map_err(refused)?;
    let principal = live_principal(stored, &context, now, Lane::OAuthDpop)?;
    spend_jti(repository, &checked, now)
        .await?
        .map_err(refused)?;
    Ok(principal)
}

/// The stored access token `token` names, if it is well formed and its user and partner are
/// active.
async fn usable_access_token(
    repository: &dyn OAuthRepository,
    token: &str,
) -> Result<(AccessToken, GrantContext), AuthError> {
    find_usable(
        TokenKind::AccessToken,
        token,
        |hash| async move { repository.find_access_token(&hash).await },
        |(_, context): &(AccessToken, GrantContext)| {
            context.user.active && context.partner.active && context.client.is_active()
        },
    )
    .await
}

/// The principal of a token that is neither revoked nor expired at `now`.
fn live_principal(
    stored: AccessToken,
    context: &GrantContext,
    now: OffsetDateTime,
    lane: Lane,
) -> Result<Principal, AuthError> {
    match access_token_state(&stored, &context.grant, now) {
        AccessTokenState::Revoked => Err(AuthError::TokenRevoked),
        AccessTokenState::Expired => Err(AuthError::TokenExpired),
        AccessTokenState::Active => Ok(Principal {
            lane,
            user: Some((&context.user).into()),
            partner: Some(context.partner.reference()),
            scopes: stored.scopes,
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use deckhand_auth::TokenHash;
    use futures_executor::block_on;
    use ring::signature::{Ed25519KeyPair, KeyPair as _};
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::identity::{GameScopes, Partner, PartnerSlug, Scopes, Tier, User, UserId, Username};
    use crate::oauth::ports::MockOAuthRepository;
    use crate::oauth::{ClientId, ClientKind, Grant, GrantId, OAuthClient};

    const NOW: OffsetDateTime = datetime!(2026-03-01 12:00 UTC);
    const TOKEN: &str = "dh_at_KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio";
    const URI: &str = "https://api.example.com/api/public/v1/_probe/user";

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A proof by the Ed25519 key of `seed` for a GET of [`URI`] with [`TOKEN`].
    fn proof(seed: u8, jti: &str) -> (PresentedProof, String) {
        let pair = Ed25519KeyPair::from_seed_unchecked(&[seed; 32]).unwrap();
        let x = b64(pair.public_key().as_ref());
        let header = format!(
            r#"{{"typ":"dpop+jwt","alg":"EdDSA","jwk":{{"kty":"OKP","crv":"Ed25519","x":"{x}"}}}}"#
        );
        let claims = format!(
            r#"{{"jti":"{jti}","htm":"GET","htu":"{URI}","iat":{},"ath":"{}"}}"#,
            NOW.unix_timestamp(),
            deckhand_auth::access_token_hash(TOKEN)
        );
        let input = format!("{}.{}", b64(header.as_bytes()), b64(claims.as_bytes()));
        let signature = b64(pair.sign(input.as_bytes()).as_ref());
        let jkt = deckhand_auth::jwk_thumbprint(&[("crv", "Ed25519"), ("kty", "OKP"), ("x", &x)]);
        let presented = PresentedProof {
            proof: format!("{input}.{signature}"),
            method: "GET".into(),
            uri: URI.into(),
        };
        (presented, jkt)
    }

    fn context(jkt: Option<String>) -> (AccessToken, GrantContext) {
        let user = User {
            id: UserId(Uuid::from_u128(1)),
            username: Username::parse("alice").unwrap(),
            active: true,
            premium: false,
            password_hash: None,
            created_at: NOW,
        };
        let slug = PartnerSlug::parse("acme").unwrap();
        let partner = Partner {
            slug: slug.clone(),
            created_by: user.id,
            scopes: Scopes::parse_list("decks:read").unwrap(),
            game_scopes: GameScopes::All,
            tier: Tier::parse("partner").unwrap(),
            sealed_secret: Vec::new(),
            active: true,
            created_at: NOW,
        };
        let client = OAuthClient {
            id: ClientId(Uuid::from_u128(2)),
            partner: slug,
            name: "Tracker".into(),
            kind: ClientKind::Public,
            redirect_uris: Vec::new(),
            scopes: partner.scopes.clone(),
            grant_types: BTreeSet::new(),
            created_at: NOW,
            disabled_at: None,
        };
        let grant = Grant {
            id: GrantId(Uuid::from_u128(3)),
            client_id: client.id,
            user_id: user.id,
            scopes: partner.scopes.clone(),
            jkt,
            created_at: NOW,
            revoked_at: None,
        };
        let token = AccessToken {
            token_hash: TokenHash::of(TOKEN),
            grant_id: grant.id,
            scopes: grant.scopes.clone(),
            issued_at: NOW,
            expires_at: NOW + time::Duration::hours(1),
            revoked_at: None,
        };
        let context = GrantContext {
            grant,
            client,
            partner,
            user,
        };
        (token, context)
    }

    fn finding(found: (AccessToken, GrantContext)) -> MockOAuthRepository {
        let mut repository = MockOAuthRepository::new();
        repository
            .expect_find_access_token()
            .returning(move |_| Ok(Some(found.clone())));
        repository
    }

    fn dpop(
        repository: &MockOAuthRepository,
        proof: &PresentedProof,
    ) -> Result<Principal, AuthError> {
        block_on(authenticate_dpop(repository, TOKEN, proof, NOW))
    }

    #[test]
    fn a_bound_token_with_its_key_spends_the_jti_once_and_authenticates() {
        let (proof, jkt) = proof(1, "first");
        let mut repository = finding(context(Some(jkt.clone())));
        let spent = deckhand_auth::sha256(b"first");
        repository
            .expect_record_dpop_proof_once()
            .withf(move |key, hash, now, until| {
                key == jkt && *hash == spent && *now == NOW && *until == NOW + JTI
            })
            .times(1)
            .returning(|_, _, _, _| Ok(true));
        let principal = dpop(&repository, &proof).unwrap();
        assert_eq!(principal.lane, Lane::OAuthDpop);
    }

    const JTI: time::Duration = crate::oauth::JTI_LIFETIME;

    #[test]
    fn a_replayed_jti_is_an_invalid_proof() {
        let (proof, jkt) = proof(1, "again");
        let mut repository = finding(context(Some(jkt)));
        repository
            .expect_record_dpop_proof_once()
            .returning(|_, _, _, _| Ok(false));
        assert!(matches!(
            dpop(&repository, &proof),
            Err(AuthError::InvalidDpopProof(reason)) if reason.contains("jti")
        ));
    }

    #[test]
    fn a_failing_proof_costs_no_lookup_and_spends_nothing() {
        let (mut proof, _) = proof(1, "x");
        proof.method = "POST".into();
        // No expectations: any call on the repository fails the test.
        let repository = MockOAuthRepository::new();
        assert!(matches!(
            dpop(&repository, &proof),
            Err(AuthError::InvalidDpopProof(_))
        ));
    }

    #[test]
    fn another_key_an_unbound_token_or_a_dead_token_spends_nothing() {
        let (proof, jkt) = proof(1, "x");
        let (_, other_jkt) = self::proof(2, "x");
        // `expect_record_dpop_proof_once` is never set: recording would fail the test.
        for bound in [Some(other_jkt), None] {
            let repository = finding(context(bound));
            assert!(matches!(
                dpop(&repository, &proof),
                Err(AuthError::InvalidDpopProof(_))
            ));
        }
        let (mut token, context) = context(Some(jkt.clone()));
        token.revoked_at = Some(NOW);
        assert!(matches!(
            dpop(&finding((token, context.clone())), &proof),
            Err(AuthError::TokenRevoked)
        ));
        let (mut token, _) = self::context(Some(jkt));
        token.expires_at = NOW;
        assert!(matches!(
            dpop(&finding((token, context)), &proof),
            Err(AuthError::TokenExpired)
        ));
    }

    #[test]
    fn a_bound_token_on_the_bearer_lane_is_refused() {
        let (_, jkt) = proof(1, "x");
        let repository = finding(context(Some(jkt)));
        assert!(matches!(
            block_on(authenticate_bearer(&repository, TOKEN, NOW)),
            Err(AuthError::Failed)
        ));
        let repository = finding(context(None));
        let principal = block_on(authenticate_bearer(&repository, TOKEN, NOW)).unwrap();
        assert_eq!(principal.lane, Lane::OAuthBearer);
    }
}
