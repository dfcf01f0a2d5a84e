//! Errors shared by every port.

/// Marker an adapter puts inside an `anyhow::Error` when the store cannot be reached (pool
/// timeout, connection refused, connection lost). The HTTP layer answers it with 503 and
/// `Retry-After` instead of a 500, so clients know to retry.
#[derive(Debug, thiserror::Error)]
#[error("the data store is unavailable")]
pub struct StoreUnavailable;

/// Whether `error` (or anything in its chain) says the store is unavailable.
pub fn is_store_unavailable(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.is::<StoreUnavailable>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unavailability_is_found_under_context() {
        let error = anyhow::Error::new(StoreUnavailable).context("loading a user");
        assert!(is_store_unavailable(&error));
        assert!(!is_store_unavailable(&anyhow::anyhow!(
            "constraint violated"
        )));
    }
}
