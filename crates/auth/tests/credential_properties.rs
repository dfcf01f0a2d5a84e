//! The parsers of outside bytes in this crate, over arbitrary input: the partner signature
//! header and the token shape check answer yes or no for anything, never panic, and accept
//! exactly one spelling of each value.

use deckhand_auth::{SignatureHeader, TokenKind, hex, mint_token};
use proptest::prelude::*;

const KINDS: [TokenKind; 9] = [
    TokenKind::PersonalAccessToken,
    TokenKind::PartnerApiKey,
    TokenKind::AccessToken,
    TokenKind::RefreshToken,
    TokenKind::AuthorizationCode,
    TokenKind::ClientSecret,
    TokenKind::PartnerSecret,
    TokenKind::SessionCookie,
    TokenKind::CsrfCookie,
];

/// Strings near the header's shape: its pieces (versions, digit runs of every length, hex of
/// every case and length, signs, spaces, extra dots) recombined, besides plain arbitrary text.
fn signature_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("v1".to_owned()),
        Just("v2".to_owned()),
        Just("V1".to_owned()),
        "[0-9]{0,14}",
        "[+-][0-9]{1,11}",
        "[0-9a-f]{62,66}",
        "[0-9a-fA-F]{64}",
        "[ \\t]?[0-9a-f]{64}[ \\t]?",
        "\\PC{0,8}",
    ];
    prop_oneof![
        proptest::collection::vec(piece, 0..5).prop_map(|pieces| pieces.join(".")),
        "\\PC*",
        any::<Vec<u8>>().prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn a_signature_header_parses_only_in_its_one_spelling(value in signature_like()) {
        if let Ok(parsed) = SignatureHeader::parse(&value) {
            prop_assert_eq!(parsed.render(), value);
        }
    }

    #[test]
    fn every_rendered_signature_header_parses_back(timestamp in 0i64..100_000_000_000, mac in any::<[u8; 32]>()) {
        let header = SignatureHeader { timestamp, mac };
        let rendered = header.render();
        prop_assert_eq!(rendered.clone(), format!("v1.{timestamp}.{}", hex(&mac)));
        prop_assert_eq!(SignatureHeader::parse(&rendered), Ok(header));
    }

    #[test]
    fn the_token_shape_check_takes_anything(token in "\\PC{0,60}", kind in 0..KINDS.len()) {
        // Only the question matters: no input may panic it.
        let _ = KINDS[kind].is_well_formed(&token);
    }

    #[test]
    fn minted_tokens_are_well_formed_for_their_kind_only(bytes in any::<[u8; 32]>(), kind in 0..KINDS.len()) {
        let token = mint_token(KINDS[kind], &bytes);
        for (other, other_kind) in KINDS.iter().enumerate() {
            prop_assert_eq!(other_kind.is_well_formed(&token), other == kind);
        }
    }
}
