use deckhand_domain::Services;

use crate::metrics::Metrics;
use crate::routes::RouteIndex;

/// What handlers share: the domain services, adapter settings and the metrics registry.
pub struct HttpState {
    pub services: Services,
    pub config: HttpConfig,
    pub metrics: Metrics,
    pub(crate) routes: RouteIndex,
}

/// Settings of the HTTP adapter.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The externally visible base URL, without a trailing slash (pagination links, DPoP
    /// `htu`, the OAuth issuer).
    pub public_url: String,
}

impl HttpState {
    pub fn new(services: Services, config: HttpConfig) -> anyhow::Result<Self> {
        Ok(Self {
            services,
            config,
            metrics: Metrics::new()?,
            routes: RouteIndex::from_openapi(&crate::openapi::document()),
        })
    }
}
