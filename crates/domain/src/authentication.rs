//! Authentication of a request: its credentials, on whichever lane they select, become the
//! principal it acts as. It stands above the identity and OAuth modules and calls both: the
//! personal-token and partner lanes are [`IdentityService`]'s, the Bearer and DPoP lanes the
//! OAuth server's (`oauth::authenticate_bearer`, `oauth::authenticate_dpop`).

use std::sync::Arc;

use crate::identity::{
    AuthError, IdentityService, LaneCredentials, PresentedCredentials, Principal, RequestFacts,
};
use crate::oauth::{self, OAuthRepository, PresentedProof};
use crate::system::Clock;

/// Turns a request's credentials into its principal.
#[derive(Clone)]
pub struct Authenticator {
    identity: IdentityService,
    oauth: Arc<dyn OAuthRepository>,
    clock: Arc<dyn Clock>,
}

impl Authenticator {
    pub fn new(
        identity: IdentityService,
        oauth: Arc<dyn OAuthRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            identity,
            oauth,
            clock,
        }
    }

    /// The principal a request acts as. Anonymous requests are a principal too; whether an
    /// endpoint accepts them is [`Principal::authorize`]'s question. `facts` are what a partner
    /// signature covers and what a DPoP proof names; other lanes ignore them.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(
        &self,
        credentials: &PresentedCredentials,
        facts: &RequestFacts,
    ) -> Result<Principal, AuthError> {
        let lane = credentials.lane().map_err(|_| {
            if credentials.lacks_dpop_proof() {
                AuthError::InvalidDpopProof("the DPoP header with the proof is missing".to_owned())
            } else {
                AuthError::Failed
            }
        })?;
        match lane {
            LaneCredentials::OAuthBearer(token) => {
                oauth::authenticate_bearer(self.oauth.as_ref(), &token, self.clock.now()).await
            }
            LaneCredentials::OAuthDpop {
                access_token,
                proof,
            } => {
                let proof = PresentedProof {
                    proof,
                    method: facts.method.clone(),
                    uri: facts.public_uri.clone(),
                };
                oauth::authenticate_dpop(
                    self.oauth.as_ref(),
                    &access_token,
                    &proof,
                    self.clock.now(),
                )
                .await
            }
            lane => self.identity.authenticate_lane(lane, facts).await,
        }
    }
}
