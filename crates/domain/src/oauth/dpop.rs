//! DPoP (RFC 9449) around the pure proof checks of `deckhand_auth`: the server clock, and the
//! single use of each proof id per key, shared by every instance through the store.

use deckhand_auth::{CheckedProof, ProofTarget, check_proof, sha256};
use time::{Duration, OffsetDateTime};

use super::ports::OAuthRepository;

/// How long a proof id stays spent for its key: well past the 60 s `iat` window either way,
/// so a proof can never be accepted twice.
pub const JTI_LIFETIME: Duration = Duration::minutes(5);

/// A `DPoP` proof header with the request it came with.
#[derive(Clone, PartialEq, Eq)]
pub struct PresentedProof {
    /// The compact JWS, as sent.
    pub proof: String,
    /// The request's method.
    pub method: String,
    /// `DECKHAND_PUBLIC_URL` + the request's path: what `htu` must name.
    pub uri: String,
}

impl std::fmt::Debug for PresentedProof {
    // A proof is a credential until it expires or is spent: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PresentedProof")
            .field("method", &self.method)
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

/// Why a proof was refused; the text is the `error_description`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProofRefused(pub String);

impl From<deckhand_auth::ProofError> for ProofRefused {
    fn from(error: deckhand_auth::ProofError) -> Self {
        Self(error.to_string())
    }
}

impl PresentedProof {
    /// The pure checks (form, signature, `htm`, `htu`, `iat`, and `ath` when `access_token` is
    /// given) at `now`. The `jti` is not recorded: see [`spend_jti`].
    pub(crate) fn check(
        &self,
        access_token: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<CheckedProof, ProofRefused> {
        let target = ProofTarget {
            method: &self.method,
            uri: &self.uri,
            now_unix: now.unix_timestamp(),
            access_token,
        };
        Ok(check_proof(&self.proof, &target)?)
    }
}

/// Spends the proof's `jti` for its key. Call it last, once every other check has passed, so
/// a proof that fails anything else cannot burn its id. `Ok(Err(..))` for a replay.
pub(crate) async fn spend_jti(
    repository: &dyn OAuthRepository,
    proof: &CheckedProof,
    now: OffsetDateTime,
) -> anyhow::Result<Result<(), ProofRefused>> {
    let fresh = repository
        .record_dpop_proof_once(
            &proof.jkt,
            &sha256(proof.jti.as_bytes()),
            now,
            now + JTI_LIFETIME,
        )
        .await?;
    Ok(if fresh {
        Ok(())
    } else {
        Err(ProofRefused(
            "this proof's jti was used already with this key".into(),
        ))
    })
}

/// Whether a proof by the key `presented` may act for a grant bound to `bound`.
pub(crate) fn key_matches(bound: Option<&str>, presented: &str) -> Result<(), ProofRefused> {
    match bound {
        Some(bound) if bound == presented => Ok(()),
        Some(_) => Err(ProofRefused(
            "the proof's key is not the key the token is bound to".into(),
        )),
        None => Err(ProofRefused(
            "the token is not bound to a DPoP key; send it as Bearer".into(),
        )),
    }
}
