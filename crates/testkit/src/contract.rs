//! The repository contract: what every store promises the domain, written once and run against
//! each adapter, so the in-memory store cannot drift from PostgreSQL.
//!
//! Each contract is an async fn over the [`Repositories`] of a fresh, empty store. To add one,
//! write it here and add its name to the list in [`repository_contract_suite!`](crate::repository_contract_suite);
//! a test below fails if a contract is missing from that list.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{InsertPatError, InsertUserError};
use deckhand_domain::identity::{PatId, PersonalAccessToken, Scope, Scopes, User, UserId};
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::db::TestDb;
use crate::fixtures::{now, pat_for, printing, user, username};
use deckhand_domain::catalog::{CardPick, CatalogCounts, Preference, PrintingKeys, format_id};

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
            games_and_formats_are_seeded,
            catalog_upserts_are_idempotent_and_replace_by_variant,
            printings_are_found_by_every_exact_key,
            cards_are_found_by_name_and_front_face,
            preferred_printings_follow_the_documented_order,
            a_catalog_needs_a_known_game,
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

/// The rows the catalog migration seeds, identical in every store.
pub async fn games_and_formats_are_seeded(repos: &Repositories) -> Outcome {
    let games = repos.catalog.games().await?;
    let slugs: Vec<&str> = games.iter().map(|game| game.slug.as_str()).collect();
    assert_eq!(slugs, ["mtg", "lorcana"]);
    let mtg = repos.catalog.game("mtg").await?.context("mtg")?;
    assert_eq!(mtg, games[0]);
    assert_eq!(mtg.colors, ["W", "U", "B", "R", "G"]);
    let sections: Vec<(&str, &str, bool)> = mtg
        .sections
        .iter()
        .map(|s| (s.key.as_str(), s.label.as_str(), s.counted))
        .collect();
    assert_eq!(
        sections,
        [
            ("commander", "Commander", true),
            ("companion", "Companion", true),
            ("mainboard", "Deck", true),
            ("sideboard", "Sideboard", true),
            ("maybeboard", "Maybeboard", false),
        ]
    );
    let formats = repos.catalog.formats("mtg").await?;
    let slugs: Vec<&str> = formats.iter().map(|f| f.slug.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "standard",
            "pioneer",
            "modern",
            "legacy",
            "vintage",
            "pauper",
            "commander"
        ]
    );
    for format in formats {
        assert_eq!(format.id, format_id("mtg", &format.slug), "{}", format.slug);
    }
    let lorcana = repos.catalog.formats("lorcana").await?;
    assert!(
        lorcana
            .iter()
            .all(|f| f.id == format_id("lorcana", &f.slug))
    );
    assert_eq!(games[1].colors.len(), 6);
    assert_eq!(repos.catalog.game("chess").await?, None);
    assert!(repos.catalog.formats("chess").await?.is_empty());
    Ok(())
}

pub async fn catalog_upserts_are_idempotent_and_replace_by_variant(
    repos: &Repositories,
) -> Outcome {
    let card = Uuid::new_v4();
    let mut first = printing(card, "Llanowar Elves", "dom", "168");
    let second = printing(card, "Llanowar Elves", "m19", "314");
    let batch = [first.clone(), second.clone()];
    repos.catalog.upsert("mtg", &batch).await?;
    repos.catalog.upsert("mtg", &batch).await?;
    let counts = repos.catalog.counts("mtg").await?;
    assert_eq!(
        counts,
        CatalogCounts {
            cards: 1,
            printings: 2
        }
    );
    assert_eq!(
        repos.catalog.counts("lorcana").await?,
        CatalogCounts::default()
    );

    first.printing.collector_number = "168a".into();
    first.printing.catalog_a_id = Some("42".into());
    first.legalities.insert("modern".into(), "banned".into());
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&first))
        .await?;
    let keys = PrintingKeys {
        variant_ids: vec![first.printing.variant_id],
        ..PrintingKeys::default()
    };
    assert_eq!(
        repos.catalog.find_printings("mtg", &keys).await?,
        vec![first]
    );
    // The old (set, number) key no longer finds it.
    let old = PrintingKeys {
        set_numbers: vec![("dom".into(), "168".into())],
        ..PrintingKeys::default()
    };
    assert!(repos.catalog.find_printings("mtg", &old).await?.is_empty());
    Ok(())
}

pub async fn printings_are_found_by_every_exact_key(repos: &Repositories) -> Outcome {
    let card = Uuid::new_v4();
    let mut full = printing(card, "Fire // Ice", "mh2", "290★");
    full.face_names = vec!["Fire".into(), "Ice".into()];
    full.printing.catalog_a_id = Some("1001".into());
    full.printing.catalog_b_id = Some("2002".into());
    full.printing.catalog_c_id = Some("3003".into());
    full.printing.image_url = Some("https://img.example/fire.jpg".into());
    full.printing.colors = vec!["U".into(), "R".into()];
    full.lang = "ja".into();
    full.released_at = None;
    full.preference = Preference::OtherLanguage;
    let other = printing(Uuid::new_v4(), "Grizzly Bears", "m19", "7");
    repos
        .catalog
        .upsert("mtg", &[full.clone(), other.clone()])
        .await?;

    let only = |keys: PrintingKeys| async move { repos.catalog.find_printings("mtg", &keys).await };
    let expected = vec![full.clone()];
    let none = PrintingKeys::default();
    assert_eq!(
        only(PrintingKeys {
            variant_ids: vec![full.printing.variant_id],
            ..none.clone()
        })
        .await?,
        expected
    );
    assert_eq!(
        only(PrintingKeys {
            catalog_a_ids: vec!["1001".into()],
            ..none.clone()
        })
        .await?,
        expected
    );
    assert_eq!(
        only(PrintingKeys {
            catalog_b_ids: vec!["2002".into()],
            ..none.clone()
        })
        .await?,
        expected
    );
    assert_eq!(
        only(PrintingKeys {
            catalog_c_ids: vec!["3003".into()],
            ..none.clone()
        })
        .await?,
        expected
    );
    assert_eq!(
        only(PrintingKeys {
            set_numbers: vec![("mh2".into(), "290★".into())],
            ..none.clone()
        })
        .await?,
        expected
    );
    // Catalog ids are per kind: a catalog_b value does not match catalog_a.
    assert!(
        only(PrintingKeys {
            catalog_a_ids: vec!["2002".into()],
            ..none.clone()
        })
        .await?
        .is_empty()
    );
    // Each printing once, whatever the number of keys that find it.
    let both = only(PrintingKeys {
        variant_ids: vec![full.printing.variant_id, other.printing.variant_id],
        catalog_a_ids: vec!["1001".into()],
        set_numbers: vec![("m19".into(), "7".into())],
        ..none.clone()
    })
    .await?;
    assert_eq!(both.len(), 2);
    // Another game's catalog is another catalog.
    let keys = PrintingKeys {
        variant_ids: vec![full.printing.variant_id],
        ..none
    };
    assert!(
        repos
            .catalog
            .find_printings("lorcana", &keys)
            .await?
            .is_empty()
    );
    Ok(())
}

pub async fn cards_are_found_by_name_and_front_face(repos: &Repositories) -> Outcome {
    let split = Uuid::new_v4();
    let mut fire_ice = printing(split, "Fire // Ice", "mh2", "290");
    fire_ice.face_names = vec!["Fire".into(), "Ice".into()];
    let bolt = Uuid::new_v4();
    repos
        .catalog
        .upsert(
            "mtg",
            &[fire_ice, printing(bolt, "Lightning Bolt", "m10", "146")],
        )
        .await?;
    let found = repos
        .catalog
        .cards_named(
            "mtg",
            &["fire".into(), "lightning bolt".into(), "ice".into()],
        )
        .await?;
    let mut ids: Vec<Uuid> = found.iter().map(|card| card.card_id).collect();
    ids.sort();
    let mut expected = vec![split, bolt];
    expected.sort();
    assert_eq!(
        ids, expected,
        "the back face's name finds nothing: {found:?}"
    );
    let fire = found
        .iter()
        .find(|card| card.card_id == split)
        .context("fire")?;
    assert_eq!(
        (fire.name_key.as_str(), fire.front_face_key.as_str()),
        ("fire // ice", "fire")
    );
    assert!(
        repos
            .catalog
            .cards_named("mtg", &["Lightning Bolt".into()])
            .await?
            .is_empty()
    );
    Ok(())
}

pub async fn preferred_printings_follow_the_documented_order(repos: &Repositories) -> Outcome {
    use time::macros::date;
    let card = Uuid::new_v4();
    let mut old = printing(card, "Shock", "m19", "156");
    old.released_at = Some(date!(2018 - 07 - 13));
    let mut new = printing(card, "Shock", "m20", "160");
    new.released_at = Some(date!(2019 - 07 - 12));
    let mut promo = printing(card, "Shock", "pm20", "160p");
    promo.released_at = Some(date!(2019 - 08 - 01));
    promo.preference = Preference::Promo;
    let mut foreign = printing(card, "Shock", "m20", "160");
    foreign.released_at = Some(date!(2020 - 01 - 01));
    foreign.lang = "de".into();
    foreign.preference = Preference::OtherLanguage;
    let mut undated = printing(card, "Shock", "m19", "156b");
    undated.released_at = None;
    let lonely = Uuid::new_v4();
    let mut only_promo = printing(lonely, "Lonely", "pxyz", "1");
    only_promo.preference = Preference::Promo;
    let all = [
        old.clone(),
        new.clone(),
        promo,
        foreign,
        undated,
        only_promo.clone(),
    ];
    repos.catalog.upsert("mtg", &all).await?;

    let picks = [
        CardPick {
            card_id: card,
            set: None,
        },
        CardPick {
            card_id: card,
            set: Some("m19".into()),
        },
        CardPick {
            card_id: lonely,
            set: None,
        },
        CardPick {
            card_id: card,
            set: Some("nope".into()),
        },
        CardPick {
            card_id: Uuid::new_v4(),
            set: None,
        },
    ];
    let mut found = repos.catalog.preferred_printings("mtg", &picks).await?;
    found.sort_by_key(|(pick, _)| picks.iter().position(|p| p == pick));
    let chosen: Vec<(CardPick, Uuid)> = found
        .into_iter()
        .map(|(pick, entry)| (pick, entry.printing.variant_id))
        .collect();
    assert_eq!(
        chosen,
        vec![
            (picks[0].clone(), new.printing.variant_id),
            (picks[1].clone(), old.printing.variant_id),
            (picks[2].clone(), only_promo.printing.variant_id),
        ]
    );
    Ok(())
}

pub async fn a_catalog_needs_a_known_game(repos: &Repositories) -> Outcome {
    let entry = printing(Uuid::new_v4(), "Pawn", "std", "1");
    assert!(repos.catalog.upsert("chess", &[entry]).await.is_err());
    assert_eq!(
        repos.catalog.counts("chess").await?,
        CatalogCounts::default()
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
