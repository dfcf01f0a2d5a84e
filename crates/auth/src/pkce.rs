//! PKCE (RFC 7636) with the S256 method only: the verifier's syntax and the challenge check.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::token::{constant_time_eq, sha256};

/// Whether `verifier` is 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
pub fn is_valid_code_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// Whether `challenge` looks like an S256 challenge: 43 base64url characters (32 bytes).
pub fn is_valid_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The S256 challenge of `verifier`: base64url(SHA-256(verifier)) without padding.
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(sha256(verifier.as_bytes()))
}

/// Whether `verifier` is well formed and hashes to `challenge`, compared in constant time.
pub fn verify_s256(verifier: &str, challenge: &str) -> bool {
    is_valid_code_verifier(verifier)
        && constant_time_eq(s256_challenge(verifier).as_bytes(), challenge.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_rfc_7636_appendix_b_example() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256_challenge(verifier), challenge);
        assert!(verify_s256(verifier, challenge));
        assert!(!verify_s256(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK",
            challenge
        ));
    }

    #[test]
    fn verifiers_are_43_to_128_unreserved_characters() {
        assert!(!is_valid_code_verifier(&"a".repeat(42)));
        assert!(is_valid_code_verifier(&"a".repeat(43)));
        assert!(is_valid_code_verifier(&"a".repeat(128)));
        assert!(!is_valid_code_verifier(&"a".repeat(129)));
        assert!(!is_valid_code_verifier(&format!("{}+", "a".repeat(43))));
        // A short verifier never matches, even its own challenge.
        let short = "a".repeat(42);
        assert!(!verify_s256(&short, &s256_challenge(&short)));
    }

    #[test]
    fn challenges_are_43_base64url_characters() {
        assert!(is_valid_s256_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!is_valid_s256_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c"
        ));
        assert!(!is_valid_s256_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM"
        ));
    }
}
