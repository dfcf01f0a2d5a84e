use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("password hashing failed: {0}")]
    Hashing(String),
    #[error("the stored password hash is malformed")]
    MalformedHash,
}

/// An argon2id PHC string (the crate's default parameters) with a salt from `salt_bytes`.
pub fn hash_password(password: &str, salt_bytes: &[u8; 32]) -> Result<String, PasswordError> {
    let salt = SaltString::encode_b64(&salt_bytes[..16])
        .map_err(|e| PasswordError::Hashing(e.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| PasswordError::Hashing(e.to_string()))
}

/// Whether `password` matches the PHC string `stored` (constant-time inside argon2).
pub fn verify_password(password: &str, stored: &str) -> Result<bool, PasswordError> {
    let parsed = PasswordHash::new(stored).map_err(|_| PasswordError::MalformedHash)?;
    Ok(Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let hash = hash_password("correct horse", &[9; 32]).unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash).unwrap());
        assert!(!verify_password("correct horse!", &hash).unwrap());
    }

    #[test]
    fn a_malformed_stored_hash_is_an_error_not_a_match() {
        assert!(matches!(
            verify_password("x", "not-a-phc-string"),
            Err(PasswordError::MalformedHash)
        ));
    }
}
