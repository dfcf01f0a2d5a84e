//! Many workers claiming from one webhook delivery queue at once, as the instances of a
//! deployment do (`WebhookRepository::claim`): the contract suite runs them on one store, and
//! `tests/postgres.rs` on two pools over one PostgreSQL schema, two instances in all but name.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, ensure};
use deckhand_domain::ports::Repositories;
use deckhand_domain::webhooks::{
    AttemptOutcome, AttemptRecord, DeliveryId, MAX_IN_FLIGHT_PER_ENDPOINT, RetrySchedule, WebhookId,
};
use time::OffsetDateTime;

use crate::fixtures::{deck, now, partner_for, user, webhook_endpoint as endpoint};

/// What the workers saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claimed {
    /// Deliveries claimed (and recorded as succeeded), each once.
    pub deliveries: usize,
    /// The most deliveries of one endpoint any worker saw held between claim and record.
    pub most_in_flight: usize,
}

#[derive(Default)]
struct Seen {
    claimed: HashSet<DeliveryId>,
    in_flight: HashMap<WebhookId, usize>,
    most_in_flight: usize,
}

/// Starts `per_instance` workers on each of `instances`, all claiming at `at` (at most 3 at a
/// time) and recording what they claim as succeeded, until nothing is pending. Between a
/// claim's answer and its records a worker counts the deliveries it holds per endpoint: a
/// window inside the store's leases, so the count never exceeds what the store has in flight.
/// Fails when a delivery is claimed twice or an endpoint is seen with more than
/// [`MAX_IN_FLIGHT_PER_ENDPOINT`] in flight.
pub async fn claim_until_empty(
    instances: &[Repositories],
    per_instance: usize,
    at: OffsetDateTime,
) -> anyhow::Result<Claimed> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut workers = Vec::new();
    for repos in instances {
        for _ in 0..per_instance {
            workers.push(tokio::spawn(work(repos.clone(), seen.clone(), at)));
        }
    }
    for worker in workers {
        worker.await.context("a claiming worker panicked")??;
    }
    let seen = seen
        .lock()
        .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
    Ok(Claimed {
        deliveries: seen.claimed.len(),
        most_in_flight: seen.most_in_flight,
    })
}

async fn work(
    repos: Repositories,
    seen: Arc<Mutex<Seen>>,
    at: OffsetDateTime,
) -> anyhow::Result<()> {
    let lease = Duration::from_secs(600);
    let succeeded = AttemptOutcome::Answered {
        status: 204,
        body: String::new(),
        duration: Duration::from_millis(1),
    };
    let schedule = RetrySchedule::new(vec![]);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        ensure!(
            std::time::Instant::now() < deadline,
            "the queue never emptied"
        );
        let claimed = repos.webhooks.claim(at, 3, lease).await?;
        if claimed.is_empty() {
            if repos.webhooks.stats().await?.pending == 0 {
                return Ok(());
            }
            // What is left is held by other workers, or their endpoints have no room.
            tokio::time::sleep(Duration::from_millis(2)).await;
            continue;
        }
        {
            let mut seen = seen
                .lock()
                .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
            for delivery in &claimed {
                ensure!(
                    seen.claimed.insert(delivery.delivery.id),
                    "delivery {:?} was claimed twice",
                    delivery.delivery.id
                );
                let held = seen.in_flight.entry(delivery.endpoint.id).or_default();
                *held += 1;
                let held = *held;
                seen.most_in_flight = seen.most_in_flight.max(held);
                ensure!(
                    held <= MAX_IN_FLIGHT_PER_ENDPOINT,
                    "endpoint {:?} had {held} deliveries in flight",
                    delivery.endpoint.id
                );
            }
        }
        // An attempt takes a while: the others claim meanwhile.
        tokio::time::sleep(Duration::from_millis(3)).await;
        for delivery in claimed {
            {
                let mut seen = seen
                    .lock()
                    .map_err(|_| anyhow::anyhow!("a worker panicked"))?;
                if let Some(held) = seen.in_flight.get_mut(&delivery.endpoint.id) {
                    *held -= 1;
                }
            }
            let record = AttemptRecord::decide(&delivery.delivery, &succeeded, at, &schedule, 0.0);
            repos.webhooks.record(&record).await?;
        }
    }
}

/// Queues 60 deliveries for one endpoint, then 30 for it and for each of five more, and lets
/// `per_instance` workers on each of `instances` claim them all
/// ([`claim_until_empty`]).
pub async fn flood_and_claim(
    instances: &[Repositories],
    per_instance: usize,
) -> anyhow::Result<crate::webhook_workers::Claimed> {
    let repos = instances.first().context("an instance")?;
    let owner = user("carol");
    repos.users.insert(&owner).await?;
    let acme = partner_for(&owner, "acme");
    repos.partners.insert(&acme).await?;
    repos
        .webhooks
        .create(&endpoint(&acme, "https://hooks.example.com/flooded"))
        .await?;
    let at = now();
    for n in 0..30 {
        repos
            .decks
            .insert(&deck(&owner, &format!("flood {n}")))
            .await?;
    }
    repos
        .webhooks
        .fan_out(100, at - time::Duration::seconds(60))
        .await?;
    for n in 0..5 {
        repos
            .webhooks
            .create(&endpoint(&acme, &format!("https://hooks.example.com/{n}")))
            .await?;
    }
    for n in 0..30 {
        repos
            .decks
            .insert(&deck(&owner, &format!("later {n}")))
            .await?;
    }
    repos
        .webhooks
        .fan_out(100, at - time::Duration::seconds(30))
        .await?;
    claim_until_empty(instances, per_instance, at).await
}
