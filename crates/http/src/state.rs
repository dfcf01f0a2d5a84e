use std::collections::BTreeMap;

use deckhand_domain::Services;
use deckhand_domain::identity::Principal;
use deckhand_domain::routing::{Database, ReadRouter};

use crate::export_cache::MokaExportCache;
use crate::metrics::Metrics;
use crate::rate_limit::RateLimits;
use crate::revoked_uses::RevokedTokenUses;

/// What handlers share: the domain services, adapter settings and the metrics registry.
pub struct HttpState {
    /// The primary's services: writes, credentials, OAuth, and reads no replica may serve.
    pub services: Services,
    /// Every database's services and the rule that picks one for a read (`route_read`).
    pub router: ReadRouter,
    pub config: HttpConfig,
    pub metrics: Metrics,
    /// Renders of stored decks for the text export, per instance (see [`crate::export_cache`]).
    pub export_cache: MokaExportCache,
    pub(crate) rate_limits: RateLimits,
    /// Uses of revoked OAuth tokens per client IP (see [`crate::revoked_uses`]).
    pub(crate) revoked_uses: RevokedTokenUses,
}

/// Settings of the HTTP adapter.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The externally visible base URL, without a trailing slash (pagination links, DPoP
    /// `htu`, the OAuth issuer).
    pub public_url: String,
    /// Requests per minute by tier (`anonymous`, `user`, `partner`, partners' own tiers);
    /// `None` turns rate limits off.
    pub rate_limits: Option<BTreeMap<String, u32>>,
    /// Proxies whose `X-Forwarded-For` is believed (see [`crate::client_ip`]).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// How long a client has to send a request body once its head has arrived (the server
    /// gives it as long for the head): a slower body is a 408.
    pub body_timeout: std::time::Duration,
}

impl HttpConfig {
    pub const DEFAULT_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

    /// The contract's default quotas and no trusted proxies.
    pub fn new(public_url: impl Into<String>) -> Self {
        Self {
            public_url: public_url.into(),
            rate_limits: Some(Self::default_rate_limits()),
            trusted_proxies: Vec::new(),
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
        }
    }

    /// `anonymous=120,user=1200,partner=6000` per minute.
    pub fn default_rate_limits() -> BTreeMap<String, u32> {
        [("anonymous", 120), ("user", 1200), ("partner", 6000)]
            .into_iter()
            .map(|(tier, quota)| (tier.to_owned(), quota))
            .collect()
    }
}

impl HttpState {
    /// One database, the primary, for everything.
    pub fn new(services: Services, config: HttpConfig) -> anyhow::Result<Self> {
        Self::routed(ReadRouter::primary_only(services), config)
    }

    /// The databases of `router`, reads a replica may serve routed by it.
    pub fn routed(router: ReadRouter, config: HttpConfig) -> anyhow::Result<Self> {
        Ok(Self {
            rate_limits: RateLimits::new(config.rate_limits.as_ref()),
            revoked_uses: RevokedTokenUses::new(config.rate_limits.is_some()),
            services: router.primary().clone(),
            router,
            config,
            metrics: Metrics::new()?,
            export_cache: MokaExportCache::default(),
        })
    }
}

impl HttpState {
    /// The database that answers a read a replica may serve, for `principal`; counted in
    /// `/metrics` as a read of that database.
    pub(crate) fn route_read(&self, principal: &Principal) -> Database {
        let database = self.router.route_read(principal);
        self.metrics.read_on(database);
        database
    }

    /// The services of `database`.
    pub(crate) fn services_on(&self, database: Database) -> &Services {
        self.router.services(database)
    }
}
