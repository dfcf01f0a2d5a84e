use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::digest;

/// The kinds of opaque secrets the service issues. The prefix tells a reader (and a secret
/// scanner) what a leaked string is, and lets the request authenticator pick a lane without a
/// database lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    PersonalAccessToken,
    PartnerApiKey,
    AccessToken,
    RefreshToken,
    AuthorizationCode,
    ClientSecret,
    PartnerSecret,
    /// The sign-in session cookie of the OAuth consent page.
    SessionCookie,
    /// The cookie the consent page's CSRF token is bound to.
    CsrfCookie,
}

impl TokenKind {
    pub const fn prefix(self) -> &'static str {
        match self {
            Self::PersonalAccessToken => "dh_pat_",
            Self::PartnerApiKey => "dh_key_",
            Self::AccessToken => "dh_at_",
            Self::RefreshToken => "dh_rt_",
            Self::AuthorizationCode => "dh_ac_",
            Self::ClientSecret => "dh_cs_",
            Self::PartnerSecret => "dh_ps_",
            Self::SessionCookie => "dh_ss_",
            Self::CsrfCookie => "dh_cf_",
        }
    }

    /// Whether `token` has this kind's prefix followed by the 43 base64url characters of 32
    /// random bytes. A cheap syntactic check that spares the store malformed lookups.
    pub fn is_well_formed(self, token: &str) -> bool {
        token.strip_prefix(self.prefix()).is_some_and(|body| {
            body.len() == ENCODED_LEN
                && body
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
    }

    /// The hash to look `token` up by, when it is well formed for this kind: a token of
    /// another shape is refused before any lookup, so the store never sees it.
    pub fn lookup_hash(self, token: &str) -> Option<TokenHash> {
        self.is_well_formed(token).then(|| TokenHash::of(token))
    }
}

/// Length of 32 bytes in unpadded base64url.
const ENCODED_LEN: usize = 43;

/// A new secret of `kind` from 32 random bytes: the prefix plus 43 base64url characters.
pub fn mint_token(kind: TokenKind, random_bytes: &[u8; 32]) -> String {
    let mut token = String::with_capacity(kind.prefix().len() + ENCODED_LEN);
    token.push_str(kind.prefix());
    URL_SAFE_NO_PAD.encode_string(random_bytes, &mut token);
    token
}

/// The SHA-256 of a token, which is all the store keeps. Tokens carry 256 bits of entropy, so a
/// fast unsalted hash is enough: nothing can be guessed from it, and it can be looked up by
/// equality.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHash(pub [u8; 32]);

impl TokenHash {
    pub fn of(token: &str) -> Self {
        Self(sha256(token.as_bytes()))
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Debug for TokenHash {
    // Even a hash is not printed whole: logs never need more than a hint.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TokenHash({:02x}{:02x}..)", self.0[0], self.0[1])
    }
}

/// Whether two byte strings are equal, in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest::digest(&digest::SHA256, bytes).as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_have_prefix_and_43_url_safe_characters() {
        let token = mint_token(TokenKind::PersonalAccessToken, &[0xfb; 32]);
        assert!(token.starts_with("dh_pat_"));
        assert_eq!(token.len(), "dh_pat_".len() + 43);
        assert!(TokenKind::PersonalAccessToken.is_well_formed(&token));
        assert!(!TokenKind::PartnerApiKey.is_well_formed(&token));
    }

    #[test]
    fn malformed_tokens_are_recognised() {
        let token = mint_token(TokenKind::PersonalAccessToken, &[7; 32]);
        assert!(!TokenKind::PersonalAccessToken.is_well_formed(&token[..token.len() - 1]));
        assert!(!TokenKind::PersonalAccessToken.is_well_formed(&format!("{token}x")));
        let with_bad_char = format!("dh_pat_{}", "+".repeat(43));
        assert!(!TokenKind::PersonalAccessToken.is_well_formed(&with_bad_char));
    }

    #[test]
    fn only_well_formed_tokens_get_a_hash_to_look_up() {
        let token = mint_token(TokenKind::PartnerApiKey, &[9; 32]);
        let hash = TokenKind::PartnerApiKey.lookup_hash(&token).unwrap();
        assert_eq!(hash.0, TokenHash::of(&token).0);
        assert!(TokenKind::PersonalAccessToken.lookup_hash(&token).is_none());
        assert!(TokenKind::PartnerApiKey.lookup_hash(&token[1..]).is_none());
    }

    #[test]
    fn hash_is_sha256_of_the_whole_token() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        let expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let hex: String = TokenHash::of("abc")
            .0
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, expected);
    }

    #[test]
    fn constant_time_eq_compares_whole_strings() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn debug_output_does_not_reveal_the_hash() {
        let shown = format!("{:?}", TokenHash::of("secret"));
        assert!(shown.len() < 20, "{shown}");
    }
}
