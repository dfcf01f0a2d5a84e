//! Users and their personal access tokens: found by id, name and hash, as stored; judging them is
//! the domain's job.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{InsertPatError, InsertUserError};
use deckhand_domain::identity::{PatId, PersonalAccessToken, Scope, Scopes, User, UserId};
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::fixtures::{now, pat_for, user, username};

use super::support::Outcome;

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
