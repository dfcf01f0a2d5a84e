use ring::rand::{SecureRandom, SystemRandom};

/// The operating system's CSPRNG.
#[derive(Debug)]
pub struct OsRandom(SystemRandom);

impl Default for OsRandom {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the operating system's random number generator failed")]
pub struct RandomUnavailable;

impl OsRandom {
    pub fn new() -> Self {
        Self(SystemRandom::new())
    }

    pub fn bytes32(&self) -> Result<[u8; 32], RandomUnavailable> {
        let mut out = [0u8; 32];
        self.0.fill(&mut out).map_err(|_| RandomUnavailable)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_draws_differ() {
        let random = OsRandom::new();
        assert_ne!(random.bytes32().unwrap(), random.bytes32().unwrap());
    }
}
