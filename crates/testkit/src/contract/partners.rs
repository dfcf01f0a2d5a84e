//! Partners and their API keys and request signatures: round trips, refusals, revocation and
//! one record per signature.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{InsertApiKeyError, InsertPartnerError};
use deckhand_domain::identity::{ApiKeyId, GameScopes, Partner, PartnerSlug, Scope, Scopes, Tier};
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::fixtures::{api_key_for, now, partner_for, user};

use super::support::Outcome;

pub async fn partners_round_trip_every_field(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let everything = Partner {
        scopes: Scopes::from_iter(Scope::ALL),
        game_scopes: GameScopes::parse_list("mtg lorcana")?,
        tier: Tier::parse("gold_2")?,
        active: false,
        created_at: datetime!(2024-02-29 23:59:59.999_999 UTC),
        ..partner_for(&alice, "acme-42")
    };
    let plain = Partner {
        scopes: Scopes::none(),
        ..partner_for(&alice, "zz")
    };
    for partner in [everything, plain] {
        repos.partners.insert(&partner).await?;
        assert_eq!(
            repos.partners.find_by_slug(&partner.slug).await?,
            Some(partner)
        );
    }
    assert_eq!(
        repos
            .partners
            .find_by_slug(&PartnerSlug::parse("nobody")?)
            .await?,
        None
    );
    Ok(())
}

pub async fn a_taken_partner_slug_is_refused(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let first = partner_for(&alice, "acme");
    repos.partners.insert(&first).await?;
    let result = repos.partners.insert(&partner_for(&alice, "acme")).await;
    assert!(
        matches!(result, Err(InsertPartnerError::SlugTaken)),
        "expected SlugTaken, got {result:?}"
    );
    assert_eq!(repos.partners.find_by_slug(&first.slug).await?, Some(first));
    Ok(())
}

pub async fn a_partner_of_an_unknown_user_is_refused(repos: &Repositories) -> Outcome {
    let partner = partner_for(&user("ghost"), "acme");
    let result = repos.partners.insert(&partner).await;
    assert!(
        matches!(result, Err(InsertPartnerError::UnknownUser)),
        "expected UnknownUser, got {result:?}"
    );
    assert_eq!(repos.partners.find_by_slug(&partner.slug).await?, None);
    Ok(())
}

pub async fn partner_set_active_changes_the_flag(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let acme = partner_for(&alice, "acme");
    let other = partner_for(&alice, "other");
    repos.partners.insert(&acme).await?;
    repos.partners.insert(&other).await?;
    let disabled = Partner {
        active: false,
        ..acme.clone()
    };
    assert_eq!(
        repos.partners.set_active(&acme.slug, false).await?,
        Some(disabled.clone())
    );
    assert_eq!(
        repos.partners.find_by_slug(&acme.slug).await?,
        Some(disabled)
    );
    assert_eq!(repos.partners.find_by_slug(&other.slug).await?, Some(other));
    assert_eq!(
        repos
            .partners
            .set_active(&PartnerSlug::parse("nobody")?, false)
            .await?,
        None
    );
    Ok(())
}

/// The partner comes back as it is now, so disabling it stops its keys at once.
pub async fn api_keys_are_found_by_hash_with_their_current_partner(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let acme = partner_for(&alice, "acme");
    repos.partners.insert(&acme).await?;
    let key = api_key_for(&acme);
    repos.api_keys.insert(&key).await?;
    assert_eq!(
        repos.api_keys.find_by_hash(&key.key_hash).await?,
        Some((key.clone(), acme.clone()))
    );
    repos.partners.set_active(&acme.slug, false).await?;
    let (_, partner) = repos
        .api_keys
        .find_by_hash(&key.key_hash)
        .await?
        .context("the key just inserted")?;
    assert!(!partner.active);
    assert_eq!(
        repos
            .api_keys
            .find_by_hash(&TokenHash::of("dh_key_never_issued"))
            .await?,
        None
    );
    Ok(())
}

pub async fn an_api_key_of_an_unknown_partner_is_refused(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let key = api_key_for(&partner_for(&alice, "ghost"));
    let result = repos.api_keys.insert(&key).await;
    assert!(
        matches!(result, Err(InsertApiKeyError::UnknownPartner)),
        "expected UnknownPartner, got {result:?}"
    );
    assert_eq!(repos.api_keys.find_by_hash(&key.key_hash).await?, None);
    Ok(())
}

pub async fn revoking_an_api_key_keeps_the_first_revocation(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let acme = partner_for(&alice, "acme");
    repos.partners.insert(&acme).await?;
    let key = api_key_for(&acme);
    let other = api_key_for(&acme);
    repos.api_keys.insert(&key).await?;
    repos.api_keys.insert(&other).await?;
    let first = datetime!(2026-11-21 08:55:00.123_456 UTC);
    let revoked = repos
        .api_keys
        .revoke(key.id, first)
        .await?
        .context("an existing key")?;
    assert_eq!(revoked.revoked_at, Some(first));
    let again = repos
        .api_keys
        .revoke(key.id, datetime!(2026-12-01 00:00 UTC))
        .await?
        .context("an existing key")?;
    assert_eq!(again.revoked_at, Some(first));
    let (stored, _) = repos
        .api_keys
        .find_by_hash(&key.key_hash)
        .await?
        .context("the key")?;
    assert_eq!(stored.revoked_at, Some(first));
    let (untouched, _) = repos
        .api_keys
        .find_by_hash(&other.key_hash)
        .await?
        .context("the other key")?;
    assert_eq!(untouched.revoked_at, None);
    assert_eq!(
        repos
            .api_keys
            .revoke(ApiKeyId(Uuid::now_v7()), first)
            .await?,
        None
    );
    Ok(())
}

pub async fn a_signature_is_recorded_once_per_partner(repos: &Repositories) -> Outcome {
    let acme = PartnerSlug::parse("acme")?;
    let other = PartnerSlug::parse("other")?;
    let at = now();
    let until = at + time::Duration::seconds(600);
    let replays = &repos.signature_replays;
    assert!(
        replays
            .record_signature_once(&acme, &[1; 32], at, until)
            .await?
    );
    assert!(
        !replays
            .record_signature_once(&acme, &[1; 32], at, until)
            .await?
    );
    assert!(
        replays
            .record_signature_once(&acme, &[2; 32], at, until)
            .await?
    );
    assert!(
        replays
            .record_signature_once(&other, &[1; 32], at, until)
            .await?
    );
    let later = at + time::Duration::seconds(599);
    assert!(
        !replays
            .record_signature_once(&acme, &[1; 32], later, until)
            .await?
    );
    Ok(())
}

pub async fn an_expired_signature_record_is_taken_over(repos: &Repositories) -> Outcome {
    let acme = PartnerSlug::parse("acme")?;
    let at = now();
    let ttl = time::Duration::seconds(600);
    let replays = &repos.signature_replays;
    assert!(
        replays
            .record_signature_once(&acme, &[7; 32], at, at + ttl)
            .await?
    );
    // Expired records (of this and other signatures) are pruned or replaced.
    assert!(
        replays
            .record_signature_once(&acme, &[8; 32], at, at + ttl)
            .await?
    );
    let after = at + ttl;
    assert!(
        replays
            .record_signature_once(&acme, &[7; 32], after, after + ttl)
            .await?
    );
    assert!(
        !replays
            .record_signature_once(&acme, &[7; 32], after, after + ttl)
            .await?
    );
    assert!(
        replays
            .record_signature_once(&acme, &[8; 32], after, after + ttl)
            .await?
    );
    Ok(())
}
