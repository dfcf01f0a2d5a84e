//! Errors shared by every port.

/// Marker an adapter puts inside an `anyhow::Error` when the store cannot be reached (pool
/// timeout, connection refused, connection lost). The HTTP layer answers it with 503 and
/// `Retry-After` instead of a 500, so clients know to retry.
#[derive(Debug, thiserror::Error)]
#[error("the data store is unavailable")]
pub struct StoreUnavailable;

/// The store answers but is not set up as the service's settings say (through a pooler, the
/// server's `statement_timeout` differs from `DECKHAND_DB_STATEMENT_TIMEOUT_MS`). The message
/// says what differs and how to fix it. A start that finds it stops; `StoreHealth::ping` puts
/// it in its error chain when it appears later, so readiness can report it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreMisconfigured(pub String);

/// The misconfiguration `error` (or anything in its chain) reports, if any.
pub fn misconfiguration(error: &anyhow::Error) -> Option<&StoreMisconfigured> {
    error
        .chain()
        .find_map(|cause| cause.downcast_ref::<StoreMisconfigured>())
}

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

    #[test]
    fn a_misconfiguration_is_found_under_context() {
        let error = anyhow::Error::new(StoreMisconfigured("fix it".into())).context("ping");
        assert_eq!(
            misconfiguration(&error).map(|m| m.0.as_str()),
            Some("fix it")
        );
        assert!(misconfiguration(&anyhow::anyhow!("down")).is_none());
    }
}
