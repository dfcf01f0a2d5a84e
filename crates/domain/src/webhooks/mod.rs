//! Webhooks (contract "Webhooks"): partners register endpoints, every event an endpoint wants
//! is fanned out into a delivery, and a worker attempts each delivery, signed the Standard
//! Webhooks way, on a retry schedule, until it succeeds or its schedule ends.
//!
//! What an endpoint receives is decided twice: at dispatch by its `types` and `games`, and at
//! delivery time by the feed's read rule for its partner alone, so a deck made private after
//! its event was fanned out is not sent. The domain decides; the stores keep the queue, the
//! application runs the worker and the HTTP client behind [`ports::WebhookTransport`].

mod fair;
mod model;
pub mod ports;
mod schedule;
mod service;
mod url;

pub use fair::{MAX_IN_FLIGHT_PER_ENDPOINT, QueuedDelivery, fair_claim, next_claimable};
pub use model::{
    AttemptOutcome, AttemptRecord, DELIVERY_RETENTION, DISABLE_AFTER_FAILURES, Delivery,
    DeliveryId, DeliveryStatus, DisabledReason, Endpoint, EndpointChanges, EndpointHealth,
    GameSelection, InvalidGames, MAX_DESCRIPTION_LEN, MAX_ENDPOINTS_PER_PARTNER,
    MAX_RESPONSE_CAPTURE, NewEndpoint, ONE_MORE_ATTEMPT, PREVIOUS_SECRET_LIFETIME, TypeSelection,
    WebhookId, capture,
};
pub use schedule::{InvalidRetrySchedule, JITTER, RetrySchedule, jitter_unit};
pub use service::{
    DEFAULT_DELIVERY_LIMIT, DeliveryPolicy, DeliveryResult, EndpointDraft, MAX_DELIVERY_LIMIT,
    NoLookups, WebhookError, WebhookService, fan_out, partner_alone,
};
pub use url::{InvalidWebhookUrl, MAX_URL_LEN, TargetPolicy, WebhookUrl, is_public};

#[cfg(test)]
mod tests;
