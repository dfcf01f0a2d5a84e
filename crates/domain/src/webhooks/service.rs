//! Managing endpoints (the partner's side) and delivering to them (the worker's side).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use deckhand_auth::{SealingKey, WebhookSecret, webhook_signature_header};
use time::OffsetDateTime;

use super::model::{
    AttemptOutcome, AttemptRecord, Delivery, DeliveryId, DeliveryStatus, DisabledReason, Endpoint,
    EndpointChanges, GameSelection, InvalidGames, MAX_DESCRIPTION_LEN, NewEndpoint,
    PREVIOUS_SECRET_LIFETIME, TypeSelection, WebhookId,
};
use super::ports::{
    AddressResolver, ClaimedDelivery, CreateEndpointError, OutgoingWebhook, WebhookOwner,
    WebhookRepository, WebhookTransport,
};
use super::schedule::{RetrySchedule, jitter_unit};
use super::url::{InvalidWebhookUrl, TargetPolicy, WebhookUrl};
use crate::events::ports::EventRepository;
use crate::events::{Actor, Event, EventId, EventRecord, EventType, FeedReader, SubjectKind};
use crate::identity::{PartnerRef, Scope};
use crate::system::SystemPorts;
use crate::validation::{FieldViolation, Violations};

/// Page size of the delivery log.
pub const DEFAULT_DELIVERY_LIMIT: u32 = 50;
pub const MAX_DELIVERY_LIMIT: u32 = 100;

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// No such endpoint or delivery of this partner.
    #[error("no such webhook")]
    NotFound,
    /// The partner has 16 endpoints already.
    #[error("a partner may have at most 16 webhook endpoints")]
    TooMany,
    #[error(transparent)]
    Invalid(#[from] Violations),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl From<CreateEndpointError> for WebhookError {
    fn from(error: CreateEndpointError) -> Self {
        match error {
            CreateEndpointError::TooMany => Self::TooMany,
            CreateEndpointError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

/// An endpoint as the partner sent it, checked by [`WebhookService`] (the URL's rule needs
/// the operator's policy and a DNS lookup, the games the partner's scopes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointDraft {
    pub url: Option<String>,
    pub types: Option<Vec<String>>,
    pub games: Option<Vec<String>>,
    pub description: Option<Option<String>>,
    pub enabled: Option<bool>,
}

/// What the worker is configured with.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryPolicy {
    pub targets: TargetPolicy,
    pub schedule: RetrySchedule,
    /// How long one attempt may take; a claim's lease is longer.
    pub timeout: Duration,
}

impl Default for DeliveryPolicy {
    fn default() -> Self {
        Self {
            targets: TargetPolicy::default(),
            schedule: RetrySchedule::default(),
            timeout: Duration::from_secs(10),
        }
    }
}

impl DeliveryPolicy {
    /// How long a claimed delivery is kept from other workers: the timeout with room for the
    /// lookup and the record, after which a delivery whose worker died is attempted again.
    pub fn lease(&self) -> Duration {
        self.timeout * 2 + Duration::from_secs(30)
    }

    /// Whether the worker holding a claim for `held` may start its attempt again (after the
    /// store failed it): only while a whole attempt, with as much room for the lookup and the
    /// record as the lease gives the first, still ends within the lease.
    pub fn may_attempt_again(&self, held: Duration) -> bool {
        held + self.timeout + Duration::from_secs(30) <= self.lease()
    }
}

/// What one claimed delivery came to, for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryResult {
    Succeeded,
    /// Failed, to be tried again.
    Retrying,
    /// Failed for good.
    Failed,
    /// Dropped: the endpoint's partner may not read the event.
    Skipped,
}

impl DeliveryResult {
    pub const ALL: [Self; 4] = [Self::Succeeded, Self::Retrying, Self::Failed, Self::Skipped];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Succeeded => "succeeded",
            Self::Retrying => "retrying",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

#[derive(Clone)]
pub struct WebhookService {
    webhooks: Arc<dyn WebhookRepository>,
    events: Arc<dyn EventRepository>,
    resolver: Arc<dyn AddressResolver>,
    system: SystemPorts,
    sealing_key: SealingKey,
    policy: DeliveryPolicy,
}

fn invalid(field: &str, code: &'static str, message: impl Into<String>) -> WebhookError {
    WebhookError::Invalid(FieldViolation::new(field, code, message).into())
}

impl WebhookService {
    pub fn new(
        webhooks: Arc<dyn WebhookRepository>,
        events: Arc<dyn EventRepository>,
        resolver: Arc<dyn AddressResolver>,
        system: SystemPorts,
        sealing_key: SealingKey,
        policy: DeliveryPolicy,
    ) -> Self {
        Self {
            webhooks,
            events,
            resolver,
            system,
            sealing_key,
            policy,
        }
    }

    /// The same service, looking hosts up with `resolver` (the application's DNS).
    pub fn with_resolver(mut self, resolver: Arc<dyn AddressResolver>) -> Self {
        self.resolver = resolver;
        self
    }

    pub fn policy(&self) -> &DeliveryPolicy {
        &self.policy
    }

    // ---- the operator's side ------------------------------------------------------------

    /// Every endpoint, or `partner`'s (`deckhand admin webhook list`).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_all(&self, partner: Option<String>) -> anyhow::Result<Vec<Endpoint>> {
        self.webhooks.list_all(partner).await
    }

    /// Stops every delivery to the endpoint at once, pings included, for good
    /// (`deckhand admin webhook disable`); `None` when there is no such endpoint.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn disable(&self, id: WebhookId) -> anyhow::Result<Option<Endpoint>> {
        self.webhooks.disable(id).await
    }

    // ---- the partner's side -------------------------------------------------------------

    /// Registers an endpoint; returns it with its secret, which is shown only now.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        partner: &PartnerRef,
        draft: EndpointDraft,
    ) -> Result<(Endpoint, String), WebhookError> {
        let Some(url) = draft.url.as_deref() else {
            return Err(invalid("url", "required", "url is required"));
        };
        let new = NewEndpoint {
            url: self.check_url(url).await?,
            types: check_types(draft.types.as_deref().unwrap_or_default())?,
            games: check_games(draft.games.as_deref().unwrap_or_default(), partner)?,
            description: check_description(draft.description.flatten())?,
        };
        if draft.enabled == Some(false) {
            return Err(invalid(
                "enabled",
                "unknown",
                "enabled is set with PATCH once the endpoint exists",
            ));
        }
        let id = WebhookId(self.system.ids.new_id());
        let secret = WebhookSecret::from_bytes(self.system.random.bytes32()?);
        let endpoint = Endpoint {
            id,
            partner: partner.slug.clone(),
            url: new.url.as_str().to_owned(),
            types: new.types,
            games: new.games,
            description: new.description,
            enabled: true,
            disabled_reason: None,
            consecutive_failures: 0,
            sealed_secret: self.seal(id, &secret)?,
            previous_secret: None,
            created_at: self.system.clock.now(),
        };
        self.webhooks.create(&endpoint).await?;
        Ok((endpoint, secret.reveal()))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(&self, partner: &PartnerRef) -> Result<Vec<Endpoint>, WebhookError> {
        Ok(self.webhooks.list(&partner.slug).await?)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get(&self, partner: &PartnerRef, id: WebhookId) -> Result<Endpoint, WebhookError> {
        self.webhooks
            .find(&partner.slug, id)
            .await?
            .ok_or(WebhookError::NotFound)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update(
        &self,
        partner: &PartnerRef,
        id: WebhookId,
        draft: EndpointDraft,
    ) -> Result<Endpoint, WebhookError> {
        // The stores keep an operator's disable whatever a PATCH says; this tells the partner.
        if draft.enabled == Some(true)
            && self.get(partner, id).await?.disabled_reason == Some(DisabledReason::Operator)
        {
            return Err(invalid(
                "enabled",
                "disabled_by_operator",
                "an operator disabled this endpoint; it cannot be enabled again",
            ));
        }
        let changes = EndpointChanges {
            url: match draft.url.as_deref() {
                Some(url) => Some(self.check_url(url).await?),
                None => None,
            },
            types: draft.types.as_deref().map(check_types).transpose()?,
            games: draft
                .games
                .as_deref()
                .map(|games| check_games(games, partner))
                .transpose()?,
            description: draft.description.map(check_description).transpose()?,
            enabled: draft.enabled,
        };
        self.webhooks
            .update(&partner.slug, id, &changes)
            .await?
            .ok_or(WebhookError::NotFound)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete(&self, partner: &PartnerRef, id: WebhookId) -> Result<(), WebhookError> {
        if self.webhooks.delete(&partner.slug, id).await? {
            Ok(())
        } else {
            Err(WebhookError::NotFound)
        }
    }

    /// A new secret, shown once; the old one keeps signing for 24 hours.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn rotate_secret(
        &self,
        partner: &PartnerRef,
        id: WebhookId,
    ) -> Result<(Endpoint, String), WebhookError> {
        let secret = WebhookSecret::from_bytes(self.system.random.bytes32()?);
        let until = self.system.clock.now() + PREVIOUS_SECRET_LIFETIME;
        let endpoint = self
            .webhooks
            .rotate_secret(&partner.slug, id, self.seal(id, &secret)?, until)
            .await?
            .ok_or(WebhookError::NotFound)?;
        Ok((endpoint, secret.reveal()))
    }

    /// Queues a `webhook.ping` for the endpoint (not in the feed), unless one is pending for it
    /// already: then that one is the answer, and no second is queued (a partner pinging in a
    /// loop queues one ping at a time).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn ping(
        &self,
        partner: &PartnerRef,
        id: WebhookId,
    ) -> Result<Delivery, WebhookError> {
        let endpoint = self.get(partner, id).await?;
        let now = self.system.clock.now();
        let ping = Delivery::ping(
            DeliveryId(self.system.ids.new_id()),
            EventId(self.system.ids.new_id()),
            &endpoint,
            &partner.slug,
            now,
        );
        Ok(self.webhooks.enqueue_ping(&ping).await?)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn deliveries(
        &self,
        partner: &PartnerRef,
        id: WebhookId,
        limit: u32,
        after: Option<DeliveryId>,
    ) -> Result<Vec<Delivery>, WebhookError> {
        self.webhooks
            .deliveries(
                &partner.slug,
                id,
                limit.clamp(1, MAX_DELIVERY_LIMIT + 1),
                after,
            )
            .await?
            .ok_or(WebhookError::NotFound)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn retry(
        &self,
        partner: &PartnerRef,
        id: WebhookId,
        delivery: DeliveryId,
    ) -> Result<(), WebhookError> {
        let now = self.system.clock.now();
        if self
            .webhooks
            .retry(&partner.slug, id, delivery, now)
            .await?
        {
            Ok(())
        } else {
            Err(WebhookError::NotFound)
        }
    }

    async fn check_url(&self, text: &str) -> Result<WebhookUrl, WebhookError> {
        let url_error = |error: InvalidWebhookUrl| invalid("url", "url", error.to_string());
        let url = WebhookUrl::parse(text, self.policy.targets).map_err(url_error)?;
        if url.literal_address().is_none() && !self.policy.targets.allow_private {
            let addresses = self
                .resolver
                .resolve(&url.host(), url.port())
                .await
                .unwrap_or_default();
            self.policy
                .targets
                .check_addresses(&addresses)
                .map_err(url_error)?;
        }
        Ok(url)
    }

    fn seal(&self, id: WebhookId, secret: &WebhookSecret) -> anyhow::Result<Vec<u8>> {
        let mut nonce = [0u8; 12];
        nonce.copy_from_slice(&self.system.random.bytes32()?[..12]);
        deckhand_auth::seal(&self.sealing_key, nonce, id.0.as_bytes(), secret.as_bytes())
            .context("sealing a webhook secret")
    }

    fn open(&self, id: WebhookId, sealed: &[u8]) -> anyhow::Result<WebhookSecret> {
        let bytes = deckhand_auth::open(&self.sealing_key, id.0.as_bytes(), sealed)
            .context("opening a webhook secret")?;
        WebhookSecret::try_from_slice(&bytes).context("a sealed webhook secret")
    }

    // ---- the worker's side --------------------------------------------------------------

    /// Fans events out into deliveries; how many events were read.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn dispatch(&self, limit: u32) -> anyhow::Result<u32> {
        self.webhooks.fan_out(limit, self.system.clock.now()).await
    }

    /// Claims due deliveries for this worker.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn claim(&self, limit: u32) -> anyhow::Result<Vec<ClaimedDelivery>> {
        self.webhooks
            .claim(self.system.clock.now(), limit, self.policy.lease())
            .await
    }

    /// The service's clock, which due times are compared with.
    pub fn now(&self) -> OffsetDateTime {
        self.system.clock.now()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn next_due(&self) -> anyhow::Result<Option<OffsetDateTime>> {
        self.webhooks.next_due(self.system.clock.now()).await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn wait_for_work(&self, timeout: Duration) -> anyhow::Result<()> {
        self.webhooks.wait_for_work(timeout).await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn stats(&self) -> anyhow::Result<super::ports::QueueStats> {
        self.webhooks.stats().await
    }

    /// One attempt of a claimed delivery: the partner's right to the event now, the target's
    /// addresses now, then the signed request, and its record.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn attempt(
        &self,
        transport: &dyn WebhookTransport,
        claimed: ClaimedDelivery,
    ) -> anyhow::Result<DeliveryResult> {
        let ClaimedDelivery {
            delivery,
            endpoint,
            owner,
        } = claimed;
        if !self.may_read(&owner, &delivery).await? {
            self.webhooks.discard(delivery.id).await?;
            return Ok(DeliveryResult::Skipped);
        }
        let body = self.readable_body(&owner, &delivery).await?;
        let outcome = match self.request(&endpoint, &delivery, body).await? {
            Ok(request) => transport.send(request).await,
            Err(refused) => AttemptOutcome::NoAnswer {
                error: refused.to_string(),
                duration: Duration::ZERO,
            },
        };
        let mut jitter = [0u8; 8];
        jitter.copy_from_slice(&self.system.random.bytes32()?[..8]);
        let record = AttemptRecord::decide(
            &delivery,
            &outcome,
            self.system.clock.now(),
            &self.policy.schedule,
            jitter_unit(jitter),
        );
        self.webhooks.record(&record).await?;
        Ok(match record.status {
            DeliveryStatus::Succeeded => DeliveryResult::Succeeded,
            DeliveryStatus::Pending => DeliveryResult::Retrying,
            DeliveryStatus::Failed => DeliveryResult::Failed,
        })
    }

    /// Whether the endpoint's partner, alone, could read the event in the feed now.
    async fn may_read(&self, owner: &WebhookOwner, delivery: &Delivery) -> anyhow::Result<bool> {
        if delivery.event_type == EventType::WebhookPing {
            return Ok(true);
        }
        if !owner.active || !owner.game_scopes.allows(&delivery.game) {
            return Ok(false);
        }
        let reader = partner_alone(owner);
        let kind = delivery.event_type.subject_kind();
        if !reader.reads(kind) {
            return Ok(false);
        }
        let subject = match (kind, delivery.subject_id) {
            (SubjectKind::Catalog, _) | (_, None) => None,
            (kind, Some(id)) => self.events.subject(kind, id).await?,
        };
        Ok(reader.admits(kind, subject))
    }

    /// The body to send: the event as fanned out, with the deck its `data` names besides the
    /// subject (the source of a fork, a guide's deck) `null` when the endpoint's partner, alone,
    /// may not read that deck now (contract "Events": ids inside `data` follow the read rule,
    /// in webhook bodies as in the feed). Judged at every attempt, as the subject is.
    async fn readable_body(
        &self,
        owner: &WebhookOwner,
        delivery: &Delivery,
    ) -> anyhow::Result<String> {
        if delivery.event_type == EventType::WebhookPing {
            return Ok(delivery.body.clone());
        }
        let mut event: serde_json::Value = serde_json::from_str(&delivery.body)
            .with_context(|| format!("the stored body of delivery {}", delivery.id.0))?;
        let mut record = EventRecord {
            id: delivery.event_id,
            event_type: delivery.event_type,
            game: delivery.game.clone(),
            occurred_at: delivery.created_at,
            subject_id: delivery.subject_id,
            actor: Actor::default(),
            data: event["data"].take(),
        };
        let Some(named) = record.named_deck() else {
            return Ok(delivery.body.clone());
        };
        let access = self.events.subject(SubjectKind::Deck, named).await?;
        if partner_alone(owner).sees_named(access) {
            return Ok(delivery.body.clone());
        }
        record.hide_named_deck();
        event["data"] = record.data;
        Ok(event.to_string())
    }

    /// The signed request carrying `body`, or why the target may not be sent to now.
    async fn request(
        &self,
        endpoint: &Endpoint,
        delivery: &Delivery,
        body: String,
    ) -> anyhow::Result<Result<OutgoingWebhook, InvalidWebhookUrl>> {
        let targets = self.policy.targets;
        let url = match WebhookUrl::parse(&endpoint.url, targets) {
            Ok(url) => url,
            Err(refused) => return Ok(Err(refused)),
        };
        let addresses = match url.literal_address() {
            Some(ip) => vec![ip],
            None => match self.resolver.resolve(&url.host(), url.port()).await {
                Ok(addresses) => addresses,
                Err(_) => return Ok(Err(InvalidWebhookUrl::Unresolvable)),
            },
        };
        if let Err(refused) = targets.check_addresses(&addresses) {
            return Ok(Err(refused));
        }
        let now = self.system.clock.now();
        let mut secrets = vec![self.open(endpoint.id, &endpoint.sealed_secret)?];
        if let Some((sealed, until)) = &endpoint.previous_secret
            && *until > now
        {
            secrets.push(self.open(endpoint.id, sealed)?);
        }
        let webhook_id = delivery.event_id.to_string();
        let timestamp = now.unix_timestamp();
        Ok(Ok(OutgoingWebhook {
            url: url.as_str().to_owned(),
            host: url.host(),
            addresses: addresses
                .into_iter()
                .map(|ip| std::net::SocketAddr::new(ip, url.port()))
                .collect(),
            signature: webhook_signature_header(&secrets, &webhook_id, timestamp, body.as_bytes()),
            webhook_id,
            timestamp,
            body,
        }))
    }
}

/// A resolver that looks nothing up: host names do not resolve (IP literals need no lookup).
/// What the services start with until the application gives them its DNS.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoLookups;

#[async_trait::async_trait]
impl AddressResolver for NoLookups {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn resolve(&self, host: &str, _port: u16) -> anyhow::Result<Vec<std::net::IpAddr>> {
        anyhow::bail!("no resolver to look up {host}")
    }
}

/// The feed reader a partner is on its own (signature or API key, no user): the resource
/// endpoints read as its `created_by` user, with the partner's scopes.
pub fn partner_alone(owner: &WebhookOwner) -> FeedReader {
    FeedReader {
        viewer: Some(owner.created_by),
        deck_events: owner.scopes.contains(Scope::DecksRead),
        guide_events: owner.scopes.contains(Scope::SideboardsRead),
        // A partner acting alone has no collection: its endpoints get no collection events.
        collection_viewer: None,
    }
}

fn check_types(entries: &[String]) -> Result<TypeSelection, WebhookError> {
    TypeSelection::parse(entries).map_err(|error| invalid("types", "unknown", error.to_string()))
}

fn check_games(entries: &[String], partner: &PartnerRef) -> Result<GameSelection, WebhookError> {
    GameSelection::parse(entries, &partner.game_scopes).map_err(|error| {
        let code = match error {
            InvalidGames::Malformed => "format",
            InvalidGames::OutsideScopes(_) => "scope",
        };
        invalid("games", code, error.to_string())
    })
}

fn check_description(description: Option<String>) -> Result<Option<String>, WebhookError> {
    match description {
        Some(text) if text.chars().count() > MAX_DESCRIPTION_LEN => Err(invalid(
            "description",
            "length",
            format!("description is at most {MAX_DESCRIPTION_LEN} characters"),
        )),
        other => Ok(other),
    }
}

impl Delivery {
    /// A new delivery of `event` to `endpoint`, due at `now`; its body is the event's JSON,
    /// the same on every attempt.
    pub fn of_event(
        id: DeliveryId,
        endpoint: &Endpoint,
        event: &Event,
        now: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            endpoint: endpoint.id,
            event_id: event.record.id,
            event_type: event.record.event_type,
            sequence: Some(event.sequence),
            game: event.record.game.clone(),
            subject_id: event.record.subject_id,
            body: event.to_json().to_string(),
            attempt: 0,
            retries_used: 0,
            status: DeliveryStatus::Pending,
            response_status: None,
            duration_ms: None,
            error: None,
            attempted_at: None,
            next_attempt_at: Some(now),
            created_at: now,
        }
    }
}

impl Delivery {
    /// A `webhook.ping` to `endpoint` that `partner` asked for at `now`, due at once. Its body
    /// (contract "Webhooks"): no place in the feed's order and no game; the endpoint is its
    /// subject.
    pub fn ping(
        id: DeliveryId,
        event_id: EventId,
        endpoint: &Endpoint,
        partner: &str,
        now: OffsetDateTime,
    ) -> Self {
        let occurred_at = now
            .to_offset(time::UtcOffset::UTC)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let body = serde_json::json!({
            "id": event_id.0,
            "sequence": null,
            "type": EventType::WebhookPing.as_str(),
            "game": null,
            "occurred_at": occurred_at,
            "subject": {"kind": "webhook", "id": endpoint.id.0},
            "actor": {"user_id": null, "partner": partner},
            "data": {},
        });
        Self {
            id,
            endpoint: endpoint.id,
            event_id,
            event_type: EventType::WebhookPing,
            sequence: None,
            // Stored for the queue's bookkeeping only; the body has none.
            game: endpoint.games.names().first().cloned().unwrap_or_default(),
            subject_id: None,
            body: body.to_string(),
            attempt: 0,
            retries_used: 0,
            status: DeliveryStatus::Pending,
            response_status: None,
            duration_ms: None,
            error: None,
            attempted_at: None,
            next_attempt_at: Some(now),
            created_at: now,
        }
    }
}

/// The deliveries of a batch of events: one per event and enabled endpoint that wants it,
/// in event order. `new_id` names each.
pub fn fan_out(
    events: &[Event],
    endpoints: &[Endpoint],
    now: OffsetDateTime,
    mut new_id: impl FnMut() -> DeliveryId,
) -> Vec<Delivery> {
    let mut deliveries = Vec::new();
    for event in events {
        for endpoint in endpoints {
            if endpoint.wants(event.record.event_type, &event.record.game) {
                deliveries.push(Delivery::of_event(new_id(), endpoint, event, now));
            }
        }
    }
    deliveries
}
