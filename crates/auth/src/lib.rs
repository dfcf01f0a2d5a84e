//! Pure credential code: minting and hashing of opaque tokens, PKCE, password hashing, the partner
//! request signature (HMAC canonical string), sealing of secrets at rest (AES-256-GCM), webhook secrets and Standard Webhooks signatures, the
//! randomness they need, and the checks of DPoP proofs (RFC 9449) with the RFC 7638 key
//! thumbprint. It owns the *form* of every secret Deckhand hands out; it must never know where
//! secrets are stored or how requests carry them.

mod dpop;
mod mac;
mod password;
mod pkce;
mod random;
mod seal;
mod signature;
mod token;
mod webhook;

pub use dpop::{
    CheckedProof, DPOP_ALGS, IAT_WINDOW_SECS, MAX_PROOF_LEN, ProofError, ProofTarget,
    access_token_hash, check_proof, jwk_thumbprint, normalize_htu,
};
pub use mac::hmac_sha256;
pub use password::{PasswordError, hash_password, verify_password};
pub use pkce::{is_valid_code_verifier, is_valid_s256_challenge, s256_challenge, verify_s256};
pub use random::{OsRandom, RandomUnavailable};
pub use seal::{SealError, SealingKey, open, seal};
pub use signature::{CanonicalRequest, MalformedSignature, SignatureHeader, hex};
pub use token::{TokenHash, TokenKind, constant_time_eq, mint_token, sha256};
pub use webhook::{MalformedWebhookSecret, WebhookSecret, webhook_signature_header};
