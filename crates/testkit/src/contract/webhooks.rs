//! The webhook queue's contract (`WebhookRepository`), run over both stores with the rest.

use std::time::Duration;

use anyhow::{Context as _, ensure};
use deckhand_domain::events::EventType;
use deckhand_domain::identity::{GameScopes, Partner};
use deckhand_domain::ports::Repositories;
use deckhand_domain::webhooks::ports::CreateEndpointError;
use deckhand_domain::webhooks::{
    AttemptOutcome, AttemptRecord, DeliveryId, DeliveryStatus, DisabledReason, Endpoint,
    EndpointChanges, GameSelection, ONE_MORE_ATTEMPT, RetrySchedule, TargetPolicy, TypeSelection,
    WebhookUrl,
};
use uuid::Uuid;

use super::support::Outcome;
use crate::fixtures::{deck, now, partner_for, user, webhook_endpoint as endpoint};

async fn a_partner(repos: &Repositories, owner: &str, slug: &str) -> anyhow::Result<Partner> {
    let owner = user(owner);
    repos.users.insert(&owner).await?;
    let partner = partner_for(&owner, slug);
    repos.partners.insert(&partner).await?;
    Ok(partner)
}

pub async fn webhook_endpoints_round_trip_and_stay_with_their_partner(
    repos: &Repositories,
) -> Outcome {
    let acme = a_partner(repos, "alice", "acme").await?;
    let rival = a_partner(repos, "bob", "rival").await?;
    let made = Endpoint {
        types: TypeSelection::parse(&["deck.*".into(), "catalog.imported".into()])?,
        games: GameSelection(GameScopes::parse_list("mtg lorcana")?),
        ..endpoint(&acme, "https://hooks.example.com/a")
    };
    repos.webhooks.create(&made).await?;
    let found = repos.webhooks.find("acme", made.id).await?;
    ensure!(found.as_ref() == Some(&made), "{found:?}");
    ensure!(repos.webhooks.find("rival", made.id).await?.is_none());
    ensure!(repos.webhooks.list("acme").await? == vec![made.clone()]);
    ensure!(repos.webhooks.list("rival").await?.is_empty());
    let _ = rival;

    let changes = EndpointChanges {
        url: Some(WebhookUrl::parse(
            "https://hooks.example.com/b",
            TargetPolicy::default(),
        )?),
        description: Some(None),
        enabled: Some(false),
        ..EndpointChanges::default()
    };
    ensure!(
        repos
            .webhooks
            .update("rival", made.id, &changes)
            .await?
            .is_none()
    );
    let changed = repos
        .webhooks
        .update("acme", made.id, &changes)
        .await?
        .context("the endpoint")?;
    ensure!(changed.url == "https://hooks.example.com/b" && changed.description.is_none());
    ensure!(!changed.enabled && changed.types == made.types);

    let until = now() + time::Duration::hours(24);
    let rotated = repos
        .webhooks
        .rotate_secret("acme", made.id, vec![8; 60], until)
        .await?
        .context("the endpoint")?;
    ensure!(rotated.sealed_secret == vec![8; 60]);
    ensure!(rotated.previous_secret == Some((vec![7; 60], until)));

    ensure!(!repos.webhooks.delete("rival", made.id).await?);
    ensure!(repos.webhooks.delete("acme", made.id).await?);
    ensure!(repos.webhooks.find("acme", made.id).await?.is_none());
    Ok(())
}

pub async fn a_partner_has_at_most_sixteen_webhook_endpoints(repos: &Repositories) -> Outcome {
    let acme = a_partner(repos, "alice", "acme").await?;
    let rival = a_partner(repos, "bob", "rival").await?;
    let creates = (0..20).map(|n| {
        let made = endpoint(&acme, &format!("https://hooks.example.com/{n}"));
        async move { repos.webhooks.create(&made).await }
    });
    let results = futures_util::future::join_all(creates).await;
    let refused = results
        .iter()
        .filter(|result| matches!(result, Err(CreateEndpointError::TooMany)))
        .count();
    let failed: Vec<String> = results
        .iter()
        .filter_map(|result| match result {
            Err(CreateEndpointError::Unexpected(error)) => Some(format!("{error:#}")),
            _ => None,
        })
        .collect();
    ensure!(refused == 4, "{refused} refused, {failed:?}");
    ensure!(repos.webhooks.list("acme").await?.len() == 16);
    repos
        .webhooks
        .create(&endpoint(&rival, "https://hooks.example.com/r"))
        .await?;
    Ok(())
}

pub async fn events_fan_out_once_into_claimable_deliveries(repos: &Repositories) -> Outcome {
    let acme = a_partner(repos, "alice", "acme").await?;
    let owner = user("carol");
    repos.users.insert(&owner).await?;
    let every = endpoint(&acme, "https://hooks.example.com/every");
    let guides_only = Endpoint {
        types: TypeSelection::parse(&["sideboard_guide.*".into()])?,
        ..endpoint(&acme, "https://hooks.example.com/guides")
    };
    let disabled = Endpoint {
        enabled: false,
        ..endpoint(&acme, "https://hooks.example.com/off")
    };
    for made in [&every, &guides_only, &disabled] {
        repos.webhooks.create(made).await?;
    }
    if let Some(disabled) = repos
        .webhooks
        .update(
            "acme",
            disabled.id,
            &EndpointChanges {
                enabled: Some(false),
                ..EndpointChanges::default()
            },
        )
        .await?
    {
        ensure!(!disabled.enabled);
    }
    for name in ["one", "two", "three"] {
        repos.decks.insert(&deck(&owner, name)).await?;
    }
    let at = now();
    let mut read = 0;
    loop {
        let batch = repos.webhooks.fan_out(2, at).await?;
        if batch == 0 {
            break;
        }
        read += batch;
    }
    ensure!(read == 3, "{read} events read");
    ensure!(
        repos.webhooks.fan_out(10, at).await? == 0,
        "fanned out twice"
    );
    let log = repos
        .webhooks
        .deliveries("acme", every.id, 10, None)
        .await?
        .context("the endpoint")?;
    ensure!(log.len() == 3, "{log:?}");
    ensure!(
        log.iter()
            .all(|delivery| delivery.status == DeliveryStatus::Pending
                && delivery.event_type == EventType::DeckCreated
                && delivery.attempt == 0)
    );
    // Newest first, and paged with `after`.
    let sequences: Vec<_> = log.iter().map(|delivery| delivery.sequence).collect();
    ensure!(
        sequences.windows(2).all(|pair| pair[0] > pair[1]),
        "{sequences:?}"
    );
    let older = repos
        .webhooks
        .deliveries("acme", every.id, 10, Some(log[0].id))
        .await?
        .context("the endpoint")?;
    ensure!(older == log[1..], "{older:?}");
    for other in [guides_only.id, disabled.id] {
        let none = repos.webhooks.deliveries("acme", other, 10, None).await?;
        ensure!(none == Some(Vec::new()), "{none:?}");
    }
    ensure!(
        repos
            .webhooks
            .deliveries("rival", every.id, 10, None)
            .await?
            .is_none()
    );
    let stats = repos.webhooks.stats().await?;
    ensure!(stats.pending == 3, "{stats:?}");

    // Claims: each delivery once until its lease ends, and at most two of one endpoint in
    // flight: the third waits for a lease to end.
    let lease = Duration::from_secs(60);
    let first = repos.webhooks.claim(at, 1, lease).await?;
    let second = repos.webhooks.claim(at, 10, lease).await?;
    ensure!(
        first.len() == 1 && second.len() == 1,
        "{} {}",
        first.len(),
        second.len()
    );
    ensure!(first[0].delivery.id != second[0].delivery.id);
    ensure!(repos.webhooks.claim(at, 10, lease).await?.is_empty());
    ensure!(first[0].owner.created_by == acme.created_by && first[0].owner.active);
    ensure!(first[0].endpoint.id == every.id);
    ensure!(repos.webhooks.next_due(at).await? == Some(at + time::Duration::seconds(60)));
    let later = at + time::Duration::seconds(61);
    ensure!(repos.webhooks.claim(later, 10, lease).await?.len() == 2);
    Ok(())
}

pub async fn attempts_are_recorded_once_and_fifty_failures_disable_an_endpoint(
    repos: &Repositories,
) -> Outcome {
    let acme = a_partner(repos, "alice", "acme").await?;
    let owner = user("carol");
    repos.users.insert(&owner).await?;
    let made = endpoint(&acme, "https://hooks.example.com/a");
    repos.webhooks.create(&made).await?;
    repos.decks.insert(&deck(&owner, "one")).await?;
    let at = now();
    repos.webhooks.fan_out(10, at).await?;
    let lease = Duration::from_secs(60);
    let claimed = repos.webhooks.claim(at, 1, lease).await?;
    let delivery = claimed.first().context("a claim")?.delivery.clone();
    let schedule = RetrySchedule::parse("1m")?;
    let failed = AttemptOutcome::Answered {
        status: 500,
        body: "down".into(),
        duration: Duration::from_millis(5),
    };
    let record = AttemptRecord::decide(&delivery, &failed, at, &schedule, 0.0);
    repos.webhooks.record(&record).await?;
    // A late record of the same attempt (another worker after the lease) changes nothing.
    repos.webhooks.record(&record).await?;
    let log = repos
        .webhooks
        .deliveries("acme", made.id, 1, None)
        .await?
        .context("the endpoint")?;
    let stored = log.first().context("the delivery")?;
    ensure!(stored.status == DeliveryStatus::Pending && stored.attempt == 1);
    ensure!(stored.response_status == Some(500));
    ensure!(stored.next_attempt_at == Some(at + time::Duration::minutes(1)));
    ensure!(repos.webhooks.next_due(at).await? == Some(at + time::Duration::minutes(1)));
    ensure!(
        repos.webhooks.claim(at, 1, lease).await?.is_empty(),
        "claimed before due"
    );

    // Retry by hand: due now, and an ended delivery gets one more attempt.
    ensure!(
        repos
            .webhooks
            .retry("acme", made.id, delivery.id, at)
            .await?
    );
    ensure!(
        !repos
            .webhooks
            .retry("acme", made.id, DeliveryId(Uuid::now_v7()), at)
            .await?
    );
    let again = repos.webhooks.claim(at, 1, lease).await?;
    let delivery = again.first().context("a claim")?.delivery.clone();
    let last = AttemptRecord::decide(&delivery, &failed, at, &schedule, 0.0);
    ensure!(last.status == DeliveryStatus::Failed);
    repos.webhooks.record(&last).await?;
    ensure!(
        repos
            .webhooks
            .retry("acme", made.id, delivery.id, at)
            .await?
    );
    let stored = repos
        .webhooks
        .deliveries("acme", made.id, 1, None)
        .await?
        .context("the endpoint")?;
    ensure!(stored[0].status == DeliveryStatus::Pending);
    ensure!(
        stored[0].retries_used == ONE_MORE_ATTEMPT,
        "{:?}",
        stored[0]
    );

    // The retried delivery and 49 more failing for good, recorded at once as by many workers
    // (whose leases may have run out meanwhile), then the endpoint is disabled: no failure in
    // a row is lost to a concurrent record.
    for n in 0..49 {
        repos
            .decks
            .insert(&deck(&owner, &format!("deck {n}")))
            .await?;
    }
    repos.webhooks.fan_out(100, at).await?;
    let records: Vec<AttemptRecord> = repos
        .webhooks
        .deliveries("acme", made.id, 100, None)
        .await?
        .context("the endpoint")?
        .iter()
        .filter(|delivery| delivery.status == DeliveryStatus::Pending)
        .map(|delivery| {
            AttemptRecord::decide(delivery, &failed, at, &RetrySchedule::new(vec![]), 0.0)
        })
        .collect();
    let failures = records.len();
    futures_util::future::try_join_all(records.iter().map(|record| repos.webhooks.record(record)))
        .await?;
    ensure!(failures == 50, "{failures} attempts");
    let endpoint = repos
        .webhooks
        .find("acme", made.id)
        .await?
        .context("the endpoint")?;
    ensure!(!endpoint.enabled, "{endpoint:?}");
    // The first delivery ended failed before its manual retry: 51 in a row, none lost.
    ensure!(endpoint.consecutive_failures == 51, "{endpoint:?}");
    ensure!(endpoint.disabled_reason == Some(DisabledReason::Failing));
    ensure!(repos.webhooks.stats().await?.pending == 0);
    // Enabling again starts the count over.
    let enabled = repos
        .webhooks
        .update(
            "acme",
            made.id,
            &EndpointChanges {
                enabled: Some(true),
                ..EndpointChanges::default()
            },
        )
        .await?
        .context("the endpoint")?;
    ensure!(enabled.enabled && enabled.disabled_reason.is_none());
    ensure!(enabled.consecutive_failures == 0);

    // Ended deliveries past retention are pruned; pending ones never.
    let pruned = repos
        .webhooks
        .prune(at + time::Duration::days(31), 1000)
        .await?;
    ensure!(pruned == 50, "{pruned} pruned");
    Ok(())
}

/// Fair share (contract "Webhooks"): a claim goes round the endpoints, each one's oldest due
/// delivery before any one's second, and never has more than two of one endpoint in flight;
/// a recorded attempt or a lease that ran out makes room again. A flooded endpoint's older
/// queue does not come before another endpoint's first delivery.
pub async fn claims_go_round_the_endpoints_two_in_flight_at_most(repos: &Repositories) -> Outcome {
    let acme = a_partner(repos, "alice", "acme").await?;
    let rival = a_partner(repos, "bob", "rival").await?;
    let owner = user("carol");
    repos.users.insert(&owner).await?;
    let flooded = endpoint(&acme, "https://hooks.example.com/flooded");
    repos.webhooks.create(&flooded).await?;
    let start = now();
    for n in 0..20 {
        repos
            .decks
            .insert(&deck(&owner, &format!("flood {n}")))
            .await?;
    }
    repos.webhooks.fan_out(100, start).await?;
    let quiet = endpoint(&rival, "https://hooks.example.com/quiet");
    let other = endpoint(&rival, "https://hooks.example.com/other");
    repos.webhooks.create(&quiet).await?;
    repos.webhooks.create(&other).await?;
    let at = start + time::Duration::seconds(1);
    for n in 0..3 {
        repos
            .decks
            .insert(&deck(&owner, &format!("later {n}")))
            .await?;
    }
    repos.webhooks.fan_out(100, at).await?;
    let log = |id| async move {
        let mut log = repos
            .webhooks
            .deliveries("acme", id, 100, None)
            .await?
            .or(repos.webhooks.deliveries("rival", id, 100, None).await?)
            .context("the endpoint")?;
        // Oldest first.
        log.reverse();
        anyhow::Ok(
            log.into_iter()
                .map(|delivery| delivery.id)
                .collect::<Vec<_>>(),
        )
    };
    let (flooded_log, quiet_log, other_log) = (
        log(flooded.id).await?,
        log(quiet.id).await?,
        log(other.id).await?,
    );
    ensure!(flooded_log.len() == 23 && quiet_log.len() == 3 && other_log.len() == 3);

    let lease = Duration::from_secs(60);
    let ids = |claimed: &[deckhand_domain::webhooks::ports::ClaimedDelivery]| {
        let mut ids: Vec<DeliveryId> = claimed.iter().map(|c| c.delivery.id).collect();
        ids.sort();
        ids
    };
    let sorted = |mut ids: Vec<DeliveryId>| {
        ids.sort();
        ids
    };
    // One slot: the endpoint waiting longest. Then the first round, then the second.
    let one = repos.webhooks.claim(at, 1, lease).await?;
    ensure!(ids(&one) == [flooded_log[0]], "{:?}", ids(&one));
    let round = repos.webhooks.claim(at, 2, lease).await?;
    ensure!(
        ids(&round) == sorted(vec![quiet_log[0], other_log[0]]),
        "{:?}",
        ids(&round)
    );
    let second = repos.webhooks.claim(at, 32, lease).await?;
    ensure!(
        ids(&second) == sorted(vec![flooded_log[1], quiet_log[1], other_log[1]]),
        "{:?}",
        ids(&second)
    );
    // Every endpoint has two in flight: nothing more until one ends. A manual retry of a
    // delivery being attempted does not make it claimable beside that attempt.
    ensure!(repos.webhooks.claim(at, 32, lease).await?.is_empty());
    ensure!(
        repos
            .webhooks
            .retry("rival", other.id, other_log[1], at)
            .await?
    );
    ensure!(repos.webhooks.claim(at, 32, lease).await?.is_empty());
    let lease_end = at + time::Duration::seconds(60);
    ensure!(repos.webhooks.next_due(at).await? == Some(lease_end));
    // A recorded attempt makes room for exactly one more of its endpoint.
    let succeeded = AttemptOutcome::Answered {
        status: 204,
        body: String::new(),
        duration: Duration::from_millis(1),
    };
    let done = one.first().context("the first claim")?;
    repos
        .webhooks
        .record(&AttemptRecord::decide(
            &done.delivery,
            &succeeded,
            at,
            &RetrySchedule::new(vec![]),
            0.0,
        ))
        .await?;
    ensure!(repos.webhooks.next_due(at).await? <= Some(at));
    let next = repos.webhooks.claim(at, 32, lease).await?;
    ensure!(ids(&next) == [flooded_log[2]], "{:?}", ids(&next));
    // Leases that ran out (workers that died) are not in flight: their deliveries are due
    // again, two per endpoint, the oldest first.
    let later = lease_end + time::Duration::seconds(1);
    let again = repos.webhooks.claim(later, 32, lease).await?;
    ensure!(
        ids(&again)
            == sorted(vec![
                flooded_log[1],
                flooded_log[2],
                quiet_log[0],
                quiet_log[1],
                other_log[0],
                other_log[1],
            ]),
        "{:?}",
        ids(&again)
    );
    Ok(())
}

/// Many workers claiming at once never take one delivery twice nor more than two of one
/// endpoint, whatever its queue: one endpoint's 60 deliveries are older than the 30 of each of
/// five others. (`tests/postgres.rs` runs the same with two instances on one database.)
pub async fn concurrent_claims_take_each_delivery_once_and_two_per_endpoint_at_most(
    repos: &Repositories,
) -> Outcome {
    let claimed = crate::webhook_workers::flood_and_claim(std::slice::from_ref(repos), 8).await?;
    ensure!(claimed.deliveries == 60 + 5 * 30, "{claimed:?}");
    ensure!(claimed.most_in_flight <= 2, "{claimed:?}");
    Ok(())
}
