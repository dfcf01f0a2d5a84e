//! The credential headers over arbitrary input: `Authorization` parses into a scheme and one
//! credential or is unsupported, and any combination of presented credentials selects exactly
//! one lane or is rejected; nothing panics.

use deckhand_domain::identity::{AuthorizationHeader, LaneCredentials, PresentedCredentials};
use proptest::prelude::*;

/// Header values: arbitrary text, and scheme + whitespace + credentials with each part bent.
fn authorization_value() -> impl Strategy<Value = String> {
    let scheme = prop_oneof![
        Just("Bearer".to_owned()),
        Just("bEaReR".to_owned()),
        Just("DPoP".to_owned()),
        Just("dpop".to_owned()),
        "[A-Za-z]{0,8}",
    ];
    let credentials = prop_oneof![
        "dh_pat_[A-Za-z0-9_-]{0,45}",
        "dh_at_[A-Za-z0-9_-]{0,45}",
        "\\PC{0,30}",
    ];
    prop_oneof![
        "\\PC{0,40}",
        (scheme, "[ \\t]{0,3}", credentials, "[ \\t]{0,2}").prop_map(
            |(scheme, gap, credentials, tail)| format!("{scheme}{gap}{credentials}{tail}")
        ),
    ]
}

fn presented() -> impl Strategy<Value = PresentedCredentials> {
    let text = || proptest::option::of("\\PC{0,20}|dh_pat_[a-z]{3}");
    (
        proptest::option::of(
            authorization_value().prop_map(|value| AuthorizationHeader::parse(&value)),
        ),
        text(),
        text(),
        text(),
        text(),
    )
        .prop_map(
            |(authorization, dpop_proof, partner_id, signature, api_key)| PresentedCredentials {
                authorization,
                dpop_proof,
                partner_id,
                signature,
                api_key,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn an_authorization_header_is_one_credential_or_unsupported(value in authorization_value()) {
        match AuthorizationHeader::parse(&value) {
            AuthorizationHeader::Bearer(credential) | AuthorizationHeader::Dpop(credential) => {
                prop_assert!(!credential.is_empty());
                prop_assert!(!credential.contains(' '), "{credential:?}");
                prop_assert_eq!(credential.trim(), credential.as_str());
                prop_assert!(value.contains(credential.as_str()));
            }
            AuthorizationHeader::Unsupported => {}
        }
    }

    #[test]
    fn a_bearer_token_reads_back_in_any_scheme_case(token in "[!-~]{1,60}", upper in any::<[bool; 6]>()) {
        let scheme: String = "bearer"
            .chars()
            .zip(upper)
            .map(|(c, upper)| if upper { c.to_ascii_uppercase() } else { c })
            .collect();
        prop_assert_eq!(
            AuthorizationHeader::parse(&format!("{scheme} {token}")),
            AuthorizationHeader::Bearer(token)
        );
    }

    #[test]
    fn presented_credentials_select_one_lane_or_are_rejected(presented in presented()) {
        let Ok(lane) = presented.lane() else {
            return Ok(());
        };
        let nothing_else = presented.dpop_proof.is_none() && presented.api_key.is_none();
        match lane {
            LaneCredentials::Anonymous => prop_assert_eq!(presented, PresentedCredentials::default()),
            LaneCredentials::PersonalAccessToken(pat) => {
                prop_assert!(pat.starts_with("dh_pat_") && nothing_else);
                prop_assert!(presented.signature.is_none() && presented.partner_id.is_none());
            }
            LaneCredentials::PartnerSignatureWithPat { pat, .. } => {
                prop_assert!(pat.starts_with("dh_pat_") && nothing_else);
            }
            LaneCredentials::PartnerSignature { partner_id, signature } => {
                prop_assert!(presented.authorization.is_none() && nothing_else);
                prop_assert_eq!(Some(partner_id), presented.partner_id);
                prop_assert_eq!(Some(signature), presented.signature);
            }
            LaneCredentials::PartnerApiKey(key) => {
                prop_assert!(presented.authorization.is_none() && presented.signature.is_none());
                prop_assert_eq!(Some(key), presented.api_key);
            }
            LaneCredentials::OAuthBearer(token) => {
                prop_assert!(!token.starts_with("dh_pat_") && nothing_else);
            }
            LaneCredentials::OAuthDpop { proof, .. } => {
                prop_assert_eq!(Some(proof), presented.dpop_proof);
                prop_assert!(presented.api_key.is_none() && presented.signature.is_none());
            }
        }
    }
}
