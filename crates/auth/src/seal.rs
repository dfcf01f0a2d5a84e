//! Secrets that must be read back (partner HMAC secrets) are sealed with AES-256-GCM under the
//! service's secret key. The stored form is `nonce (12 bytes) || ciphertext || tag`; the
//! associated data binds a sealed secret to its owner, so a row copied onto another partner
//! does not open.

use ring::aead;

/// The 32-byte key that seals secrets at rest. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SealingKey(pub [u8; 32]);

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKey(..)")
    }
}

const NONCE_LEN: usize = aead::NONCE_LEN;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("sealing failed")]
    Seal,
    /// Wrong key, wrong associated data, or a damaged ciphertext.
    #[error("the sealed secret does not open with this key")]
    Open,
}

fn key(key: &SealingKey) -> Result<aead::LessSafeKey, SealError> {
    aead::UnboundKey::new(&aead::AES_256_GCM, &key.0)
        .map(aead::LessSafeKey::new)
        .map_err(|_| SealError::Seal)
}

/// Seals `plaintext` with a fresh `nonce` (12 random bytes; never reuse one under a key).
pub fn seal(
    sealing_key: &SealingKey,
    nonce: [u8; NONCE_LEN],
    associated_data: &[u8],
    plaintext: &[u8],
) -> Result<Vec<u8>, SealError> {
    let mut in_out = plaintext.to_vec();
    key(sealing_key)?
        .seal_in_place_append_tag(
            aead::Nonce::assume_unique_for_key(nonce),
            aead::Aad::from(associated_data),
            &mut in_out,
        )
        .map_err(|_| SealError::Seal)?;
    let mut sealed = Vec::with_capacity(NONCE_LEN + in_out.len());
    sealed.extend_from_slice(&nonce);
    sealed.extend_from_slice(&in_out);
    Ok(sealed)
}

/// Opens what [`seal`] produced with the same key and associated data.
pub fn open(
    sealing_key: &SealingKey,
    associated_data: &[u8],
    sealed: &[u8],
) -> Result<Vec<u8>, SealError> {
    if sealed.len() < NONCE_LEN + aead::AES_256_GCM.tag_len() {
        return Err(SealError::Open);
    }
    let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
    let nonce = aead::Nonce::try_assume_unique_for_key(nonce).map_err(|_| SealError::Open)?;
    let mut in_out = ciphertext.to_vec();
    let plaintext = key(sealing_key)?
        .open_in_place(nonce, aead::Aad::from(associated_data), &mut in_out)
        .map_err(|_| SealError::Open)?;
    Ok(plaintext.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_only_with_their_key_and_owner() {
        let key = SealingKey([7; 32]);
        let sealed = seal(&key, [1; 12], b"acme", b"dh_ps_secret").unwrap();
        assert!(!sealed.windows(12).any(|w| w == b"dh_ps_secret"));
        assert_eq!(open(&key, b"acme", &sealed).unwrap(), b"dh_ps_secret");
        assert_eq!(open(&key, b"evil", &sealed), Err(SealError::Open));
        assert_eq!(
            open(&SealingKey([8; 32]), b"acme", &sealed),
            Err(SealError::Open)
        );
        let mut damaged = sealed.clone();
        damaged[20] ^= 1;
        assert_eq!(open(&key, b"acme", &damaged), Err(SealError::Open));
        assert_eq!(open(&key, b"acme", &sealed[..20]), Err(SealError::Open));
    }

    #[test]
    fn the_key_is_never_printed() {
        assert_eq!(format!("{:?}", SealingKey([9; 32])), "SealingKey(..)");
    }
}
