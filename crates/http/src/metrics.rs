//! Prometheus metrics: requests by route and status, a latency histogram, pool use, the
//! webhook deliveries of this instance by outcome with the shared queue's depth and age, and
//! the reads routed to each database with each replica's lag.

use std::time::Duration;

use actix_web::http::StatusCode;
use deckhand_domain::ports::PoolStatus;
use deckhand_domain::routing::Database;
use deckhand_domain::webhooks::DeliveryResult;
use deckhand_domain::webhooks::ports::QueueStats;
use prometheus::{
    Encoder as _, Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounter, IntCounterVec,
    IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    pool: IntGaugeVec,
    webhook_deliveries: IntCounterVec,
    webhook_queue: IntGauge,
    webhook_oldest: Gauge,
    reads: IntCounterVec,
    /// `reads` of the primary, looked up once: most reads are routed there.
    primary_reads: IntCounter,
    replica_lag: GaugeVec,
    feed_waits: IntGauge,
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
        let webhook_deliveries = IntCounterVec::new(
            Opts::new(
                "deckhand_webhook_deliveries_total",
                "Webhook delivery attempts made by this instance, by outcome (succeeded, retrying, failed; skipped: the partner may not read the event)",
            ),
            &["outcome"],
        )?;
        for outcome in DeliveryResult::ALL {
            webhook_deliveries.with_label_values(&[outcome.as_str()]);
        }
        let webhook_queue = IntGauge::new(
            "deckhand_webhook_queue_depth",
            "Pending webhook deliveries of enabled endpoints, across instances",
        )?;
        let webhook_oldest = Gauge::new(
            "deckhand_webhook_oldest_pending_seconds",
            "Age of the oldest pending webhook delivery (0 when none)",
        )?;
        let reads = IntCounterVec::new(
            Opts::new(
                "deckhand_db_reads_total",
                "Reads a replica may serve, by the database this instance routed them to",
            ),
            &["database"],
        )?;
        let primary_reads = reads.with_label_values(&[&Database::Primary.name()]);
        let replica_lag = GaugeVec::new(
            Opts::new(
                "deckhand_db_replica_lag_seconds",
                "How long ago the primary had written no more than each replica has replayed, as last measured (absent while a replica does not answer)",
            ),
            &["database"],
        )?;
        let feed_waits = IntGauge::new(
            "deckhand_feed_waits_held",
            "Events feed requests held by this instance waiting for news (at most DECKHAND_FEED_MAX_WAITERS)",
        )?;
        registry.register(Box::new(reads.clone()))?;
        registry.register(Box::new(replica_lag.clone()))?;
        registry.register(Box::new(feed_waits.clone()))?;
        registry.register(Box::new(pool.clone()))?;
        registry.register(Box::new(webhook_deliveries.clone()))?;
        registry.register(Box::new(webhook_queue.clone()))?;
        registry.register(Box::new(webhook_oldest.clone()))?;
        Ok(Self {
            registry,
            requests,
            latency,
            pool,
            webhook_deliveries,
            webhook_queue,
            webhook_oldest,
            reads,
            primary_reads,
            replica_lag,
            feed_waits,
        })
    }

    /// `route` is the matched pattern (never the raw path, which would explode cardinality).
    pub fn observe(&self, route: &str, method: &str, status: StatusCode, seconds: f64) {
        self.requests
            .with_label_values(&[route, method, status.as_str()])
            .inc();
        self.latency
            .with_label_values(&[route, method])
            .observe(seconds);
    }

    /// One webhook attempt of this instance came to `result`.
    pub fn webhook_delivery(&self, result: DeliveryResult) {
        self.webhook_deliveries
            .with_label_values(&[result.as_str()])
            .inc();
    }

    /// How many feed requests this instance holds now.
    pub fn feed_waits_held(&self, held: u32) {
        self.feed_waits.set(i64::from(held));
    }

    /// A read was routed to `database`.
    pub fn read_on(&self, database: Database) {
        match database {
            Database::Primary => self.primary_reads.inc(),
            Database::Replica(_) => self.reads.with_label_values(&[&database.name()]).inc(),
        }
    }

    /// `replicas`: each replica and its lag now (`None`: not answering).
    pub fn render(
        &self,
        pool: Option<PoolStatus>,
        webhooks: Option<(QueueStats, time::OffsetDateTime)>,
        replicas: &[(Database, Option<Duration>)],
    ) -> anyhow::Result<String> {
        for (replica, lag) in replicas {
            let name = replica.name();
            match lag {
                Some(lag) => self
                    .replica_lag
                    .with_label_values(&[&name])
                    .set(lag.as_secs_f64()),
                None => {
                    let _ = self.replica_lag.remove_label_values(&[&name]);
                }
            }
        }
        if let Some((stats, now)) = webhooks {
            self.webhook_queue
                .set(i64::try_from(stats.pending).unwrap_or(i64::MAX));
            let age = stats
                .oldest_pending
                .map_or(0.0, |oldest| (now - oldest).as_seconds_f64().max(0.0));
            self.webhook_oldest.set(age);
        }
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
