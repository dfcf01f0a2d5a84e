//! The webhook ports. See the crate's error contract in [`crate::ports`].
//!
//! Every method of [`WebhookRepository`] is one transaction. Methods taking a `partner` see
//! only that partner's endpoints: another partner's id reads as absent.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{
    AttemptOutcome, AttemptRecord, Delivery, DeliveryId, Endpoint, EndpointChanges, WebhookId,
};
use crate::identity::{GameScopes, Scopes, UserId};

#[derive(Debug, thiserror::Error)]
pub enum CreateEndpointError {
    /// The partner already has [`super::MAX_ENDPOINTS_PER_PARTNER`] endpoints.
    #[error("the partner has as many webhook endpoints as it may")]
    TooMany,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// The partner behind an endpoint as it is now: what it alone may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookOwner {
    pub created_by: UserId,
    pub scopes: Scopes,
    pub game_scopes: GameScopes,
    pub active: bool,
}

/// A delivery claimed for one attempt, with its endpoint and the endpoint's partner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub delivery: Delivery,
    pub endpoint: Endpoint,
    pub owner: WebhookOwner,
}

/// The delivery queue as `/metrics` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueStats {
    /// Pending deliveries of enabled endpoints.
    pub pending: u64,
    /// When the oldest of them was made.
    pub oldest_pending: Option<OffsetDateTime>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookRepository: Send + Sync {
    /// Stores a new endpoint unless its partner has [`super::MAX_ENDPOINTS_PER_PARTNER`]
    /// already (`TooMany`), decided atomically against concurrent creates.
    async fn create(&self, endpoint: &Endpoint) -> Result<(), CreateEndpointError>;

    /// The partner's endpoints, oldest first.
    async fn list(&self, partner: &str) -> anyhow::Result<Vec<Endpoint>>;

    async fn find(&self, partner: &str, id: WebhookId) -> anyhow::Result<Option<Endpoint>>;

    /// Every endpoint, or `partner`'s, by partner then oldest first (for operators).
    async fn list_all(&self, partner: Option<String>) -> anyhow::Result<Vec<Endpoint>>;

    /// Disables the endpoint as an operator ([`super::DisabledReason::Operator`]), whoever its
    /// partner; `None` when there is none. None of its pending deliveries is claimed after this.
    async fn disable(&self, id: WebhookId) -> anyhow::Result<Option<Endpoint>>;

    /// Applies `changes`; enabling clears `disabled_reason` and the failure count.
    async fn update(
        &self,
        partner: &str,
        id: WebhookId,
        changes: &EndpointChanges,
    ) -> anyhow::Result<Option<Endpoint>>;

    /// Deletes the endpoint and its deliveries; whether there was one.
    async fn delete(&self, partner: &str, id: WebhookId) -> anyhow::Result<bool>;

    /// Makes `sealed` the secret; the current one becomes the previous, signing until
    /// `previous_until`. One statement, so two rotations never lose a secret in between.
    async fn rotate_secret(
        &self,
        partner: &str,
        id: WebhookId,
        sealed: Vec<u8>,
        previous_until: OffsetDateTime,
    ) -> anyhow::Result<Option<Endpoint>>;

    /// Queues `ping` (a delivery made outside the event log) unless a ping is pending for its
    /// endpoint already, decided atomically against concurrent pings: returns the pending ping
    /// (the oldest, should a manual retry have made two pending) or `ping` as queued.
    async fn enqueue_ping(&self, ping: &Delivery) -> anyhow::Result<Delivery>;

    /// The endpoint's deliveries, newest first, after (older than) `after`; `None` when the
    /// partner has no such endpoint.
    async fn deliveries(
        &self,
        partner: &str,
        id: WebhookId,
        limit: u32,
        after: Option<DeliveryId>,
    ) -> anyhow::Result<Option<Vec<Delivery>>>;

    /// Makes the delivery pending and due at `now`. A delivery that had ended gets one more
    /// attempt: its `retries_used` becomes [`super::ONE_MORE_ATTEMPT`]. A lease is kept: a
    /// delivery being attempted right now is not claimed a second time beside that attempt
    /// (nor past its endpoint's share), and that attempt's record decides what follows.
    /// Whether there was such a delivery.
    async fn retry(
        &self,
        partner: &str,
        id: WebhookId,
        delivery: DeliveryId,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Dispatch: in one transaction, reads at most `limit` events after the dispatch
    /// watermark in sequence order, makes a delivery (due at `now`) for every enabled
    /// endpoint that [`Endpoint::wants`] each, and moves the watermark past them. Returns how
    /// many events it read; 0 when another instance is dispatching right now.
    async fn fan_out(&self, limit: u32, now: OffsetDateTime) -> anyhow::Result<u32>;

    /// Claims at most `limit` pending deliveries due at `now` (of enabled endpoints, and
    /// pings), each for `lease`: no other claim returns them until the lease runs out, so
    /// two instances never attempt one delivery, and one whose instance died is attempted
    /// again. Claims skip rows another transaction holds (`FOR UPDATE SKIP LOCKED`).
    ///
    /// Fair share ([`super::MAX_IN_FLIGHT_PER_ENDPOINT`]): an endpoint never has more than
    /// that many deliveries leased at `now`, counting every claim of every instance, and the
    /// claim goes round the endpoints: each endpoint's oldest due delivery comes before any
    /// endpoint's second (by due time within a round).
    async fn claim(
        &self,
        now: OffsetDateTime,
        limit: u32,
        lease: Duration,
    ) -> anyhow::Result<Vec<ClaimedDelivery>>;

    /// Writes an attempt's record, and on the endpoint the failures in a row (disabling it
    /// at [`super::DISABLE_AFTER_FAILURES`]), unless the delivery has moved on since it was
    /// claimed (another attempt was recorded). Ends the lease.
    async fn record(&self, record: &AttemptRecord) -> anyhow::Result<()>;

    /// Drops a delivery its endpoint's partner may not read (any more).
    async fn discard(&self, delivery: DeliveryId) -> anyhow::Result<()>;

    /// When a claim at `now` or later may next return something, if ever: the soonest a
    /// pending delivery falls due or a lease ends, where a delivery of an endpoint with
    /// [`super::MAX_IN_FLIGHT_PER_ENDPOINT`] leases running waits for the first of them to end
    /// (a recorded attempt ends its lease earlier and wakes the worker, `wait_for_work`).
    async fn next_due(&self, now: OffsetDateTime) -> anyhow::Result<Option<OffsetDateTime>>;

    /// Returns when there may be work: an event committed, a delivery was queued or made due
    /// (by any instance), or `timeout` passed. Woken by the store, never by polling it.
    async fn wait_for_work(&self, timeout: Duration) -> anyhow::Result<()>;

    async fn stats(&self) -> anyhow::Result<QueueStats>;

    /// Deletes at most `limit` deliveries made before `before` that are no longer pending;
    /// how many.
    async fn prune(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64>;
}

/// Looks up the addresses of a host (DNS).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AddressResolver: Send + Sync {
    async fn resolve(&self, host: &str, port: u16) -> anyhow::Result<Vec<IpAddr>>;
}

/// One webhook request, with the addresses it must connect to (those that were checked, so
/// a second lookup cannot rebind the host).
#[derive(Clone, PartialEq, Eq)]
pub struct OutgoingWebhook {
    pub url: String,
    pub host: String,
    pub addresses: Vec<SocketAddr>,
    pub webhook_id: String,
    pub timestamp: i64,
    pub signature: String,
    pub body: String,
}

impl std::fmt::Debug for OutgoingWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingWebhook")
            .field("url", &self.url)
            .field("addresses", &self.addresses)
            .field("webhook_id", &self.webhook_id)
            .finish_non_exhaustive()
    }
}

/// Sends a webhook: `POST` with `Content-Type: application/json` and the three Standard
/// Webhooks headers, no redirects followed, within the configured timeout, keeping at most
/// [`super::MAX_RESPONSE_CAPTURE`] bytes of the answer.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WebhookTransport: Send + Sync {
    async fn send(&self, request: OutgoingWebhook) -> AttemptOutcome;
}

/// Ended deliveries older than [`super::DELIVERY_RETENTION`] as a prune job's batch
/// (`pruning`).
pub struct EndedDeliveries(pub std::sync::Arc<dyn WebhookRepository>);

#[async_trait]
impl crate::pruning::PruneBatch for EndedDeliveries {
    async fn prune_batch(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        self.0.prune(before, limit).await
    }
}
