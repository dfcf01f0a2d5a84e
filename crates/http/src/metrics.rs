//! Prometheus metrics: requests by route and status, a latency histogram, and pool use.

use deckhand_domain::ports::PoolStatus;
use prometheus::{
    Encoder as _, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    pool: IntGaugeVec,
}

impl Metrics {
    pub fn new() -> anyhow::Result<Self> {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "deckhand_http_requests_total",
                "HTTP requests by route, method and status",
            ),
            &["route", "method", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "deckhand_http_request_duration_seconds",
                "HTTP request latency",
            )
            .buckets(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            &["route", "method"],
        )?;
        let pool = IntGaugeVec::new(
            Opts::new(
                "deckhand_db_pool_connections",
                "Database pool connections by state",
            ),
            &["state"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(pool.clone()))?;
        Ok(Self {
            registry,
            requests,
            latency,
            pool,
        })
    }

    /// `route` is the matched pattern (never the raw path, which would explode cardinality).
    pub fn observe(&self, route: &str, method: &str, status: u16, seconds: f64) {
        self.requests
            .with_label_values(&[route, method, &status.to_string()])
            .inc();
        self.latency
            .with_label_values(&[route, method])
            .observe(seconds);
    }

    pub fn render(&self, pool: Option<PoolStatus>) -> anyhow::Result<String> {
        if let Some(pool) = pool {
            let gauge = |state: &str, value: usize| {
                self.pool
                    .with_label_values(&[state])
                    .set(i64::try_from(value).unwrap_or(i64::MAX));
            };
            gauge("max", pool.max_size);
            gauge("open", pool.size);
            gauge("idle", pool.available);
            gauge("waiting", pool.waiting);
        }
        let mut out = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut out)?;
        Ok(String::from_utf8(out)?)
    }
}
