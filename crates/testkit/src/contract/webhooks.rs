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

use super::Outcome;
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

    // Claims: each delivery once until its lease ends.
    let lease = Duration::from_secs(60);
    let first = repos.webhooks.claim(at, 2, lease).await?;
    let second = repos.webhooks.claim(at, 10, lease).await?;
    ensure!(
        first.len() == 2 && second.len() == 1,
        "{} {}",
        first.len(),
        second.len()
    );
    ensure!(repos.webhooks.claim(at, 10, lease).await?.is_empty());
    ensure!(first[0].owner.created_by == acme.created_by && first[0].owner.active);
    ensure!(first[0].endpoint.id == every.id);
    let later = at + time::Duration::seconds(61);
    ensure!(repos.webhooks.claim(later, 10, lease).await?.len() == 3);
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
    ensure!(repos.webhooks.next_due().await? == Some(at + time::Duration::minutes(1)));
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

    // The retried delivery and 49 more failing for good, recorded at once as by many workers, then
    // the endpoint is disabled: no failure in a row is lost to a concurrent record.
    for n in 0..49 {
        repos
            .decks
            .insert(&deck(&owner, &format!("deck {n}")))
            .await?;
    }
    repos.webhooks.fan_out(100, at).await?;
    let records: Vec<AttemptRecord> = repos
        .webhooks
        .claim(at, 100, lease)
        .await?
        .iter()
        .map(|claimed| {
            AttemptRecord::decide(
                &claimed.delivery,
                &failed,
                at,
                &RetrySchedule::new(vec![]),
                0.0,
            )
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
