//! The repository contract: what every store promises the domain, written once and run against
//! each adapter, so the in-memory store cannot drift from PostgreSQL.
//!
//! Each contract is an async fn over the [`Repositories`] of a fresh, empty store. To add one,
//! write it here and add its name to the list in [`repository_contract_suite!`](crate::repository_contract_suite);
//! a test below fails if a contract is missing from that list.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{
    InsertApiKeyError, InsertPartnerError, InsertPatError, InsertUserError,
};
use deckhand_domain::identity::{
    ApiKeyId, GameScopes, Partner, PartnerSlug, PatId, PersonalAccessToken, Scope, Scopes, Tier,
    User, UserId,
};
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::db::TestDb;
use crate::fixtures::{api_key_for, now, partner_for, pat_for, user, username};

/// What the suite runs against: a store that stays alive while a test uses its repositories.
pub trait ContractStore {
    fn repositories(&self) -> Repositories;
}

impl ContractStore for Repositories {
    fn repositories(&self) -> Repositories {
        self.clone()
    }
}

impl ContractStore for TestDb {
    fn repositories(&self) -> Repositories {
        TestDb::repositories(self)
    }
}

/// One `#[tokio::test]` per contract, each over a fresh store made by `$store`, an expression
/// (it may `.await`) whose value implements [`ContractStore`]:
///
/// ```text
/// deckhand_testkit::repository_contract_suite!(deckhand_memory::repositories());
/// deckhand_testkit::repository_contract_suite!(deckhand_testkit::db::TestDb::new().await);
/// ```
///
/// The calling crate needs `tokio` (with `macros` and `rt`) among its dependencies.
#[macro_export]
macro_rules! repository_contract_suite {
    ($store:expr) => {
        $crate::repository_contract_suite!(@tests $store;
            // suite: start
            users_are_found_by_id_and_by_username,
            missing_users_are_none,
            a_taken_username_is_refused,
            users_round_trip_every_field,
            set_active_changes_the_flag_and_returns_the_user,
            set_active_on_a_missing_user_is_none,
            pats_are_found_by_hash_with_their_owner,
            pats_are_found_whatever_their_state,
            a_pat_for_an_unknown_user_is_refused,
            an_unknown_hash_finds_nothing,
            a_duplicate_token_hash_is_refused,
            pats_round_trip_scopes_and_timestamps_exactly,
            the_store_answers_a_ping,
            partners_round_trip_every_field,
            a_taken_partner_slug_is_refused,
            a_partner_of_an_unknown_user_is_refused,
            partner_set_active_changes_the_flag,
            api_keys_are_found_by_hash_with_their_current_partner,
            an_api_key_of_an_unknown_partner_is_refused,
            revoking_an_api_key_keeps_the_first_revocation,
            a_signature_is_recorded_once_per_partner,
            an_expired_signature_record_is_taken_over,
            // suite: end
        );
    };
    (@tests $store:expr; $($contract:ident,)+) => {
        $(
            #[::tokio::test]
            async fn $contract() {
                let store = $store;
                let repositories = $crate::contract::ContractStore::repositories(&store);
                if let Err(error) = $crate::contract::$contract(&repositories).await {
                    panic!("{error:?}");
                }
            }
        )+
    };
}

pub type Outcome = anyhow::Result<()>;

pub async fn users_are_found_by_id_and_by_username(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    assert_eq!(repos.users.find_by_id(alice.id).await?, Some(alice.clone()));
    assert_eq!(
        repos.users.find_by_username(&alice.username).await?,
        Some(alice)
    );
    Ok(())
}

pub async fn missing_users_are_none(repos: &Repositories) -> Outcome {
    repos.users.insert(&user("alice")).await?;
    assert_eq!(repos.users.find_by_id(UserId(Uuid::now_v7())).await?, None);
    assert_eq!(repos.users.find_by_username(&username("bob")).await?, None);
    Ok(())
}

pub async fn a_taken_username_is_refused(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    // Usernames are lower-cased on parsing, so this is the same name.
    let twin = user("ALICE");
    let result = repos.users.insert(&twin).await;
    assert!(
        matches!(result, Err(InsertUserError::UsernameTaken)),
        "expected UsernameTaken, got {result:?}"
    );
    assert_eq!(repos.users.find_by_id(twin.id).await?, None);
    assert_eq!(
        repos.users.find_by_username(&alice.username).await?,
        Some(alice)
    );
    Ok(())
}

pub async fn users_round_trip_every_field(repos: &Repositories) -> Outcome {
    let mut carol = user("carol_the-3rd");
    carol.active = false;
    carol.premium = true;
    carol.password_hash =
        Some("$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo".into());
    carol.created_at = datetime!(2024-02-29 23:59:59.999_999 UTC);
    let dave = user("dave");
    for user in [&carol, &dave] {
        repos.users.insert(user).await?;
        assert_eq!(repos.users.find_by_id(user.id).await?.as_ref(), Some(user));
    }
    Ok(())
}

pub async fn set_active_changes_the_flag_and_returns_the_user(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    let bob = user("bob");
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;

    let deactivated = repos.users.set_active(alice.id, false).await?;
    let expected = User {
        active: false,
        ..alice.clone()
    };
    assert_eq!(deactivated.as_ref(), Some(&expected));
    assert_eq!(repos.users.find_by_id(alice.id).await?, Some(expected));
    assert_eq!(repos.users.find_by_id(bob.id).await?, Some(bob));

    assert_eq!(repos.users.set_active(alice.id, true).await?, Some(alice));
    Ok(())
}

pub async fn set_active_on_a_missing_user_is_none(repos: &Repositories) -> Outcome {
    assert_eq!(
        repos
            .users
            .set_active(UserId(Uuid::now_v7()), false)
            .await?,
        None
    );
    Ok(())
}

pub async fn pats_are_found_by_hash_with_their_owner(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    let bob = user("bob");
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let alices = pat_for(&alice);
    let bobs = pat_for(&bob);
    repos.pats.insert(&alices).await?;
    repos.pats.insert(&bobs).await?;

    assert_eq!(
        repos.pats.find_by_hash(&alices.token_hash).await?,
        Some((alices, alice))
    );
    assert_eq!(
        repos.pats.find_by_hash(&bobs.token_hash).await?,
        Some((bobs, bob))
    );
    Ok(())
}

/// The repository returns tokens and owners as stored; judging them is the domain's job.
pub async fn pats_are_found_whatever_their_state(repos: &Repositories) -> Outcome {
    let mut mallory = user("mallory");
    mallory.active = false;
    repos.users.insert(&mallory).await?;
    let mut pat = pat_for(&mallory);
    pat.expires_at = Some(datetime!(2020-01-01 00:00 UTC));
    pat.revoked_at = Some(datetime!(2019-06-01 12:00 UTC));
    repos.pats.insert(&pat).await?;

    assert_eq!(
        repos.pats.find_by_hash(&pat.token_hash).await?,
        Some((pat, mallory))
    );
    Ok(())
}

pub async fn a_pat_for_an_unknown_user_is_refused(repos: &Repositories) -> Outcome {
    let ghost = user("ghost");
    let pat = pat_for(&ghost);
    let result = repos.pats.insert(&pat).await;
    assert!(
        matches!(result, Err(InsertPatError::UnknownUser)),
        "expected UnknownUser, got {result:?}"
    );
    assert_eq!(repos.pats.find_by_hash(&pat.token_hash).await?, None);
    Ok(())
}

pub async fn an_unknown_hash_finds_nothing(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    repos.pats.insert(&pat_for(&alice)).await?;
    assert_eq!(
        repos
            .pats
            .find_by_hash(&TokenHash::of("dh_pat_never_issued"))
            .await?,
        None
    );
    Ok(())
}

/// Hashes of random 256-bit tokens never collide; a repeated one is a bug to surface, not to
/// overwrite the first token with.
pub async fn a_duplicate_token_hash_is_refused(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let first = pat_for(&alice);
    repos.pats.insert(&first).await?;
    let copy = PersonalAccessToken {
        id: PatId(Uuid::now_v7()),
        ..first.clone()
    };
    let result = repos.pats.insert(&copy).await;
    assert!(
        matches!(result, Err(InsertPatError::Unexpected(_))),
        "expected Unexpected, got {result:?}"
    );
    assert_eq!(
        repos.pats.find_by_hash(&first.token_hash).await?,
        Some((first, alice))
    );
    Ok(())
}

pub async fn pats_round_trip_scopes_and_timestamps_exactly(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let everything = PersonalAccessToken {
        name: Some("ci: deploy — ünïcode".into()),
        scopes: Scopes::from_iter(Scope::ALL),
        created_at: now(),
        expires_at: Some(datetime!(2099-12-31 23:59:59.000_001 UTC)),
        revoked_at: Some(datetime!(2026-11-21 08:55:00.123_456 UTC)),
        ..pat_for(&alice)
    };
    let nothing = PersonalAccessToken {
        scopes: Scopes::none(),
        ..pat_for(&alice)
    };
    for pat in [everything, nothing] {
        repos.pats.insert(&pat).await?;
        let (found, _) = repos
            .pats
            .find_by_hash(&pat.token_hash)
            .await?
            .context("the token just inserted")?;
        assert_eq!(found, pat);
    }
    Ok(())
}

pub async fn the_store_answers_a_ping(repos: &Repositories) -> Outcome {
    repos.health.ping().await
}

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

#[cfg(test)]
mod tests {
    /// The suite is a list of names; this keeps it from forgetting a contract.
    #[test]
    fn every_contract_is_in_the_suite() {
        let source = include_str!("contract.rs");
        let Some((before, rest)) = source.split_once("// suite: start") else {
            panic!("the suite's start marker is gone");
        };
        let Some((suite, after)) = rest.split_once("// suite: end") else {
            panic!("the suite's end marker is gone");
        };
        let listed: Vec<&str> = suite
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect();
        let defined: Vec<&str> = [before, after]
            .iter()
            .flat_map(|part| part.lines())
            .filter_map(|line| line.strip_prefix("pub async fn "))
            .filter_map(|tail| tail.split('(').next())
            .collect();
        assert!(!defined.is_empty());
        for name in &defined {
            assert!(listed.contains(name), "contract {name} is not in the suite");
        }
        for name in &listed {
            assert!(
                defined.contains(name),
                "{name} is in the suite but not defined"
            );
        }
    }
}
