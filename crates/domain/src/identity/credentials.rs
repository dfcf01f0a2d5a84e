//! Which lane a request's credentials select. The HTTP adapter only copies headers into
//! [`PresentedCredentials`]; the rules about which combinations are accepted live here.

use deckhand_auth::TokenKind;

/// The `Authorization` header, by scheme.
#[derive(Clone, PartialEq, Eq)]
pub enum AuthorizationHeader {
    Bearer(String),
    Dpop(String),
    /// Any other scheme, or a header that is not `<scheme> <credentials>`.
    Unsupported,
}

impl AuthorizationHeader {
    /// Schemes are case-insensitive (RFC 9110 §11.1); the credentials are kept as sent.
    pub fn parse(value: &str) -> Self {
        let Some((scheme, credentials)) = value.split_once(' ') else {
            return Self::Unsupported;
        };
        let credentials = credentials.trim();
        if credentials.is_empty() || credentials.contains(' ') {
            return Self::Unsupported;
        }
        if scheme.eq_ignore_ascii_case("bearer") {
            Self::Bearer(credentials.to_owned())
        } else if scheme.eq_ignore_ascii_case("dpop") {
            Self::Dpop(credentials.to_owned())
        } else {
            Self::Unsupported
        }
    }
}

/// The credential headers of one request, as sent.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct PresentedCredentials {
    pub authorization: Option<AuthorizationHeader>,
    pub dpop_proof: Option<String>,
    pub partner_id: Option<String>,
    pub signature: Option<String>,
    pub api_key: Option<String>,
}

/// The credentials of exactly one accepted combination.
#[derive(Clone, PartialEq, Eq)]
pub enum LaneCredentials {
    Anonymous,
    PersonalAccessToken(String),
    PartnerSignature {
        partner_id: String,
        signature: String,
    },
    PartnerSignatureWithPat {
        partner_id: String,
        signature: String,
        pat: String,
    },
    PartnerApiKey(String),
    OAuthBearer(String),
    OAuthDpop {
        access_token: String,
        proof: String,
    },
}

// Tokens, API keys, signatures and proofs are credentials: Debug (and so any log or panic
// message) names which were sent, never what they hold.

impl std::fmt::Debug for AuthorizationHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bearer(_) => f.write_str("Bearer(..)"),
            Self::Dpop(_) => f.write_str("Dpop(..)"),
            Self::Unsupported => f.write_str("Unsupported"),
        }
    }
}

impl std::fmt::Debug for PresentedCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PresentedCredentials")
            .field("authorization", &self.authorization)
            .field("dpop_proof", &self.dpop_proof.is_some())
            .field("partner_id", &self.partner_id)
            .field("signature", &self.signature.is_some())
            .field("api_key", &self.api_key.is_some())
            .finish()
    }
}

impl std::fmt::Debug for LaneCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Anonymous => f.write_str("Anonymous"),
            Self::PersonalAccessToken(_) => f.write_str("PersonalAccessToken(..)"),
            Self::PartnerSignature { partner_id, .. } => f
                .debug_struct("PartnerSignature")
                .field("partner_id", partner_id)
                .finish_non_exhaustive(),
            Self::PartnerSignatureWithPat { partner_id, .. } => f
                .debug_struct("PartnerSignatureWithPat")
                .field("partner_id", partner_id)
                .finish_non_exhaustive(),
            Self::PartnerApiKey(_) => f.write_str("PartnerApiKey(..)"),
            Self::OAuthBearer(_) => f.write_str("OAuthBearer(..)"),
            Self::OAuthDpop { .. } => f.write_str("OAuthDpop { .. }"),
        }
    }
}

/// The credentials are not one of the accepted combinations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this combination of credentials is not accepted")]
pub struct RejectedCombination;

impl PresentedCredentials {
    /// Picks the lane. Accepted: nothing; PAT; signature + slug; signature + slug + PAT; API
    /// key; OAuth Bearer; OAuth DPoP with its proof. Everything else is rejected, including a
    /// slug without a signature (or the reverse) and a stray DPoP proof.
    pub fn lane(&self) -> Result<LaneCredentials, RejectedCombination> {
        let signature = match (&self.partner_id, &self.signature) {
            (Some(partner_id), Some(signature)) => Some((partner_id.clone(), signature.clone())),
            (None, None) => None,
            _ => return Err(RejectedCombination),
        };
        let is_pat = |token: &str| token.starts_with(TokenKind::PersonalAccessToken.prefix());
        let lane = match (
            &self.authorization,
            signature,
            &self.api_key,
            &self.dpop_proof,
        ) {
            (None, None, None, None) => LaneCredentials::Anonymous,
            (Some(AuthorizationHeader::Bearer(token)), None, None, None) if is_pat(token) => {
                LaneCredentials::PersonalAccessToken(token.clone())
            }
            (Some(AuthorizationHeader::Bearer(token)), None, None, None) => {
                LaneCredentials::OAuthBearer(token.clone())
            }
            (None, Some((partner_id, signature)), None, None) => {
                LaneCredentials::PartnerSignature {
                    partner_id,
                    signature,
                }
            }
            (
                Some(AuthorizationHeader::Bearer(token)),
                Some((partner_id, signature)),
                None,
                None,
            ) if is_pat(token) => LaneCredentials::PartnerSignatureWithPat {
                partner_id,
                signature,
                pat: token.clone(),
            },
            (None, None, Some(key), None) => LaneCredentials::PartnerApiKey(key.clone()),
            (Some(AuthorizationHeader::Dpop(token)), None, None, Some(proof)) => {
                LaneCredentials::OAuthDpop {
                    access_token: token.clone(),
                    proof: proof.clone(),
                }
            }
            _ => return Err(RejectedCombination),
        };
        Ok(lane)
    }

    /// The DPoP scheme with nothing else but no `DPoP` header: the DPoP lane with its proof
    /// missing, which RFC 9449 and the contract answer with the DPoP challenge like any other
    /// bad proof (it is still a rejected combination: [`Self::lane`] refuses it).
    pub fn lacks_dpop_proof(&self) -> bool {
        matches!(self.authorization, Some(AuthorizationHeader::Dpop(_)))
            && self.dpop_proof.is_none()
            && self.partner_id.is_none()
            && self.signature.is_none()
            && self.api_key.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAT: &str = "dh_pat_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn bearer(token: &str) -> Option<AuthorizationHeader> {
        Some(AuthorizationHeader::Bearer(token.into()))
    }

    #[test]
    fn authorization_schemes_are_case_insensitive() {
        assert_eq!(
            AuthorizationHeader::parse("bearer abc"),
            AuthorizationHeader::Bearer("abc".into())
        );
        assert_eq!(
            AuthorizationHeader::parse("DPoP abc"),
            AuthorizationHeader::Dpop("abc".into())
        );
        assert_eq!(
            AuthorizationHeader::parse("Basic abc"),
            AuthorizationHeader::Unsupported
        );
        assert_eq!(
            AuthorizationHeader::parse("Bearer"),
            AuthorizationHeader::Unsupported
        );
        assert_eq!(
            AuthorizationHeader::parse("Bearer a b"),
            AuthorizationHeader::Unsupported
        );
    }

    #[test]
    fn accepted_combinations_select_their_lane() {
        let none = PresentedCredentials::default();
        assert_eq!(none.lane(), Ok(LaneCredentials::Anonymous));

        let pat = PresentedCredentials {
            authorization: bearer(PAT),
            ..Default::default()
        };
        assert_eq!(
            pat.lane(),
            Ok(LaneCredentials::PersonalAccessToken(PAT.into()))
        );

        let oauth = PresentedCredentials {
            authorization: bearer("dh_at_x"),
            ..Default::default()
        };
        assert_eq!(
            oauth.lane(),
            Ok(LaneCredentials::OAuthBearer("dh_at_x".into()))
        );

        let signed = PresentedCredentials {
            partner_id: Some("acme".into()),
            signature: Some("v1.1.ab".into()),
            ..Default::default()
        };
        assert!(matches!(
            signed.lane(),
            Ok(LaneCredentials::PartnerSignature { .. })
        ));

        let signed_with_pat = PresentedCredentials {
            authorization: bearer(PAT),
            ..signed.clone()
        };
        assert!(matches!(
            signed_with_pat.lane(),
            Ok(LaneCredentials::PartnerSignatureWithPat { .. })
        ));

        let dpop = PresentedCredentials {
            authorization: Some(AuthorizationHeader::Dpop("dh_at_x".into())),
            dpop_proof: Some("proof".into()),
            ..Default::default()
        };
        assert!(matches!(dpop.lane(), Ok(LaneCredentials::OAuthDpop { .. })));
    }

    #[test]
    fn other_combinations_are_rejected() {
        let key = Some("dh_key_x".to_owned());
        let rejected = [
            PresentedCredentials {
                partner_id: Some("acme".into()),
                ..Default::default()
            },
            PresentedCredentials {
                signature: Some("v1.1.ab".into()),
                ..Default::default()
            },
            PresentedCredentials {
                api_key: key.clone(),
                authorization: bearer(PAT),
                ..Default::default()
            },
            PresentedCredentials {
                api_key: key,
                partner_id: Some("acme".into()),
                signature: Some("v1.1.ab".into()),
                ..Default::default()
            },
            PresentedCredentials {
                authorization: bearer("dh_at_x"),
                partner_id: Some("acme".into()),
                signature: Some("v1.1.ab".into()),
                ..Default::default()
            },
            PresentedCredentials {
                authorization: Some(AuthorizationHeader::Dpop("dh_at_x".into())),
                ..Default::default()
            },
            PresentedCredentials {
                dpop_proof: Some("proof".into()),
                ..Default::default()
            },
            PresentedCredentials {
                authorization: Some(AuthorizationHeader::Unsupported),
                ..Default::default()
            },
        ];
        for credentials in rejected {
            assert_eq!(
                credentials.lane(),
                Err(RejectedCombination),
                "{credentials:?}"
            );
        }
    }

    #[test]
    fn debug_never_prints_a_credential() {
        let presented = PresentedCredentials {
            authorization: Some(AuthorizationHeader::Dpop("dh_at_secret1".into())),
            dpop_proof: Some("eyJsecret2".into()),
            partner_id: Some("acme".into()),
            signature: Some("v1.1.secret3".into()),
            api_key: Some("dh_key_secret4".into()),
        };
        let lanes = [
            LaneCredentials::PersonalAccessToken("dh_pat_secret1".into()),
            LaneCredentials::PartnerSignatureWithPat {
                partner_id: "acme".into(),
                signature: "v1.1.secret2".into(),
                pat: "dh_pat_secret3".into(),
            },
            LaneCredentials::PartnerApiKey("dh_key_secret4".into()),
            LaneCredentials::OAuthBearer("dh_at_secret5".into()),
            LaneCredentials::OAuthDpop {
                access_token: "dh_at_secret6".into(),
                proof: "eyJsecret7".into(),
            },
        ];
        let printed = format!("{presented:?} {lanes:?} {:?}", bearer("dh_at_secret8"));
        assert!(!printed.contains("secret"), "{printed}");
        assert!(printed.contains("acme"), "{printed}");
    }

    #[test]
    fn only_the_dpop_scheme_alone_lacks_a_proof() {
        let dpop = Some(AuthorizationHeader::Dpop("dh_at_x".into()));
        let alone = PresentedCredentials {
            authorization: dpop.clone(),
            ..Default::default()
        };
        assert!(alone.lacks_dpop_proof());
        let with_proof = PresentedCredentials {
            dpop_proof: Some(String::new()),
            ..alone.clone()
        };
        assert!(!with_proof.lacks_dpop_proof());
        let with_key = PresentedCredentials {
            api_key: Some("dh_key_x".into()),
            ..alone
        };
        assert!(!with_key.lacks_dpop_proof());
        let bearer = PresentedCredentials {
            authorization: bearer("dh_at_x"),
            ..Default::default()
        };
        assert!(!bearer.lacks_dpop_proof());
    }
}
