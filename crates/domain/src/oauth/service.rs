//! The OAuth server's use cases, one part a file, all methods of one [`OAuthService`]:
//!
//! - `clients`: registering clients, listing and disabling them;
//! - `consent`: the authorization request and consent, and the consent page's CSRF token;
//! - `sign_in`: the sign-in session of the consent page, under the sign-in throttle;
//! - `client_auth`: how the token, introspection and revocation endpoints authenticate a
//!   client, and their errors;
//! - `tokens`: the token endpoint (code exchange, refresh with rotation, DPoP binding);
//! - `introspection`: introspection and revocation.
//!
//! Their spans record no arguments: they carry codes, tokens, secrets and passwords.

use std::sync::Arc;

use super::model::{ClientId, OAuthClient, OAuthPolicy};
use super::ports::OAuthRepository;
use crate::identity::Partner;
use crate::identity::ports::{PartnerRepository, UserRepository};
use crate::system::SystemPorts;

mod client_auth;
mod clients;
mod consent;
mod introspection;
mod sign_in;
mod tokens;

pub use client_auth::{BasicCredentials, ClientAuthentication, TokenError};
pub use clients::{CreateClientError, NewClientRequest};
pub use introspection::Introspection;
pub use sign_in::SignInError;
pub use tokens::{IssuedTokenResponse, TokenRequest};

#[derive(Clone)]
pub struct OAuthService {
    repository: Arc<dyn OAuthRepository>,
    users: Arc<dyn UserRepository>,
    partners: Arc<dyn PartnerRepository>,
    system: SystemPorts,
    policy: OAuthPolicy,
    csrf_key: [u8; 32],
}

impl OAuthService {
    /// The OAuth server over its own repository and the users and partners it authenticates
    /// and authorizes for; `csrf_key` keys the consent page's CSRF tokens.
    pub fn new(
        repository: Arc<dyn OAuthRepository>,
        users: Arc<dyn UserRepository>,
        partners: Arc<dyn PartnerRepository>,
        system: SystemPorts,
        policy: OAuthPolicy,
        csrf_key: [u8; 32],
    ) -> Self {
        Self {
            repository,
            users,
            partners,
            system,
            policy,
            csrf_key,
        }
    }

    pub fn policy(&self) -> OAuthPolicy {
        self.policy
    }

    /// The client a `client_id` names, if it exists, is not disabled and its partner is
    /// active.
    async fn active_client(
        &self,
        client_id: &str,
    ) -> anyhow::Result<Option<(OAuthClient, Partner)>> {
        let Some(id) = ClientId::parse(client_id) else {
            return Ok(None);
        };
        Ok(self
            .repository
            .find_client(id)
            .await?
            .filter(|(client, partner)| partner.active && client.is_active()))
    }
}

#[cfg(test)]
mod tests {
    use deckhand_auth::CheckedProof;

    use super::sign_in::DECOY_PASSWORD_HASH;
    use super::tokens::check_binding;
    use super::*;
    use deckhand_auth::verify_password;

    #[test]
    fn a_refresh_must_fit_the_grants_dpop_binding() {
        let proof = |jkt: &str| CheckedProof {
            jkt: jkt.into(),
            jti: "j".into(),
        };
        assert!(check_binding(None, None).is_ok());
        assert!(check_binding(Some("key"), Some(&proof("key"))).is_ok());
        for (bound, presented) in [
            (Some("key"), None),
            (Some("key"), Some(proof("other"))),
            (None, Some(proof("key"))),
        ] {
            assert!(
                matches!(
                    check_binding(bound, presented.as_ref()),
                    Err(TokenError::InvalidDpopProof(_))
                ),
                "{bound:?} {presented:?}"
            );
        }
    }

    #[test]
    fn the_decoy_hash_parses_and_matches_nothing() {
        assert!(!verify_password("", DECOY_PASSWORD_HASH).unwrap());
        assert!(!verify_password("password", DECOY_PASSWORD_HASH).unwrap());
    }

    #[test]
    fn debug_output_of_requests_and_responses_hides_secrets() {
        let request = TokenRequest {
            grant_type: Some("authorization_code".into()),
            code: Some("dh_ac_secret".into()),
            code_verifier: Some("verifier-secret".into()),
            refresh_token: Some("dh_rt_secret".into()),
            ..TokenRequest::default()
        };
        let shown = format!("{request:?}");
        assert!(!shown.contains("secret"), "{shown}");
        let basic = BasicCredentials {
            client_id: "id".into(),
            secret: "dh_cs_secret".into(),
        };
        assert!(!format!("{basic:?}").contains("secret\""));
        assert!(!format!("{basic:?}").contains("dh_cs_"));
    }
}
