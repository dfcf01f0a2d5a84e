//! Webhook endpoints, the delivery queue and the dispatch watermark in memory: the same
//! promises as PostgreSQL (16 per partner, one claim per delivery until its lease ends, at most
//! two in flight per endpoint taken round-robin by the domain's `fair_claim`, one pending ping
//! per endpoint, the watermark moved with the deliveries it made), under the store's one lock.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use deckhand_domain::events::EventType;
use deckhand_domain::identity::PartnerSlug;
use deckhand_domain::webhooks::ports::{
    ClaimedDelivery, CreateEndpointError, QueueStats, WebhookOwner, WebhookRepository,
};
use deckhand_domain::webhooks::{
    AttemptRecord, Delivery, DeliveryId, DeliveryStatus, DisabledReason, Endpoint, EndpointChanges,
    MAX_ENDPOINTS_PER_PARTNER, ONE_MORE_ATTEMPT, QueuedDelivery, WebhookId, fair_claim, fan_out,
    next_claimable,
};
use time::OffsetDateTime;
use tokio::sync::Notify;
use uuid::Uuid;

use crate::{State, Store};

#[derive(Debug, Default)]
pub(crate) struct Tables {
    endpoints: HashMap<WebhookId, Endpoint>,
    /// By id: v7 ids are time-ordered, so the log reads newest first backwards.
    deliveries: BTreeMap<DeliveryId, Queued>,
    /// Every event up to this sequence has been fanned out.
    watermark: i64,
    /// Wakes the worker when a delivery is queued or made due.
    wake: Arc<Notify>,
}

#[derive(Debug, Clone)]
struct Queued {
    delivery: Delivery,
    lease_until: Option<OffsetDateTime>,
}

pub(crate) struct MemoryWebhooks(pub(crate) Store);

fn claimable(state: &State, queued: &Queued) -> bool {
    queued.delivery.status == DeliveryStatus::Pending
        && state
            .webhooks
            .endpoints
            .get(&queued.delivery.endpoint)
            .is_some_and(|endpoint| {
                endpoint.enabled
                    || (queued.delivery.event_type == EventType::WebhookPing
                        && endpoint.disabled_reason != Some(DisabledReason::Operator))
            })
}

/// The claimable pending deliveries as the domain's fair-share rule reads them.
fn claimable_queue(state: &State) -> Vec<QueuedDelivery> {
    state
        .webhooks
        .deliveries
        .values()
        .filter(|queued| claimable(state, queued))
        .filter_map(|queued| {
            Some(QueuedDelivery {
                id: queued.delivery.id,
                endpoint: queued.delivery.endpoint,
                due: queued.delivery.next_attempt_at?,
                lease_until: queued.lease_until,
            })
        })
        .collect()
}

fn owned<'a>(state: &'a State, partner: &str, id: WebhookId) -> Option<&'a Endpoint> {
    state
        .webhooks
        .endpoints
        .get(&id)
        .filter(|endpoint| endpoint.partner == partner)
}

/// [`owned`], to change.
fn owned_mut<'a>(state: &'a mut State, partner: &str, id: WebhookId) -> Option<&'a mut Endpoint> {
    owned(state, partner, id)?;
    state.webhooks.endpoints.get_mut(&id)
}

fn owner_of(state: &State, endpoint: &Endpoint) -> Option<WebhookOwner> {
    let slug = PartnerSlug::parse(&endpoint.partner).ok()?;
    let partner = state.partners.partner(&slug)?;
    Some(WebhookOwner {
        created_by: partner.created_by,
        scopes: partner.scopes.clone(),
        game_scopes: partner.game_scopes.clone(),
        active: partner.active,
    })
}

fn queue(state: &mut State, deliveries: Vec<Delivery>) {
    for delivery in deliveries {
        let duplicate = state.webhooks.deliveries.values().any(|queued| {
            queued.delivery.endpoint == delivery.endpoint
                && queued.delivery.event_id == delivery.event_id
        });
        if !duplicate {
            state.webhooks.deliveries.insert(
                delivery.id,
                Queued {
                    delivery,
                    lease_until: None,
                },
            );
        }
    }
}

#[async_trait]
impl WebhookRepository for MemoryWebhooks {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn create(&self, endpoint: &Endpoint) -> Result<(), CreateEndpointError> {
        let mut state = self.0.lock();
        let count = state
            .webhooks
            .endpoints
            .values()
            .filter(|existing| existing.partner == endpoint.partner)
            .count();
        if count >= MAX_ENDPOINTS_PER_PARTNER {
            return Err(CreateEndpointError::TooMany);
        }
        state
            .webhooks
            .endpoints
            .insert(endpoint.id, endpoint.clone());
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, partner: &str) -> anyhow::Result<Vec<Endpoint>> {
        let state = self.0.lock();
        let mut endpoints: Vec<Endpoint> = state
            .webhooks
            .endpoints
            .values()
            .filter(|endpoint| endpoint.partner == partner)
            .cloned()
            .collect();
        endpoints.sort_by_key(|endpoint| (endpoint.created_at, endpoint.id));
        Ok(endpoints)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find(&self, partner: &str, id: WebhookId) -> anyhow::Result<Option<Endpoint>> {
        Ok(owned(&self.0.lock(), partner, id).cloned())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list_all(&self, partner: Option<String>) -> anyhow::Result<Vec<Endpoint>> {
        let state = self.0.lock();
        let mut endpoints: Vec<Endpoint> = state
            .webhooks
            .endpoints
            .values()
            .filter(|endpoint| {
                partner
                    .as_ref()
                    .is_none_or(|slug| endpoint.partner == *slug)
            })
            .cloned()
            .collect();
        endpoints.sort_by(|a, b| {
            (&a.partner, a.created_at, a.id).cmp(&(&b.partner, b.created_at, b.id))
        });
        Ok(endpoints)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn disable(&self, id: WebhookId) -> anyhow::Result<Option<Endpoint>> {
        let mut state = self.0.lock();
        Ok(state.webhooks.endpoints.get_mut(&id).map(|endpoint| {
            endpoint.enabled = false;
            endpoint.disabled_reason = Some(DisabledReason::Operator);
            endpoint.clone()
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn update(
        &self,
        partner: &str,
        id: WebhookId,
        changes: &EndpointChanges,
    ) -> anyhow::Result<Option<Endpoint>> {
        let mut state = self.0.lock();
        let Some(endpoint) = owned_mut(&mut state, partner, id) else {
            return Ok(None);
        };
        if let Some(url) = &changes.url {
            endpoint.url = url.as_str().to_owned();
        }
        if let Some(types) = &changes.types {
            endpoint.types = types.clone();
        }
        if let Some(games) = &changes.games {
            endpoint.games = games.clone();
        }
        if let Some(description) = &changes.description {
            endpoint.description = description.clone();
        }
        // An operator's disable stays, whatever the partner asks.
        if let Some(enabled) = changes.enabled
            && endpoint.disabled_reason != Some(DisabledReason::Operator)
        {
            endpoint.enabled = enabled;
            if enabled {
                endpoint.disabled_reason = None;
                endpoint.consecutive_failures = 0;
            }
        }
        Ok(Some(endpoint.clone()))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn delete(&self, partner: &str, id: WebhookId) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        if owned(&state, partner, id).is_none() {
            return Ok(false);
        }
        state.webhooks.endpoints.remove(&id);
        state
            .webhooks
            .deliveries
            .retain(|_, queued| queued.delivery.endpoint != id);
        Ok(true)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn rotate_secret(
        &self,
        partner: &str,
        id: WebhookId,
        sealed: Vec<u8>,
        previous_until: OffsetDateTime,
    ) -> anyhow::Result<Option<Endpoint>> {
        let mut state = self.0.lock();
        let Some(endpoint) = owned_mut(&mut state, partner, id) else {
            return Ok(None);
        };
        let previous = std::mem::replace(&mut endpoint.sealed_secret, sealed);
        endpoint.previous_secret = Some((previous, previous_until));
        Ok(Some(endpoint.clone()))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn enqueue_ping(&self, ping: &Delivery) -> anyhow::Result<Delivery> {
        let mut state = self.0.lock();
        let pending = state
            .webhooks
            .deliveries
            .values()
            .map(|queued| &queued.delivery)
            .filter(|delivery| {
                delivery.endpoint == ping.endpoint
                    && delivery.event_type == EventType::WebhookPing
                    && delivery.status == DeliveryStatus::Pending
            })
            .min_by_key(|delivery| (delivery.created_at, delivery.id));
        if let Some(pending) = pending {
            return Ok(pending.clone());
        }
        queue(&mut state, vec![ping.clone()]);
        state.webhooks.wake.notify_one();
        Ok(ping.clone())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn deliveries(
        &self,
        partner: &str,
        id: WebhookId,
        limit: u32,
        after: Option<DeliveryId>,
    ) -> anyhow::Result<Option<Vec<Delivery>>> {
        let state = self.0.lock();
        if owned(&state, partner, id).is_none() {
            return Ok(None);
        }
        let upper = after.unwrap_or(DeliveryId(Uuid::max()));
        Ok(Some(
            state
                .webhooks
                .deliveries
                .range(..upper)
                .rev()
                .filter(|(_, queued)| queued.delivery.endpoint == id)
                .take(limit as usize)
                .map(|(_, queued)| queued.delivery.clone())
                .collect(),
        ))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn retry(
        &self,
        partner: &str,
        id: WebhookId,
        delivery: DeliveryId,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        if owned(&state, partner, id).is_none() {
            return Ok(false);
        }
        let Some(queued) = state
            .webhooks
            .deliveries
            .get_mut(&delivery)
            .filter(|queued| queued.delivery.endpoint == id)
        else {
            return Ok(false);
        };
        if queued.delivery.status != DeliveryStatus::Pending {
            queued.delivery.retries_used = ONE_MORE_ATTEMPT;
        }
        queued.delivery.status = DeliveryStatus::Pending;
        queued.delivery.next_attempt_at = Some(now);
        state.webhooks.wake.notify_one();
        Ok(true)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn fan_out(&self, limit: u32, now: OffsetDateTime) -> anyhow::Result<u32> {
        let mut state = self.0.lock();
        let events = state.events.after(state.webhooks.watermark, limit);
        let Some(last) = events.last().map(|event| event.sequence) else {
            return Ok(0);
        };
        let endpoints: Vec<Endpoint> = state
            .webhooks
            .endpoints
            .values()
            .filter(|endpoint| endpoint.enabled)
            .cloned()
            .collect();
        let deliveries = fan_out(&events, &endpoints, now, || DeliveryId(Uuid::now_v7()));
        queue(&mut state, deliveries);
        state.webhooks.watermark = last;
        Ok(u32::try_from(events.len()).unwrap_or(u32::MAX))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn claim(
        &self,
        now: OffsetDateTime,
        limit: u32,
        lease: Duration,
    ) -> anyhow::Result<Vec<ClaimedDelivery>> {
        let mut state = self.0.lock();
        let taken = fair_claim(&claimable_queue(&state), now, limit as usize);
        let mut claimed = Vec::with_capacity(taken.len());
        for id in taken {
            let Some(queued) = state.webhooks.deliveries.get(&id) else {
                continue;
            };
            let Some(endpoint) = state.webhooks.endpoints.get(&queued.delivery.endpoint) else {
                continue;
            };
            let Some(owner) = owner_of(&state, endpoint) else {
                continue;
            };
            claimed.push(ClaimedDelivery {
                delivery: queued.delivery.clone(),
                endpoint: endpoint.clone(),
                owner,
            });
            if let Some(queued) = state.webhooks.deliveries.get_mut(&id) {
                queued.lease_until = Some(now + lease);
            }
        }
        Ok(claimed)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record(&self, record: &AttemptRecord) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        let Some(queued) = state
            .webhooks
            .deliveries
            .get_mut(&record.delivery)
            .filter(|queued| queued.delivery.attempt == record.attempt - 1)
        else {
            return Ok(());
        };
        let delivery = &mut queued.delivery;
        delivery.attempt = record.attempt;
        delivery.retries_used = record.retries_used;
        delivery.status = record.status;
        delivery.response_status = record.response_status;
        delivery.duration_ms = Some(record.duration_ms);
        delivery.error = record.error.clone();
        delivery.attempted_at = Some(record.attempted_at);
        delivery.next_attempt_at = record.next_attempt_at;
        queued.lease_until = None;
        let endpoint_id = delivery.endpoint;
        if let Some(endpoint) = state.webhooks.endpoints.get_mut(&endpoint_id) {
            endpoint.set_health(endpoint.health().after(record));
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn discard(&self, delivery: DeliveryId) -> anyhow::Result<()> {
        self.0.lock().webhooks.deliveries.remove(&delivery);
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn next_due(&self, now: OffsetDateTime) -> anyhow::Result<Option<OffsetDateTime>> {
        Ok(next_claimable(&claimable_queue(&self.0.lock()), now))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn wait_for_work(&self, timeout: Duration) -> anyhow::Result<()> {
        let (wake, mut news, watermark) = {
            let state = self.0.lock();
            (
                state.webhooks.wake.clone(),
                state.events.news(),
                state.webhooks.watermark,
            )
        };
        // An event past the watermark, a queued delivery (a stored permit if it came before
        // this wait), or the timeout.
        let _ = tokio::time::timeout(timeout, async {
            tokio::select! {
                _ = news.wait_for(|last| *last > watermark) => {}
                () = wake.notified() => {}
            }
        })
        .await;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn stats(&self) -> anyhow::Result<QueueStats> {
        let state = self.0.lock();
        let pending: Vec<OffsetDateTime> = state
            .webhooks
            .deliveries
            .values()
            .filter(|queued| claimable(&state, queued))
            .map(|queued| queued.delivery.created_at)
            .collect();
        Ok(QueueStats {
            pending: pending.len() as u64,
            oldest_pending: pending.into_iter().min(),
        })
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn prune(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        let mut state = self.0.lock();
        let old: Vec<DeliveryId> = state
            .webhooks
            .deliveries
            .values()
            .filter(|queued| {
                queued.delivery.created_at < before
                    && queued.delivery.status != DeliveryStatus::Pending
            })
            .map(|queued| queued.delivery.id)
            .take(limit as usize)
            .collect();
        for id in &old {
            state.webhooks.deliveries.remove(id);
        }
        Ok(old.len() as u64)
    }
}
