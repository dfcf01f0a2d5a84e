//! The repository contract: what every store promises the domain, written once and run against
//! each adapter, so the in-memory store cannot drift from PostgreSQL.
//!
//! Each contract is an async fn over the [`Repositories`] of a fresh, empty store. To add one,
//! write it here and add its name to the list in [`repository_contract_suite!`](crate::repository_contract_suite);
//! a test below fails if a contract is missing from that list.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::decks::ports::{
    InsertDeckError, NewDeck, ReviseDeckError, Reviser, Revision, RevisionRefused, ViewCount,
};
use deckhand_domain::decks::{
    CardSnapshot, ContentType, Deck, DeckCard, DeckFilters, DeckGuide, DeckId, DeckListing,
    DeckQuery, DeckReader, DeckSort, ForkOrigin, ForkedFrom, HistoryType, Page, PageRequest,
    SortOrder, SourceAccess, Visibility, trending,
};
use deckhand_domain::events::EventType;
use deckhand_domain::idempotency::ports::{ClaimRequest, Claimed, KeyClaim, KeyRecord};
use deckhand_domain::idempotency::{self, Fingerprint, IdempotencyKey, StoredResponse};
use deckhand_domain::identity::ports::{
    InsertApiKeyError, InsertPartnerError, InsertPatError, InsertUserError,
};
use deckhand_domain::identity::{
    ApiKeyId, GameScopes, Partner, PartnerSlug, PatId, PersonalAccessToken, Scope, Scopes, Tier,
    User, UserId,
};
use deckhand_domain::oauth::ports::{
    CodeRedemption, GrantContext, InsertClientError, IssuedTokens,
};
use deckhand_domain::oauth::{
    AccessToken, AuthorizationCode, ClientId, ClientKind, FailureCount, Grant, GrantId, GrantType,
    OAuthClient, RedirectUri, RefreshToken, Session, ThrottleKey,
};
use deckhand_domain::ports::Repositories;
use deckhand_domain::sideboards::ports::{ReviseGuideError, ReviseMatchupError};
use deckhand_domain::sideboards::{
    Difficulty, GuideFilters, GuideId, GuideQuery, GuideSort, MatchupContent, SideboardGuide,
};
use time::macros::datetime;
use uuid::Uuid;

use crate::db::TestDb;
use crate::fixtures::{
    self, api_key_for, deck, guide_archived, matchup, now, partner_for, pat_for, printing,
    revision_of, update_to, user, username,
};
use std::collections::BTreeMap;

use deckhand_domain::catalog::{
    CardPick, CatalogCounts, CatalogEntry, FeaturedSlot, Game, Preference, PrintingKeys, format_id,
};
use deckhand_domain::formats::{
    CardFacts, CardTextRules, CopyAllowance, Legality, LegalityChange, PartnerAbility, seeds,
};

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
            fab_is_seeded_with_its_sections_pitches_and_formats,
            fab_cards_of_the_real_file_import_idempotently,
            fab_formats_and_hero_facts_are_what_a_check_reads,
            formats_carry_their_deck_rules,
            card_facts_round_trip_with_seeded_and_imported_clauses,
            imports_record_each_legality_change_once,
            operators_record_legality_changes_from_a_date,
            shipped_history_joins_every_card_it_names,
            imports_record_what_differs_on_the_files_day,
            decks_round_trip_and_start_at_version_one,
            a_duplicate_provenance_is_refused_per_owner,
            revisions_bump_the_version_and_append_history,
            every_version_reads_back_the_cards_it_was_saved_with,
            a_revision_clears_nullable_fields,
            a_refused_revision_changes_nothing,
            revising_a_missing_deck_is_not_found,
            lists_show_public_and_own_decks_never_archived_ones,
            lists_filter_sort_and_page_stably,
            views_count_once_per_visitor_and_window,
            trending_ranks_recent_views_first,
            views_count_only_for_readers_who_may_see_the_deck,
            list_items_carry_what_lists_show,
            a_deck_overview_is_the_deck_without_its_cards,
            list_totals_follow_the_stores_own_writes,
            every_kind_of_record_is_pruned_after_its_time_in_small_batches,
            a_guide_is_created_replaced_and_deleted_with_has_guide,
            partners_round_trip_every_field,
            a_taken_partner_slug_is_refused,
            a_partner_of_an_unknown_user_is_refused,
            partner_set_active_changes_the_flag,
            api_keys_are_found_by_hash_with_their_current_partner,
            an_api_key_of_an_unknown_partner_is_refused,
            revoking_an_api_key_keeps_the_first_revocation,
            a_signature_is_recorded_once_per_partner,
            an_expired_signature_record_is_taken_over,
            sideboard_guides_round_trip_with_their_decks_and_matchups,
            has_sideboard_guide_follows_attach_detach_archive_and_unarchive,
            guide_lists_show_public_and_own_guides_never_archived_ones,
            guide_lists_filter_sort_and_page_stably,
            matchups_are_added_revised_and_deleted_on_their_guide_only,
            revising_a_missing_guide_is_not_found,
            oauth_clients_round_trip_with_their_partner,
            an_oauth_client_of_an_unknown_partner_is_refused,
            a_code_is_redeemed_once_with_its_grant_and_tokens,
            concurrent_redemptions_of_one_code_let_exactly_one_win,
            a_refresh_token_rotates_once_and_only_while_live,
            concurrent_rotations_of_one_refresh_token_let_exactly_one_win,
            revoking_a_grant_reaches_every_token_and_keeps_the_first_time,
            revoking_an_access_token_leaves_its_grant,
            tokens_come_back_with_the_current_state_of_user_and_partner,
            sessions_round_trip_with_their_user,
            failed_sign_ins_are_counted_restarted_and_forgotten_per_key,
            a_bound_grant_keeps_its_key_thumbprint,
            a_dpop_proof_id_is_recorded_once_per_key,
            an_expired_dpop_proof_id_is_taken_over,
            concurrent_records_of_one_dpop_proof_id_let_exactly_one_win,
            an_idempotency_key_is_claimed_once_per_caller,
            expired_released_and_abandoned_keys_are_claimed_again,
            concurrent_first_claims_of_a_key_let_exactly_one_win,
            deck_likes_count_once_per_user_and_follow_the_sort,
            concurrent_likes_lose_nothing,
            forks_name_their_source_as_it_is_now_and_are_listed_by_it,
            concurrent_forks_of_one_deck_all_count,
            guide_likes_count_once_per_user_for_visible_guides,
            every_change_writes_its_event_and_a_refused_one_none,
            the_feed_shows_each_reader_what_it_may_read_now,
            pruned_events_expire_the_cursors_before_them,
            a_waiting_reader_wakes_when_an_event_commits,
            webhook_endpoints_round_trip_and_stay_with_their_partner,
            a_partner_has_at_most_sixteen_webhook_endpoints,
            events_fan_out_once_into_claimable_deliveries,
            attempts_are_recorded_once_and_fifty_failures_disable_an_endpoint,
            claims_go_round_the_endpoints_two_in_flight_at_most,
            concurrent_claims_take_each_delivery_once_and_two_per_endpoint_at_most,
            collection_deltas_apply_all_or_nothing_with_a_version_and_event,
            concurrent_collection_writes_lose_no_delta,
            collection_lists_filter_and_page_in_card_order,
            collection_events_are_listed_to_their_owner_only,
            card_filters_hold_every_card_and_none_excluded_under_the_read_rule,
            card_usage_counts_public_decks_of_the_format_and_their_companions,
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

mod card_search;
pub use card_search::*;
mod collections;
pub use collections::*;
mod events;
pub use events::*;
mod fab;
pub use fab::*;
mod webhooks;
pub use webhooks::*;

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
    assert_eq!(slugs, ["mtg", "lorcana", "fab"]);
    let mtg = repos.catalog.game("mtg").await?.context("mtg")?;
    assert_eq!(mtg, games[0]);
    assert_eq!(mtg.colors, ["W", "U", "B", "R", "G"]);
    let sections = |game: &Game| -> Vec<(String, String, bool, Option<FeaturedSlot>)> {
        game.sections
            .iter()
            .map(|s| (s.key.clone(), s.label.clone(), s.counted, s.featured_slot))
            .collect()
    };
    let expected = |rows: &[(&str, &str, bool, Option<FeaturedSlot>)]| -> Vec<_> {
        rows.iter()
            .map(|&(key, label, counted, slot)| (key.to_owned(), label.to_owned(), counted, slot))
            .collect()
    };
    assert_eq!(
        sections(&mtg),
        expected(&[
            (
                "commander",
                "Commander",
                true,
                Some(FeaturedSlot::Commander)
            ),
            (
                "companion",
                "Companion",
                true,
                Some(FeaturedSlot::Companion)
            ),
            ("mainboard", "Deck", true, None),
            ("sideboard", "Sideboard", true, None),
            ("maybeboard", "Maybeboard", false, None),
        ])
    );
    // A hero is the featured card of a fab deck.
    assert_eq!(
        sections(&games[2]),
        expected(&[
            ("hero", "Hero", true, Some(FeaturedSlot::Hero)),
            ("arena", "Arena", true, None),
            ("deck", "Deck", true, None),
            ("inventory", "Inventory", true, None),
            ("maybeboard", "Maybeboard", false, None),
        ])
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
    repos
        .catalog
        .upsert("mtg", &batch, crate::fixtures::now())
        .await?;
    repos
        .catalog
        .upsert("mtg", &batch, crate::fixtures::now())
        .await?;
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
    std::sync::Arc::make_mut(&mut first.legalities).insert("modern".into(), "banned".into());
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&first), crate::fixtures::now())
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
        .upsert(
            "mtg",
            &[full.clone(), other.clone()],
            crate::fixtures::now(),
        )
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
            crate::fixtures::now(),
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
    repos
        .catalog
        .upsert("mtg", &all, crate::fixtures::now())
        .await?;

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
    assert!(
        repos
            .catalog
            .upsert("chess", &[entry], crate::fixtures::now())
            .await
            .is_err()
    );
    assert_eq!(
        repos.catalog.counts("chess").await?,
        CatalogCounts::default()
    );
    Ok(())
}

// Format checks.

pub async fn formats_carry_their_deck_rules(repos: &Repositories) -> Outcome {
    let formats = repos.catalog.formats("mtg").await?;
    for format in &formats {
        assert_eq!(
            format.rules,
            seeds::mtg_rules(&format.slug),
            "{}",
            format.slug
        );
        assert!(format.rules.is_some(), "{}", format.slug);
    }
    let commander = formats
        .iter()
        .find(|format| format.slug == "commander")
        .and_then(|format| format.rules.clone())
        .context("commander rules")?;
    assert!(commander.singleton);
    assert_eq!(
        commander.commander.map(|c| (c.count_max, c.deck_size)),
        Some((2, 100))
    );
    // A game whose formats have no rule rows: a check of them is refused.
    let lorcana = repos.catalog.formats("lorcana").await?;
    assert!(!lorcana.is_empty());
    assert!(lorcana.iter().all(|format| format.rules.is_none()));
    Ok(())
}

/// Facts of the cards with these ids, by name.
async fn facts_by_name(
    repos: &Repositories,
    ids: &[Uuid],
) -> anyhow::Result<std::collections::BTreeMap<String, CardFacts>> {
    Ok(repos
        .catalog
        .card_facts("mtg", ids)
        .await?
        .into_iter()
        .map(|facts| (facts.name.clone(), facts))
        .collect())
}

pub async fn card_facts_round_trip_with_seeded_and_imported_clauses(
    repos: &Repositories,
) -> Outcome {
    let at = datetime!(2026-01-01 00:00 UTC);
    let mut rats = printing(Uuid::new_v4(), "Relentless Rats", "m11", "111");
    rats.printing.type_line = "Creature — Rat".into();
    rats.color_identity = vec!["B".into()];
    let mut daretti = printing(Uuid::new_v4(), "Daretti, Scrap Savant", "c14", "33");
    daretti.printing.type_line = "Legendary Planeswalker — Daretti".into();
    daretti.color_identity = vec!["R".into()];
    let mut hounds = printing(Uuid::new_v4(), "Test Hounds", "tst", "1");
    hounds.text_rules = Some(CardTextRules {
        copies: CopyAllowance::UpTo(3),
        can_be_commander: false,
        partner: PartnerAbility::None,
        ..CardTextRules::default()
    });
    hounds.color_identity = vec!["W".into(), "G".into()];
    let plain = printing(Uuid::new_v4(), "Plain Card", "tst", "2");
    let ids: Vec<Uuid> = [&rats, &daretti, &hounds, &plain]
        .iter()
        .map(|entry| entry.printing.card_id)
        .collect();
    repos
        .catalog
        .upsert(
            "mtg",
            &[rats.clone(), daretti.clone(), hounds.clone(), plain.clone()],
            at,
        )
        .await?;
    let mut asked = ids.clone();
    asked.push(Uuid::new_v4());
    let facts = facts_by_name(repos, &asked).await?;
    assert_eq!(facts.len(), 4, "unknown ids are left out");
    let rats_facts = &facts["Relentless Rats"];
    assert_eq!(rats_facts.card_id, rats.printing.card_id);
    assert_eq!(rats_facts.type_line, "Creature — Rat");
    assert_eq!(rats_facts.color_identity, ["B"]);
    // Seeded by name, before the card was imported.
    assert_eq!(rats_facts.text.copies, CopyAllowance::Any);
    assert!(facts["Daretti, Scrap Savant"].text.can_be_commander);
    assert_eq!(facts["Test Hounds"].text.copies, CopyAllowance::UpTo(3));
    assert_eq!(facts["Test Hounds"].color_identity, ["W", "G"]);
    assert!(facts["Plain Card"].text.is_default());
    assert_eq!(
        facts["Plain Card"]
            .legalities
            .get("standard")
            .map(Vec::as_slice),
        Some(&[LegalityChange::recorded(at, Legality::Legal)][..])
    );
    // Only the game's formats are recorded.
    let mut odd = plain.clone();
    std::sync::Arc::make_mut(&mut odd.legalities).insert("oldschool".into(), "legal".into());
    repos.catalog.upsert("mtg", &[odd], at).await?;
    let facts = facts_by_name(repos, &ids).await?;
    assert!(!facts["Plain Card"].legalities.contains_key("oldschool"));

    // A file with rules text replaces a seeded clause, also with "nothing special".
    rats.text_rules = Some(CardTextRules::default());
    hounds.text_rules = Some(CardTextRules {
        copies: CopyAllowance::Any,
        can_be_commander: true,
        partner: PartnerAbility::With("test friend".into()),
        ..CardTextRules::default()
    });
    repos.catalog.upsert("mtg", &[rats, hounds], at).await?;
    let facts = facts_by_name(repos, &ids).await?;
    assert!(facts["Relentless Rats"].text.is_default());
    assert_eq!(facts["Test Hounds"].text.copies, CopyAllowance::Any);
    assert!(facts["Test Hounds"].text.can_be_commander);
    assert_eq!(
        facts["Test Hounds"].text.partner,
        PartnerAbility::With("test friend".into())
    );
    // Partners seeded for files without rules text, by name.
    let thrasios = printing(Uuid::new_v4(), "Thrasios, Triton Hero", "c16", "46");
    let pir = printing(Uuid::new_v4(), "Pir, Imaginative Rascal", "bbd", "73");
    let pair = [thrasios.printing.card_id, pir.printing.card_id];
    repos.catalog.upsert("mtg", &[thrasios, pir], at).await?;
    let facts = facts_by_name(repos, &pair).await?;
    assert_eq!(
        facts["Thrasios, Triton Hero"].text.partner,
        PartnerAbility::Any
    );
    assert_eq!(
        facts["Pir, Imaginative Rascal"].text.partner,
        PartnerAbility::With("toothy, imaginary friend".into())
    );
    assert!(repos.catalog.card_facts("lorcana", &ids).await?.is_empty());
    Ok(())
}

pub async fn imports_record_each_legality_change_once(repos: &Repositories) -> Outcome {
    let (first, second, third) = (
        datetime!(2026-01-01 00:00 UTC),
        datetime!(2026-02-01 00:00 UTC),
        datetime!(2026-03-01 00:00 UTC),
    );
    let mut pod = printing(Uuid::new_v4(), "Birthing Pod", "nph", "104");
    std::sync::Arc::make_mut(&mut pod.legalities).insert("modern".into(), "legal".into());
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), first)
        .await?;
    // The same legalities again: nothing new.
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), second)
        .await?;
    std::sync::Arc::make_mut(&mut pod.legalities).insert("modern".into(), "banned".into());
    // A status no check knows is left out of the history.
    std::sync::Arc::make_mut(&mut pod.legalities).insert("pioneer".into(), "suspended".into());
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), third)
        .await?;
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), third)
        .await?;
    let facts = facts_by_name(repos, &[pod.printing.card_id]).await?;
    let facts = &facts["Birthing Pod"];
    assert_eq!(
        facts.legalities["modern"],
        [
            LegalityChange::recorded(first, Legality::Legal),
            LegalityChange::recorded(third, Legality::Banned),
        ]
    );
    assert_eq!(facts.legalities["standard"].len(), 1);
    assert!(!facts.legalities.contains_key("pioneer"));
    assert_eq!(facts.legality("modern", second), Some(Legality::Legal));
    assert_eq!(facts.legality("modern", third), Some(Legality::Banned));
    assert_eq!(
        facts.legality("modern", datetime!(2000-01-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    Ok(())
}

pub async fn operators_record_legality_changes_from_a_date(repos: &Repositories) -> Outcome {
    let imported = datetime!(2026-01-01 00:00 UTC);
    let ban = datetime!(2026-06-01 00:00 UTC);
    let goyf = printing(Uuid::new_v4(), "Tarmogoyf", "fut", "153");
    let id = goyf.printing.card_id;
    repos.catalog.upsert("mtg", &[goyf], imported).await?;
    repos
        .catalog
        .record_legality("mtg", id, "standard", Legality::Restricted, ban)
        .await?;
    // The same card, format and time again: replaced, not added.
    repos
        .catalog
        .record_legality("mtg", id, "standard", Legality::Banned, ban)
        .await?;
    let facts = facts_by_name(repos, &[id]).await?;
    let facts = &facts["Tarmogoyf"];
    assert_eq!(facts.legalities["standard"].len(), 2);
    assert_eq!(facts.legality("standard", imported), Some(Legality::Legal));
    assert_eq!(facts.legality("standard", ban), Some(Legality::Banned));
    // Unknown cards and formats are refused.
    assert!(
        repos
            .catalog
            .record_legality("mtg", Uuid::new_v4(), "standard", Legality::Banned, ban)
            .await
            .is_err()
    );
    assert!(
        repos
            .catalog
            .record_legality("mtg", id, "oldschool", Legality::Banned, ban)
            .await
            .is_err()
    );
    Ok(())
}

/// Every shipped change (`data/mtg/banned-and-restricted.tsv`, loaded by a migration into
/// PostgreSQL and read by the memory store) is in the history of the card it names, once the
/// card is imported, with the status it replaced.
pub async fn shipped_history_joins_every_card_it_names(repos: &Repositories) -> Outcome {
    use deckhand_domain::catalog::history::announcements_by_name;
    let shipped = announcements_by_name("mtg");
    let entries: Vec<CatalogEntry> = shipped
        .values()
        .map(|changes| {
            let mut entry = printing(Uuid::new_v4(), &changes[0].card, "tst", "1");
            entry.legalities = std::sync::Arc::new(BTreeMap::new());
            entry
        })
        .collect();
    let ids: Vec<Uuid> = entries.iter().map(|entry| entry.printing.card_id).collect();
    repos
        .catalog
        .upsert("mtg", &entries, datetime!(2021-01-01 00:00 UTC))
        .await?;
    let facts = facts_by_name(repos, &ids).await?;
    assert_eq!(facts.len(), shipped.len());
    let mut seen = 0;
    for changes in shipped.values() {
        let card = &facts[&changes[0].card];
        for change in changes {
            assert!(
                card.legalities[&change.format].contains(&change.record()),
                "{change:?} in {card:?}"
            );
            seen += 1;
        }
        let records: usize = card.legalities.values().map(Vec::len).sum();
        assert_eq!(records, changes.len(), "only the shipped records: {card:?}");
    }
    assert_eq!(seen, 90);
    Ok(())
}

/// An import stamps what it brings with the file's day and records only what differs from the
/// status in force that day (shipped changes included); a printing released after that day
/// says nothing of its card's legality; a second import of the same file records nothing.
pub async fn imports_record_what_differs_on_the_files_day(repos: &Repositories) -> Outcome {
    let day = datetime!(2019-04-01 00:00 UTC);
    let with = |name: &str, statuses: &[(&str, &str)]| {
        let mut entry = printing(Uuid::new_v4(), name, "tst", "1");
        entry.released_at = Some(time::macros::date!(2012 - 01 - 01));
        entry.legalities = std::sync::Arc::new(
            statuses
                .iter()
                .map(|(format, status)| ((*format).to_owned(), (*status).to_owned()))
                .collect(),
        );
        entry
    };
    let kci = with("Krark-Clan Ironworks", &[("modern", "banned")]);
    let looting = with(
        "Faithless Looting",
        &[("modern", "legal"), ("pauper", "legal")],
    );
    let mut hogaak = with("Hogaak, Arisen Necropolis", &[("modern", "not_legal")]);
    hogaak.released_at = Some(time::macros::date!(2019 - 06 - 14));
    let entries = [kci.clone(), looting.clone(), hogaak.clone()];
    let ids: Vec<Uuid> = entries.iter().map(|entry| entry.printing.card_id).collect();
    repos.catalog.upsert("mtg", &entries, day).await?;
    let first = facts_by_name(repos, &ids).await?;
    repos.catalog.upsert("mtg", &entries, day).await?;
    let again = facts_by_name(repos, &ids).await?;
    assert_eq!(again, first, "a second import records nothing");

    let kci = &first["Krark-Clan Ironworks"];
    // Banned on the file's day already, as the shipped change says: nothing to record.
    assert_eq!(kci.legalities["modern"].len(), 1);
    assert_eq!(
        kci.legality("modern", datetime!(2019-01-24 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(
        kci.legality("modern", datetime!(2019-01-26 00:00 UTC)),
        Some(Legality::Banned)
    );
    let looting = &first["Faithless Looting"];
    assert_eq!(
        looting.legality("modern", datetime!(2019-08-29 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(
        looting.legality("modern", datetime!(2019-08-31 00:00 UTC)),
        Some(Legality::Banned)
    );
    assert_eq!(
        looting.legality("pauper", datetime!(2020-06-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    // Not yet released on the file's day: only the shipped change speaks.
    let hogaak = &first["Hogaak, Arisen Necropolis"];
    assert_eq!(hogaak.legalities["modern"].len(), 1);
    assert_eq!(
        hogaak.legality("modern", datetime!(2019-07-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(hogaak.legality("standard", day), None);

    // An operator's later record keeps its place when the old file comes again.
    repos
        .catalog
        .record_legality(
            "mtg",
            looting.card_id,
            "pauper",
            Legality::Banned,
            datetime!(2024-01-01 00:00 UTC),
        )
        .await?;
    repos.catalog.upsert("mtg", &entries, day).await?;
    let after = facts_by_name(repos, &ids).await?;
    let looting = &after["Faithless Looting"];
    assert_eq!(looting.legalities["pauper"].len(), 2);
    assert_eq!(
        looting.legality("pauper", datetime!(2024-06-01 00:00 UTC)),
        Some(Legality::Banned)
    );
    assert_eq!(
        looting.legality("pauper", datetime!(2023-06-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    Ok(())
}

// Decks.

fn archive(at: time::OffsetDateTime) -> Reviser {
    Box::new(move |deck: &Deck| {
        Ok(Revision {
            is_archived: true,
            ..revision_of(deck, deck.content.clone(), HistoryType::Update, at)
        })
    })
}

fn list_query(viewer: Option<UserId>) -> DeckQuery {
    DeckQuery {
        game: "mtg".into(),
        viewer,
        filters: DeckFilters::default(),
        sort: DeckSort::CreatedAt,
        order: SortOrder::Asc,
        page: PageRequest::new(None, None)
            .map_err(|error| anyhow::anyhow!("{error:?}"))
            .unwrap_or(PageRequest { page: 1, limit: 20 }),
    }
}

fn names(page: &Page<DeckListing>) -> Vec<String> {
    page.items.iter().map(|deck| deck.name.clone()).collect()
}

/// An anonymous reader of mtg decks: sees the public ones.
fn anyone() -> DeckReader {
    DeckReader {
        game: "mtg".into(),
        viewer: None,
    }
}

pub async fn decks_round_trip_and_start_at_version_one(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Mono Red");
    new.content.notes = "Go fast. «ünïcode»".into();
    new.content.visibility = Visibility::Unlisted;
    new.content.youtube_url = Some("https://youtu.be/x".into());
    new.content.archetype = Some("Aggro".into());
    new.provenance.source_external_id = Some("ext-1".into());
    new.provenance.source_imported_at = Some(datetime!(2026-11-20 10:00:00.000_001 UTC));
    let inserted = repos.decks.insert(&new).await?;
    let found = repos
        .decks
        .find(new.id)
        .await?
        .context("the deck just inserted")?;
    assert_eq!(found, inserted);
    assert_eq!(found.content, new.content);
    assert_eq!(found.provenance, new.provenance);
    assert_eq!(found.author.username, alice.username);
    assert_eq!(
        (found.version, found.pageviews, found.is_archived),
        (1, 0, false)
    );
    assert_eq!(
        (found.created_at, found.updated_at),
        (new.created_at, new.created_at)
    );
    let history = repos.decks.versions(new.id).await?;
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].version_number, history[0].history_type),
        (1, HistoryType::Create)
    );
    assert_eq!(history[0].content, new.content);
    assert!(repos.decks.find(DeckId(Uuid::now_v7())).await?.is_none());
    Ok(())
}

pub async fn a_duplicate_provenance_is_refused_per_owner(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let imported = |owner: &User, version: Option<&str>| {
        let mut new = deck(owner, "Imported");
        new.provenance.source_provider = "moxfield".into();
        new.provenance.source_external_id = Some("abc".into());
        new.provenance.source_external_version = version.map(str::to_owned);
        new
    };
    repos.decks.insert(&imported(&alice, None)).await?;
    // A missing external version reads as "".
    let again = repos.decks.insert(&imported(&alice, Some(""))).await;
    assert!(
        matches!(again, Err(InsertDeckError::DuplicateProvenance)),
        "{again:?}"
    );
    repos.decks.insert(&imported(&alice, Some("v2"))).await?;
    repos.decks.insert(&imported(&bob, None)).await?;
    // Without an external id there is nothing to be unique.
    repos.decks.insert(&deck(&alice, "Manual")).await?;
    repos.decks.insert(&deck(&alice, "Manual")).await?;
    Ok(())
}

pub async fn revisions_bump_the_version_and_append_history(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "First");
    repos.decks.insert(&new).await?;
    let later = new.created_at + time::Duration::seconds(5);
    let saved = repos
        .decks
        .revise(new.id, update_to("Second", later))
        .await?;
    assert_eq!((saved.version, saved.content.name.as_str()), (2, "Second"));
    assert_eq!(saved.updated_at, later);
    assert_eq!(saved.created_at, new.created_at);
    let restore = Box::new(move |deck: &Deck| {
        let mut content = deck.content.clone();
        content.name = "First".into();
        Ok(Revision {
            content,
            summary: deck.summary.clone(),
            provenance: deck.provenance.clone(),
            is_archived: false,
            history_type: HistoryType::Rollback { restored_from: 1 },
            at: later,
            origin: fixtures::origin(),
        })
    });
    repos.decks.revise(new.id, restore).await?;
    let history = repos.decks.versions(new.id).await?;
    let summary: Vec<(i32, HistoryType, String)> = history
        .iter()
        .map(|version| {
            (
                version.version_number,
                version.history_type,
                version.content.name.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (1, HistoryType::Create, "First".to_owned()),
            (2, HistoryType::Update, "Second".to_owned()),
            (
                3,
                HistoryType::Rollback { restored_from: 1 },
                "First".to_owned()
            ),
        ]
    );
    let second = repos.decks.version(new.id, 2).await?.context("version 2")?;
    assert_eq!(second.content.name, "Second");
    assert!(repos.decks.version(new.id, 4).await?.is_none());
    Ok(())
}

/// A line of `quantity` copies of a card named `name`.
fn card_line(name: &str, quantity: u32) -> DeckCard {
    DeckCard {
        section: "mainboard".into(),
        quantity,
        foil: false,
        card: CardSnapshot {
            variant_id: Uuid::new_v4(),
            card_id: Uuid::new_v4(),
            name: name.into(),
            set: "tst".into(),
            collector_number: "1".into(),
            type_line: "Creature — Test".into(),
            image_url: None,
            colors: vec!["R".into()],
        },
    }
}

/// A save that sets the notes and, when given, the cards, as `history_type`.
fn save(notes: &str, cards: Option<Vec<DeckCard>>, history_type: HistoryType) -> Reviser {
    let notes = notes.to_owned();
    Box::new(move |deck: &Deck| {
        let mut content = deck.content.clone();
        content.notes.clone_from(&notes);
        if let Some(cards) = &cards {
            content.cards.clone_from(cards);
        }
        let at = deck.updated_at + time::Duration::seconds(1);
        Ok(revision_of(deck, content, history_type, at))
    })
}

/// Saves that keep the card list, change it, keep it again and restore an older one: each
/// version reads back with the very cards it was saved with, listed or read alone.
pub async fn every_version_reads_back_the_cards_it_was_saved_with(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let first_cards = vec![card_line("Arclight Phoenix", 4), card_line("Opt", 2)];
    let second_cards = vec![card_line("Thing in the Ice", 3)];
    let mut new = deck(&alice, "History");
    new.content.cards = first_cards.clone();
    repos.decks.insert(&new).await?;
    let update = HistoryType::Update;
    let rollback = HistoryType::Rollback { restored_from: 1 };
    repos
        .decks
        .revise(new.id, save("notes only", None, update))
        .await?;
    repos
        .decks
        .revise(
            new.id,
            save("new cards", Some(second_cards.clone()), update),
        )
        .await?;
    repos
        .decks
        .revise(new.id, save("notes again", None, update))
        .await?;
    let restored = repos
        .decks
        .revise(new.id, save("", Some(first_cards.clone()), rollback))
        .await?;
    repos
        .decks
        .revise(new.id, save("last", None, update))
        .await?;
    let expected = [
        ("", &first_cards),
        ("notes only", &first_cards),
        ("new cards", &second_cards),
        ("notes again", &second_cards),
        ("", &first_cards),
        ("last", &first_cards),
    ];
    let history = repos.decks.versions(new.id).await?;
    let read: Vec<(&str, &Vec<DeckCard>)> = history
        .iter()
        .map(|version| (version.content.notes.as_str(), &version.content.cards))
        .collect();
    assert_eq!(read, expected);
    assert_eq!(history[4].content, restored.content);
    for version in &history {
        let alone = repos
            .decks
            .version(new.id, version.version_number)
            .await?
            .context("a listed version")?;
        assert_eq!(&alone, version);
    }
    let current = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!(current.content.cards, first_cards);
    Ok(())
}

pub async fn a_revision_clears_nullable_fields(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Full");
    new.content.youtube_url = Some("https://youtu.be/v".into());
    new.content.thumbnail = Some("thumb.png".into());
    new.content.archetype = Some("Aggro".into());
    new.provenance.source_external_id = Some("ext".into());
    new.provenance.source_imported_at = Some(now());
    repos.decks.insert(&new).await?;
    let clear: Reviser = Box::new(|deck: &Deck| {
        let mut content = deck.content.clone();
        content.youtube_url = None;
        content.thumbnail = None;
        content.archetype = None;
        let mut provenance = deck.provenance.clone();
        provenance.source_external_id = None;
        provenance.source_imported_at = None;
        Ok(Revision {
            content,
            summary: deck.summary.clone(),
            provenance,
            is_archived: deck.is_archived,
            history_type: HistoryType::Update,
            at: deck.updated_at,
            origin: fixtures::origin(),
        })
    });
    repos.decks.revise(new.id, clear).await?;
    let found = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!(
        (
            found.content.youtube_url,
            found.content.thumbnail,
            found.content.archetype
        ),
        (None, None, None)
    );
    assert_eq!(
        (
            found.provenance.source_external_id,
            found.provenance.source_imported_at
        ),
        (None, None)
    );
    Ok(())
}

pub async fn a_refused_revision_changes_nothing(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "Kept");
    repos.decks.insert(&new).await?;
    let refuse: Reviser = Box::new(|deck: &Deck| {
        Err(RevisionRefused::PreconditionFailed {
            current_version: deck.version,
        })
    });
    let outcome = repos.decks.revise(new.id, refuse).await;
    assert!(
        matches!(
            outcome,
            Err(ReviseDeckError::Refused(
                RevisionRefused::PreconditionFailed { current_version: 1 }
            ))
        ),
        "{outcome:?}"
    );
    let found = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!((found.version, found.content.name.as_str()), (1, "Kept"));
    assert_eq!(repos.decks.versions(new.id).await?.len(), 1);

    // A revision that would duplicate another deck's provenance is refused whole, too.
    let mut imported = deck(&alice, "Imported");
    imported.provenance.source_external_id = Some("x".into());
    repos.decks.insert(&imported).await?;
    let copy_provenance: Reviser = Box::new(move |deck: &Deck| {
        let mut provenance = deck.provenance.clone();
        provenance.source_external_id = Some("x".into());
        Ok(Revision {
            content: deck.content.clone(),
            summary: deck.summary.clone(),
            provenance,
            is_archived: false,
            history_type: HistoryType::Update,
            at: deck.updated_at,
            origin: fixtures::origin(),
        })
    });
    let outcome = repos.decks.revise(new.id, copy_provenance).await;
    assert!(
        matches!(outcome, Err(ReviseDeckError::DuplicateProvenance)),
        "{outcome:?}"
    );
    assert_eq!(repos.decks.versions(new.id).await?.len(), 1);
    Ok(())
}

pub async fn revising_a_missing_deck_is_not_found(repos: &Repositories) -> Outcome {
    let outcome = repos
        .decks
        .revise(DeckId(Uuid::now_v7()), update_to("x", now()))
        .await;
    assert!(
        matches!(outcome, Err(ReviseDeckError::NotFound)),
        "{outcome:?}"
    );
    Ok(())
}

pub async fn lists_show_public_and_own_decks_never_archived_ones(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let mut decks = Vec::new();
    for (owner, name, visibility) in [
        (&alice, "a-public", Visibility::Public),
        (&alice, "a-unlisted", Visibility::Unlisted),
        (&alice, "a-private", Visibility::Private),
        (&bob, "b-public", Visibility::Public),
        (&bob, "b-private", Visibility::Private),
        (&bob, "b-archived", Visibility::Public),
    ] {
        let mut new = deck(owner, name);
        new.content.visibility = visibility;
        new.created_at += time::Duration::milliseconds(decks.len() as i64);
        repos.decks.insert(&new).await?;
        decks.push(new);
    }
    let mut other_game = deck(&alice, "a-lorcana");
    other_game.game = "lorcana".into();
    repos.decks.insert(&other_game).await?;
    repos.decks.revise(decks[5].id, archive(now())).await?;

    let anonymous = repos.decks.list(&list_query(None)).await?;
    assert_eq!(names(&anonymous), ["a-public", "b-public"]);
    assert_eq!((anonymous.total, anonymous.total_exact), (2, true));
    let as_alice = repos.decks.list(&list_query(Some(alice.id))).await?;
    assert_eq!(
        names(&as_alice),
        ["a-public", "a-unlisted", "a-private", "b-public"]
    );
    let as_bob = repos.decks.list(&list_query(Some(bob.id))).await?;
    assert_eq!(names(&as_bob), ["a-public", "b-public", "b-private"]);
    // Archived decks leave lists but stay readable by id.
    assert!(
        repos
            .decks
            .find(decks[5].id)
            .await?
            .is_some_and(|deck| deck.is_archived)
    );
    Ok(())
}

pub async fn lists_filter_sort_and_page_stably(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let created = datetime!(2026-06-01 12:00 UTC);
    let mut ids = Vec::new();
    for (index, (owner, name, legal, video)) in [
        (&alice, "Burn 50%", true, false),
        (&alice, "burn_it_all", false, true),
        (&bob, "BURNING Bridges", true, true),
        (&bob, "Control", true, false),
    ]
    .into_iter()
    .enumerate()
    {
        let mut new = deck(owner, name);
        // Two decks share a creation instant: the id breaks the tie.
        new.created_at = created + time::Duration::hours(index.min(2) as i64);
        new.content.legal = legal;
        new.content.youtube_url = video.then(|| "https://youtu.be/v".to_owned());
        repos.decks.insert(&new).await?;
        ids.push(new.id);
    }
    let with = |change: &dyn Fn(&mut DeckQuery)| {
        let mut query = list_query(None);
        change(&mut query);
        query
    };

    let burn = repos
        .decks
        .list(&with(&|q| q.filters.name_contains = Some("bUrN".into())))
        .await?;
    assert_eq!(names(&burn), ["Burn 50%", "burn_it_all", "BURNING Bridges"]);
    // LIKE wildcards in the filter are literal characters.
    let percent = repos
        .decks
        .list(&with(&|q| q.filters.name_contains = Some("50%".into())))
        .await?;
    assert_eq!(names(&percent), ["Burn 50%"]);
    let underscore = repos
        .decks
        .list(&with(&|q| q.filters.name_contains = Some("n_i".into())))
        .await?;
    assert_eq!(names(&underscore), ["burn_it_all"]);

    let bobs = repos
        .decks
        .list(&with(&|q| q.filters.author = Some(bob.id)))
        .await?;
    assert_eq!(names(&bobs), ["BURNING Bridges", "Control"]);
    let legal_videos = repos
        .decks
        .list(&with(&|q| {
            q.filters.is_legal = Some(true);
            q.filters.has_video = Some(true);
        }))
        .await?;
    assert_eq!(names(&legal_videos), ["BURNING Bridges"]);
    let window = repos
        .decks
        .list(&with(&|q| {
            q.filters.created_after = Some(created + time::Duration::hours(1));
            q.filters.created_before = Some(created + time::Duration::hours(2));
        }))
        .await?;
    assert_eq!(window.total, 3, "both bounds are inclusive");

    let descending = repos
        .decks
        .list(&with(&|q| q.order = SortOrder::Desc))
        .await?;
    let mut tied = [ids[2], ids[3]];
    tied.sort();
    tied.reverse();
    let expected: Vec<DeckId> = [tied[0], tied[1], ids[1], ids[0]].into();
    assert_eq!(
        descending
            .items
            .iter()
            .map(|deck| deck.id)
            .collect::<Vec<_>>(),
        expected
    );

    let second_page = repos
        .decks
        .list(&with(&|q| {
            q.order = SortOrder::Desc;
            q.page = PageRequest { page: 2, limit: 3 };
        }))
        .await?;
    assert_eq!(
        second_page
            .items
            .iter()
            .map(|deck| deck.id)
            .collect::<Vec<_>>(),
        [ids[0]]
    );
    assert_eq!((second_page.total, second_page.total_exact), (4, true));
    let past_the_end = repos
        .decks
        .list(&with(&|q| q.page = PageRequest { page: 3, limit: 3 }))
        .await?;
    assert!(past_the_end.items.is_empty());
    assert_eq!(past_the_end.total, 4);
    Ok(())
}

pub async fn views_count_once_per_visitor_and_window(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "Viewed");
    repos.decks.insert(&new).await?;
    let hour = time::Duration::hours(1);
    let at = datetime!(2026-06-01 12:00 UTC);
    let (first, second) = ([1u8; 32], [2u8; 32]);
    let count = |visitor: [u8; 32], when: time::OffsetDateTime| {
        let decks = repos.decks.clone();
        async move {
            decks
                .count_view(
                    new.id,
                    &anyone(),
                    &visitor,
                    when,
                    hour,
                    trending::view_weight(when),
                )
                .await?
                .context("a visible deck")
        }
    };
    assert_eq!(
        count(first, at).await?,
        ViewCount {
            pageviews: 1,
            incremented: true
        }
    );
    let soon = at + time::Duration::minutes(59);
    assert_eq!(
        count(first, soon).await?,
        ViewCount {
            pageviews: 1,
            incremented: false
        }
    );
    assert_eq!(
        count(second, soon).await?,
        ViewCount {
            pageviews: 2,
            incremented: true
        }
    );
    // The window runs from the last *counted* view.
    assert_eq!(
        count(first, at + hour).await?,
        ViewCount {
            pageviews: 3,
            incremented: true
        }
    );
    assert_eq!(
        repos
            .decks
            .find(new.id)
            .await?
            .context("the deck")?
            .pageviews,
        3
    );
    Ok(())
}

pub async fn trending_ranks_recent_views_first(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let (old, fresh, unseen) = (
        deck(&alice, "old"),
        deck(&alice, "fresh"),
        deck(&alice, "unseen"),
    );
    for new in [&old, &fresh, &unseen] {
        repos.decks.insert(new).await?;
    }
    let hour = time::Duration::hours(1);
    let then = datetime!(2026-06-01 12:00 UTC);
    let now = then + time::Duration::days(3);
    for visitor in 0..5u8 {
        repos
            .decks
            .count_view(
                old.id,
                &anyone(),
                &[visitor; 32],
                then,
                hour,
                trending::view_weight(then),
            )
            .await?;
    }
    repos
        .decks
        .count_view(
            fresh.id,
            &anyone(),
            &[9; 32],
            now,
            hour,
            trending::view_weight(now),
        )
        .await?;
    let mut query = list_query(None);
    query.sort = DeckSort::Trending;
    query.order = SortOrder::Desc;
    // Five views three days ago are worth 5/8; one view now is worth 1.
    assert_eq!(
        names(&repos.decks.list(&query).await?),
        ["fresh", "old", "unseen"]
    );
    query.sort = DeckSort::Views;
    assert_eq!(
        names(&repos.decks.list(&query).await?),
        ["old", "fresh", "unseen"]
    );
    // Pages of a counter sort are slices of that order (PostgreSQL picks a page's ids in a
    // subquery and sorts its rows again).
    query.page = PageRequest { page: 2, limit: 1 };
    let second = repos.decks.list(&query).await?;
    assert_eq!(
        (names(&second), second.total),
        (vec!["fresh".to_owned()], 3)
    );
    Ok(())
}

pub async fn views_count_only_for_readers_who_may_see_the_deck(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let mut hidden = deck(&alice, "Hidden");
    hidden.content.visibility = Visibility::Private;
    repos.decks.insert(&hidden).await?;
    let hour = time::Duration::hours(1);
    let at = datetime!(2026-06-01 12:00 UTC);
    let reader = |game: &str, viewer: Option<&User>| DeckReader {
        game: game.into(),
        viewer: viewer.map(|user| user.id),
    };
    for refused in [
        reader("mtg", None),
        reader("mtg", Some(&bob)),
        reader("lorcana", Some(&alice)),
    ] {
        let count = repos
            .decks
            .count_view(hidden.id, &refused, &[1; 32], at, hour, 0.0)
            .await?;
        assert_eq!(count, None, "{refused:?}");
    }
    let missing = repos
        .decks
        .count_view(DeckId(Uuid::now_v7()), &anyone(), &[1; 32], at, hour, 0.0)
        .await?;
    assert_eq!(missing, None);
    // Refused views counted nothing, not even the dedupe record.
    let owner = repos
        .decks
        .count_view(
            hidden.id,
            &reader("mtg", Some(&alice)),
            &[1; 32],
            at,
            hour,
            0.0,
        )
        .await?;
    assert_eq!(
        owner,
        Some(ViewCount {
            pageviews: 1,
            incremented: true
        })
    );
    Ok(())
}

/// A list item is the deck as a list shows it: every field the same as on the deck itself.
pub async fn list_items_carry_what_lists_show(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Izzet Phoenix");
    new.content.youtube_url = Some("https://www.youtube.com/watch?v=abc".into());
    new.content.archetype = Some("Tempo".into());
    new.content.format_id = Some(format_id("mtg", "modern"));
    new.summary.colors = vec!["U".into(), "R".into()];
    new.summary.section_counts = [("mainboard".to_owned(), 60)].into();
    new.provenance.source_provider = "moxfield".into();
    repos.decks.insert(&new).await?;
    let page = repos.decks.list(&list_query(None)).await?;
    let stored = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!(page.items, [stored.listing()]);
    assert!(page.items[0].has_video);
    Ok(())
}

/// An overview reads what a detail shows of a deck, whatever its visibility or archive state,
/// and exactly what the full deck has.
pub async fn a_deck_overview_is_the_deck_without_its_cards(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Izzet Phoenix");
    new.content.notes = "Keep two lands. «ünïcode»".into();
    new.content.visibility = Visibility::Private;
    new.content.archetype = Some("Tempo".into());
    new.summary.colors = vec!["U".into(), "R".into()];
    new.provenance.source_provider = "moxfield".into();
    new.provenance.source_external_id = Some("ext-7".into());
    new.provenance.source_external_url = Some("https://moxfield.com/decks/ext-7".into());
    repos.decks.insert(&new).await?;
    repos.decks.revise(new.id, archive(now())).await?;
    let stored = repos.decks.find(new.id).await?.context("the deck")?;
    let overview = repos
        .decks
        .find_overview(new.id)
        .await?
        .context("the deck's overview")?;
    assert_eq!(overview, stored.overview());
    assert_eq!(overview.version, 2);
    assert_eq!(overview.notes, new.content.notes);
    assert!(
        repos
            .decks
            .find_overview(DeckId(Uuid::now_v7()))
            .await?
            .is_none()
    );
    Ok(())
}

/// A store's own writes show in its next list totals, even where it remembers counts.
pub async fn list_totals_follow_the_stores_own_writes(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut query = list_query(None);
    query.page = PageRequest { page: 1, limit: 2 };
    for n in 0..3 {
        repos
            .decks
            .insert(&deck(&alice, &format!("deck {n}")))
            .await?;
    }
    let before = repos.decks.list(&query).await?;
    assert_eq!((before.total, before.total_exact), (3, true));
    let extra = deck(&alice, "deck 3");
    repos.decks.insert(&extra).await?;
    assert_eq!(repos.decks.list(&query).await?.total, 4);
    repos.decks.revise(extra.id, archive(now())).await?;
    assert_eq!(repos.decks.list(&query).await?.total, 3);
    Ok(())
}

pub async fn a_guide_is_created_replaced_and_deleted_with_has_guide(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "Guided");
    repos.decks.insert(&new).await?;
    assert!(repos.decks.guide(new.id).await?.is_none());
    let first = DeckGuide {
        id: Uuid::now_v7(),
        deck_id: new.id,
        content_type: ContentType::Markdown,
        content: "# Mulligan\nKeep lands. «ünïcode»".into(),
        is_premium: true,
        created_at: datetime!(2026-06-01 12:00:00.000_001 UTC),
        updated_at: datetime!(2026-06-01 12:00:00.000_001 UTC),
    };
    let (stored, created) = repos
        .decks
        .put_guide(
            &first,
            &fixtures::change(EventType::DeckStrategyGuideUpdated, first.updated_at),
        )
        .await?;
    assert!(created);
    assert_eq!(stored, first);
    assert_eq!(repos.decks.guide(new.id).await?, Some(first.clone()));
    assert!(
        repos
            .decks
            .find(new.id)
            .await?
            .context("the deck")?
            .has_guide
    );

    let replacement = DeckGuide {
        id: Uuid::now_v7(),
        content_type: ContentType::Text,
        content: "Plain.".into(),
        is_premium: false,
        created_at: datetime!(2026-06-02 12:00 UTC),
        updated_at: datetime!(2026-06-02 12:00 UTC),
        ..first.clone()
    };
    let (stored, created) = repos
        .decks
        .put_guide(
            &replacement,
            &fixtures::change(EventType::DeckStrategyGuideUpdated, replacement.updated_at),
        )
        .await?;
    assert!(!created);
    assert_eq!(
        (stored.id, stored.created_at),
        (first.id, first.created_at),
        "a replaced guide keeps its identity"
    );
    assert_eq!(
        (stored.content.as_str(), stored.updated_at),
        ("Plain.", replacement.updated_at)
    );

    assert!(
        repos
            .decks
            .delete_guide(
                new.id,
                &fixtures::change(EventType::DeckStrategyGuideDeleted, fixtures::now())
            )
            .await?
    );
    assert!(
        !repos
            .decks
            .delete_guide(
                new.id,
                &fixtures::change(EventType::DeckStrategyGuideDeleted, fixtures::now())
            )
            .await?
    );
    assert!(repos.decks.guide(new.id).await?.is_none());
    assert!(
        !repos
            .decks
            .find(new.id)
            .await?
            .context("the deck")?
            .has_guide
    );
    Ok(())
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

fn guide_query(viewer: UserId) -> GuideQuery {
    GuideQuery {
        game: "mtg".into(),
        viewer,
        filters: GuideFilters::default(),
        sort: GuideSort::CreatedAt,
        order: SortOrder::Asc,
        page: PageRequest { page: 1, limit: 20 },
        with_summary: false,
    }
}

fn guide_names(page: &Page<SideboardGuide>) -> Vec<String> {
    page.items
        .iter()
        .map(|guide| guide.content.name.clone())
        .collect()
}

async fn flags(repos: &Repositories, decks: &[DeckId]) -> anyhow::Result<Vec<bool>> {
    let mut flags = Vec::new();
    for deck in decks {
        flags.push(
            repos
                .decks
                .find(*deck)
                .await?
                .context("an attached deck")?
                .has_sideboard_guide,
        );
    }
    Ok(flags)
}

pub async fn sideboard_guides_round_trip_with_their_decks_and_matchups(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut primary = deck(&alice, "Izzet Phoenix");
    primary.summary.colors = vec!["U".into(), "R".into()];
    repos.decks.insert(&primary).await?;
    let mut new = fixtures::guide(&alice, primary.id, "Phoenix plan «ü»");
    new.content.description = "d".repeat(1000);
    new.content.notes = "Board in the hate.".into();
    new.content.visibility = Visibility::Unlisted;
    new.content.tags = vec!["modern".into(), "tempo".into()];
    new.content.format = Some("Modern".into());
    new.content.youtube_url = Some("https://youtu.be/p".into());
    new.content.premium = true;
    new.created_at = datetime!(2026-06-01 12:00:00.000_001 UTC);
    // Stored out of order: the detail sorts by sort_order, then creation.
    new.matchups = vec![matchup("Burn", Some("Aggro"), 2), matchup("Tron", None, 1)];
    let inserted = repos.sideboard_guides.insert(&new).await?;
    assert_eq!(inserted.guide.content, new.content);
    assert_eq!(inserted.guide.author.username, alice.username);
    assert_eq!(
        (inserted.guide.created_at, inserted.guide.updated_at),
        (new.created_at, new.created_at)
    );
    assert_eq!(
        (inserted.guide.matchup_count, inserted.guide.is_archived),
        (2, false)
    );
    assert_eq!(
        inserted
            .guide
            .primary_summary
            .as_ref()
            .map(|s| s.colors.clone()),
        Some(vec!["U".to_owned(), "R".to_owned()])
    );
    let opponents: Vec<&str> = inserted
        .matchups
        .iter()
        .map(|m| m.content.opponent_deck_name.as_str())
        .collect();
    assert_eq!(opponents, ["Tron", "Burn"]);
    assert_eq!(inserted.matchups[1].content, new.matchups[0].content);
    assert_eq!(inserted.decks.len(), 1);
    assert!(inserted.decks[0].is_primary);
    assert_eq!(inserted.decks[0].name, "Izzet Phoenix");

    let detail = repos
        .sideboard_guides
        .detail(new.id)
        .await?
        .context("the guide just inserted")?;
    assert_eq!(detail, inserted);
    let found = repos
        .sideboard_guides
        .find(new.id)
        .await?
        .context("the guide")?;
    assert_eq!(found.content, new.content);
    assert_eq!(found.primary_summary, None, "find loads no summary");
    assert_eq!(flags(repos, &[primary.id]).await?, [true]);
    assert!(
        repos
            .sideboard_guides
            .find(GuideId(Uuid::now_v7()))
            .await?
            .is_none()
    );
    Ok(())
}

pub async fn has_sideboard_guide_follows_attach_detach_archive_and_unarchive(
    repos: &Repositories,
) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (a, b) = (deck(&alice, "A"), deck(&bob, "B"));
    repos.decks.insert(&a).await?;
    repos.decks.insert(&b).await?;
    let first = fixtures::guide(&alice, a.id, "first");
    let second = fixtures::guide(&bob, b.id, "second");
    repos.sideboard_guides.insert(&first).await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [true, false]);
    repos.sideboard_guides.insert(&second).await?;
    let at = now();

    // b is attached to both guides.
    assert!(
        repos
            .sideboard_guides
            .attach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckAttached, at)
            )
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .attach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckAttached, at)
            )
            .await?,
        "attaching twice changes nothing"
    );
    let detail = repos
        .sideboard_guides
        .detail(first.id)
        .await?
        .context("first")?;
    let ids: Vec<DeckId> = detail.decks.iter().map(|deck| deck.id).collect();
    assert_eq!(ids, [a.id, b.id], "primary first, then in attach order");
    assert_eq!(detail.guide.updated_at, at, "an attach edits the guide");

    repos
        .sideboard_guides
        .revise(first.id, guide_archived(true, at))
        .await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [false, true]);
    repos
        .sideboard_guides
        .revise(second.id, guide_archived(true, at))
        .await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [false, false]);
    let with_flag = |wanted: bool| {
        let mut query = list_query(Some(alice.id));
        query.filters.has_sideboard_guide = Some(wanted);
        query
    };
    assert!(names(&repos.decks.list(&with_flag(true)).await?).is_empty());
    repos
        .sideboard_guides
        .revise(first.id, guide_archived(false, at))
        .await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [true, true]);
    assert_eq!(
        names(&repos.decks.list(&with_flag(true)).await?),
        ["A", "B"]
    );

    assert!(
        !repos
            .sideboard_guides
            .detach(
                first.id,
                a.id,
                &fixtures::change(EventType::GuideDeckDetached, at)
            )
            .await?,
        "the primary deck stays"
    );
    assert!(
        repos
            .sideboard_guides
            .detach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckDetached, at)
            )
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .detach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckDetached, at)
            )
            .await?
    );
    // The second guide, which still has b, is archived.
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [true, false]);
    assert_eq!(names(&repos.decks.list(&with_flag(false)).await?), ["B"]);
    Ok(())
}

pub async fn guide_lists_show_public_and_own_guides_never_archived_ones(
    repos: &Repositories,
) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (a, b) = (deck(&alice, "A"), deck(&bob, "B"));
    repos.decks.insert(&a).await?;
    repos.decks.insert(&b).await?;
    let mut guides = Vec::new();
    for (owner, primary, name, visibility) in [
        (&alice, a.id, "a-public", Visibility::Public),
        (&alice, a.id, "a-unlisted", Visibility::Unlisted),
        (&alice, a.id, "a-private", Visibility::Private),
        (&bob, b.id, "b-public", Visibility::Public),
        (&bob, b.id, "b-private", Visibility::Private),
        (&bob, b.id, "b-archived", Visibility::Public),
    ] {
        let mut new = fixtures::guide(owner, primary, name);
        new.content.visibility = visibility;
        new.content.notes = "long notes".into();
        new.created_at += time::Duration::milliseconds(guides.len() as i64);
        repos.sideboard_guides.insert(&new).await?;
        guides.push(new);
    }
    let mut other_game = deck(&alice, "lorcana deck");
    other_game.game = "lorcana".into();
    repos.decks.insert(&other_game).await?;
    let mut lorcana = fixtures::guide(&alice, other_game.id, "a-lorcana");
    lorcana.game = "lorcana".into();
    repos.sideboard_guides.insert(&lorcana).await?;
    repos
        .sideboard_guides
        .revise(guides[5].id, guide_archived(true, now()))
        .await?;

    let as_alice = repos.sideboard_guides.list(&guide_query(alice.id)).await?;
    assert_eq!(
        guide_names(&as_alice),
        ["a-public", "a-unlisted", "a-private", "b-public"]
    );
    assert_eq!((as_alice.total, as_alice.total_exact), (4, true));
    assert!(
        as_alice
            .items
            .iter()
            .all(|guide| guide.content.notes.is_empty()),
        "lists carry no long texts"
    );
    let as_bob = repos.sideboard_guides.list(&guide_query(bob.id)).await?;
    assert_eq!(guide_names(&as_bob), ["a-public", "b-public", "b-private"]);
    // Archived guides leave lists but stay readable by id.
    assert!(
        repos
            .sideboard_guides
            .find(guides[5].id)
            .await?
            .is_some_and(|guide| guide.is_archived)
    );
    Ok(())
}

pub async fn guide_lists_filter_sort_and_page_stably(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (a, b, extra) = (deck(&alice, "A"), deck(&bob, "B"), deck(&bob, "Extra"));
    let mut summarised = a.clone();
    summarised.summary.colors = vec!["G".into()];
    repos.decks.insert(&summarised).await?;
    repos.decks.insert(&b).await?;
    repos.decks.insert(&extra).await?;
    let created = datetime!(2026-06-01 12:00 UTC);
    let mut ids = Vec::new();
    for (index, (owner, primary, name, format, video, archetype)) in [
        (
            &alice,
            a.id,
            "Burn 50%",
            Some("Modern"),
            false,
            Some("Control"),
        ),
        (&alice, a.id, "burn_it_all", Some("Pioneer"), true, None),
        (
            &bob,
            b.id,
            "BURNING Bridges",
            Some("modern horizons"),
            true,
            Some("Big Mana"),
        ),
        (&bob, b.id, "Control", None, false, Some("control")),
    ]
    .into_iter()
    .enumerate()
    {
        let mut new = fixtures::guide(owner, primary, name);
        // Two guides share a creation instant: the id breaks the tie.
        new.created_at = created + time::Duration::hours(index.min(2) as i64);
        new.content.format = format.map(str::to_owned);
        new.content.youtube_url = video.then(|| "https://youtu.be/v".to_owned());
        new.matchups = vec![matchup("Opponent", archetype, 0)];
        repos.sideboard_guides.insert(&new).await?;
        ids.push(new.id);
    }
    repos
        .sideboard_guides
        .attach(
            ids[3],
            extra.id,
            &fixtures::change(
                EventType::GuideDeckAttached,
                created + time::Duration::days(1),
            ),
        )
        .await?;
    let with = |change: &dyn Fn(&mut GuideQuery)| {
        let mut query = guide_query(alice.id);
        change(&mut query);
        query
    };
    let list = async |query: GuideQuery| repos.sideboard_guides.list(&query).await;

    let burn = list(with(&|q| q.filters.name_contains = Some("bUrN".into()))).await?;
    assert_eq!(
        guide_names(&burn),
        ["Burn 50%", "burn_it_all", "BURNING Bridges"]
    );
    let percent = list(with(&|q| q.filters.name_contains = Some("50%".into()))).await?;
    assert_eq!(guide_names(&percent), ["Burn 50%"]);
    let control = list(with(&|q| {
        q.filters.opponent_archetype_contains = Some("CONTROL".into());
    }))
    .await?;
    assert_eq!(guide_names(&control), ["Burn 50%", "Control"]);
    let bobs = list(with(&|q| q.filters.author = Some(bob.id))).await?;
    assert_eq!(guide_names(&bobs), ["BURNING Bridges", "Control"]);
    let modern = list(with(&|q| q.filters.format_contains = Some("modern".into()))).await?;
    assert_eq!(guide_names(&modern), ["Burn 50%", "BURNING Bridges"]);
    let videos = list(with(&|q| q.filters.has_video = Some(true))).await?;
    assert_eq!(guide_names(&videos), ["burn_it_all", "BURNING Bridges"]);
    let no_video = list(with(&|q| q.filters.has_video = Some(false))).await?;
    assert_eq!(guide_names(&no_video), ["Burn 50%", "Control"]);
    let with_deck = list(with(&|q| q.filters.deck = Some(extra.id))).await?;
    assert_eq!(guide_names(&with_deck), ["Control"]);
    let with_primary = list(with(&|q| q.filters.deck = Some(b.id))).await?;
    assert_eq!(guide_names(&with_primary), ["BURNING Bridges", "Control"]);
    let window = list(with(&|q| {
        q.filters.created_after = Some(created + time::Duration::hours(1));
        q.filters.created_before = Some(created + time::Duration::hours(2));
    }))
    .await?;
    assert_eq!(window.total, 3, "both bounds are inclusive");
    let edited = list(with(&|q| {
        q.filters.edited_after = Some(created + time::Duration::days(1));
        q.filters.edited_before = Some(created + time::Duration::days(1));
    }))
    .await?;
    assert_eq!(guide_names(&edited), ["Control"], "the attach edited it");

    let descending = list(with(&|q| q.order = SortOrder::Desc)).await?;
    let mut tied = [ids[2], ids[3]];
    tied.sort();
    tied.reverse();
    let expected: Vec<GuideId> = [tied[0], tied[1], ids[1], ids[0]].into();
    let got: Vec<GuideId> = descending.items.iter().map(|guide| guide.id).collect();
    assert_eq!(got, expected);
    let by_edit = list(with(&|q| {
        q.sort = GuideSort::EditedAt;
        q.order = SortOrder::Desc;
        q.page = PageRequest { page: 1, limit: 1 };
    }))
    .await?;
    assert_eq!(guide_names(&by_edit), ["Control"]);
    // Counters are zero for all: the id decides, in the sort's direction.
    for sort in [GuideSort::Likes, GuideSort::Views] {
        let page = list(with(&|q| q.sort = sort)).await?;
        let mut sorted = ids.clone();
        sorted.sort();
        let got: Vec<GuideId> = page.items.iter().map(|guide| guide.id).collect();
        assert_eq!(got, sorted);
    }

    let second_page = list(with(&|q| {
        q.order = SortOrder::Desc;
        q.page = PageRequest { page: 2, limit: 3 };
    }))
    .await?;
    let got: Vec<GuideId> = second_page.items.iter().map(|guide| guide.id).collect();
    assert_eq!(got, [ids[0]]);
    assert_eq!((second_page.total, second_page.total_exact), (4, true));
    let past_the_end = list(with(&|q| q.page = PageRequest { page: 3, limit: 3 })).await?;
    assert!(past_the_end.items.is_empty());
    assert_eq!(past_the_end.total, 4);

    let plain = list(with(&|_| {})).await?;
    assert!(
        plain
            .items
            .iter()
            .all(|guide| guide.primary_summary.is_none())
    );
    assert!(plain.items.iter().all(|guide| guide.matchup_count == 1));
    let summarised = list(with(&|q| q.with_summary = true)).await?;
    assert_eq!(
        summarised.items[0]
            .primary_summary
            .as_ref()
            .map(|s| s.colors.clone()),
        Some(vec!["G".to_owned()])
    );
    Ok(())
}

pub async fn matchups_are_added_revised_and_deleted_on_their_guide_only(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let a = deck(&alice, "A");
    repos.decks.insert(&a).await?;
    let (first, second) = (
        fixtures::guide(&alice, a.id, "first"),
        fixtures::guide(&alice, a.id, "second"),
    );
    repos.sideboard_guides.insert(&first).await?;
    repos.sideboard_guides.insert(&second).await?;
    let added_at = datetime!(2026-07-01 10:00:00.000_001 UTC);
    let new = matchup("Burn", Some("Aggro"), 3);
    let added = repos
        .sideboard_guides
        .add_matchup(
            first.id,
            &new,
            &fixtures::change(EventType::GuideMatchupCreated, added_at),
        )
        .await?;
    assert_eq!(
        (added.id, added.guide_id, added.created_at),
        (new.id, first.id, added_at)
    );
    assert_eq!(added.content, new.content);

    let edited_at = added_at + time::Duration::minutes(5);
    let revised = repos
        .sideboard_guides
        .revise_matchup(
            first.id,
            new.id,
            Box::new(|content: &MatchupContent| MatchupContent {
                difficulty: Difficulty::VeryEasy,
                opponent_archetype: None,
                special_card_overrides: Vec::new(),
                ..content.clone()
            }),
            &fixtures::change(EventType::GuideMatchupUpdated, edited_at),
        )
        .await?;
    assert_eq!(revised.content.difficulty, Difficulty::VeryEasy);
    assert_eq!(revised.content.opponent_archetype, None);
    assert_eq!(revised.content.play_notes, new.content.play_notes);
    assert_eq!(revised.created_at, added_at);
    let detail = repos
        .sideboard_guides
        .detail(first.id)
        .await?
        .context("first")?;
    assert_eq!(detail.matchups, std::slice::from_ref(&revised));
    assert_eq!(detail.guide.updated_at, edited_at);

    let elsewhere = repos
        .sideboard_guides
        .revise_matchup(
            second.id,
            new.id,
            Box::new(|c| c.clone()),
            &fixtures::change(EventType::GuideMatchupUpdated, edited_at),
        )
        .await;
    assert!(matches!(elsewhere, Err(ReviseMatchupError::NotFound)));
    assert!(
        !repos
            .sideboard_guides
            .delete_matchup(
                second.id,
                new.id,
                &fixtures::change(EventType::GuideMatchupDeleted, edited_at)
            )
            .await?
    );
    assert!(
        repos
            .sideboard_guides
            .delete_matchup(
                first.id,
                new.id,
                &fixtures::change(EventType::GuideMatchupDeleted, edited_at)
            )
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .delete_matchup(
                first.id,
                new.id,
                &fixtures::change(EventType::GuideMatchupDeleted, edited_at)
            )
            .await?
    );
    let detail = repos
        .sideboard_guides
        .detail(first.id)
        .await?
        .context("first")?;
    assert!(detail.matchups.is_empty());
    assert_eq!(detail.guide.matchup_count, 0);
    Ok(())
}

pub async fn revising_a_missing_guide_is_not_found(repos: &Repositories) -> Outcome {
    let outcome = repos
        .sideboard_guides
        .revise(GuideId(Uuid::now_v7()), guide_archived(true, now()))
        .await;
    assert!(matches!(outcome, Err(ReviseGuideError::NotFound)));
    Ok(())
}

fn redirect_uri(uri: &str) -> RedirectUri {
    RedirectUri::parse(uri).unwrap_or_else(|error| panic!("{error}"))
}

/// A client of `partner` with every grant type and `decks:read decks:write`.
fn oauth_client_for(partner: &Partner, public: bool) -> OAuthClient {
    OAuthClient {
        id: ClientId(Uuid::now_v7()),
        partner: partner.slug.clone(),
        name: "Deck Tracker <Pro>".into(),
        kind: if public {
            ClientKind::Public
        } else {
            ClientKind::Confidential {
                secret_hash: TokenHash::of(&Uuid::new_v4().to_string()),
            }
        },
        redirect_uris: vec![
            redirect_uri("https://app.example/cb"),
            redirect_uri("com.example.app:/oauth?x=1"),
        ],
        scopes: Scopes::from_iter([Scope::DecksRead, Scope::DecksWrite]),
        grant_types: GrantType::ALL.into_iter().collect(),
        created_at: now(),
        disabled_at: None,
    }
}

/// A user, a partner of theirs and a confidential client of it, stored.
async fn oauth_setup(repos: &Repositories) -> anyhow::Result<(User, Partner, OAuthClient)> {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let acme = partner_for(&alice, "acme");
    repos.partners.insert(&acme).await?;
    let client = oauth_client_for(&acme, false);
    repos.oauth.insert_client(&client).await?;
    Ok((alice, acme, client))
}

fn code_for(client: &OAuthClient, owner: &User) -> AuthorizationCode {
    AuthorizationCode {
        code_hash: TokenHash::of(&Uuid::new_v4().to_string()),
        client_id: client.id,
        user_id: owner.id,
        redirect_uri: "https://app.example/cb".into(),
        scopes: Scopes::from_iter([Scope::DecksRead]),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        created_at: now(),
        expires_at: now() + time::Duration::minutes(10),
        redeemed_at: None,
        grant_id: None,
    }
}

fn grant_for(client: &OAuthClient, owner: &User) -> Grant {
    Grant {
        id: GrantId(Uuid::now_v7()),
        client_id: client.id,
        user_id: owner.id,
        scopes: Scopes::from_iter([Scope::DecksRead, Scope::DecksWrite]),
        jkt: None,
        created_at: now(),
        revoked_at: None,
    }
}

fn tokens_for(grant: &Grant) -> IssuedTokens {
    IssuedTokens {
        access: AccessToken {
            token_hash: TokenHash::of(&Uuid::new_v4().to_string()),
            grant_id: grant.id,
            scopes: Scopes::from_iter([Scope::DecksRead]),
            issued_at: now(),
            expires_at: now() + time::Duration::hours(1),
            revoked_at: None,
        },
        refresh: Some(RefreshToken {
            token_hash: TokenHash::of(&Uuid::new_v4().to_string()),
            grant_id: grant.id,
            issued_at: now(),
            expires_at: now() + time::Duration::days(30),
            rotated_at: None,
        }),
    }
}

/// A grant started by redeeming a fresh code, with its first tokens.
async fn started_grant(
    repos: &Repositories,
    client: &OAuthClient,
    owner: &User,
) -> anyhow::Result<(Grant, IssuedTokens)> {
    start_grant(repos, client, owner, grant_for(client, owner)).await
}

/// [`started_grant`] of this grant.
async fn start_grant(
    repos: &Repositories,
    client: &OAuthClient,
    owner: &User,
    grant: Grant,
) -> anyhow::Result<(Grant, IssuedTokens)> {
    let code = code_for(client, owner);
    repos.oauth.insert_code(&code).await?;
    let tokens = tokens_for(&grant);
    let redeemed = repos
        .oauth
        .redeem_code(&code.code_hash, now(), &grant, &tokens)
        .await?;
    anyhow::ensure!(redeemed == CodeRedemption::Redeemed, "{redeemed:?}");
    Ok((grant, tokens))
}

fn refresh_of(tokens: &IssuedTokens) -> anyhow::Result<&RefreshToken> {
    tokens
        .refresh
        .as_ref()
        .context("tokens with a refresh token")
}

pub async fn oauth_clients_round_trip_with_their_partner(repos: &Repositories) -> Outcome {
    let (_, acme, confidential) = oauth_setup(repos).await?;
    let public = OAuthClient {
        grant_types: [GrantType::AuthorizationCode].into_iter().collect(),
        created_at: datetime!(2024-02-29 23:59:59.999_999 UTC),
        ..oauth_client_for(&acme, true)
    };
    repos.oauth.insert_client(&public).await?;
    for client in [confidential, public] {
        assert_eq!(
            repos.oauth.find_client(client.id).await?,
            Some((client, acme.clone()))
        );
    }
    assert_eq!(
        repos.oauth.find_client(ClientId(Uuid::now_v7())).await?,
        None
    );
    Ok(())
}

pub async fn an_oauth_client_of_an_unknown_partner_is_refused(repos: &Repositories) -> Outcome {
    let client = oauth_client_for(&partner_for(&user("ghost"), "ghost"), false);
    let result = repos.oauth.insert_client(&client).await;
    assert!(
        matches!(result, Err(InsertClientError::UnknownPartner)),
        "expected UnknownPartner, got {result:?}"
    );
    assert_eq!(repos.oauth.find_client(client.id).await?, None);
    Ok(())
}

pub async fn a_code_is_redeemed_once_with_its_grant_and_tokens(repos: &Repositories) -> Outcome {
    let (alice, acme, client) = oauth_setup(repos).await?;
    let code = code_for(&client, &alice);
    repos.oauth.insert_code(&code).await?;
    assert_eq!(
        repos.oauth.find_code(&code.code_hash).await?,
        Some(code.clone())
    );

    let grant = grant_for(&client, &alice);
    let tokens = tokens_for(&grant);
    let at = now();
    assert_eq!(
        repos
            .oauth
            .redeem_code(&code.code_hash, at, &grant, &tokens)
            .await?,
        CodeRedemption::Redeemed
    );
    let redeemed = repos
        .oauth
        .find_code(&code.code_hash)
        .await?
        .context("the code")?;
    assert_eq!(redeemed.redeemed_at, Some(at));
    assert_eq!(redeemed.grant_id, Some(grant.id));
    let (access, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(access, tokens.access);
    assert_eq!(
        context,
        GrantContext {
            grant: grant.clone(),
            client: client.clone(),
            partner: acme,
            user: alice.clone(),
        }
    );
    let refresh = refresh_of(&tokens)?;
    let (stored_refresh, refresh_context) = repos
        .oauth
        .find_refresh_token(&refresh.token_hash)
        .await?
        .context("the refresh token")?;
    assert_eq!(&stored_refresh, refresh);
    assert_eq!(refresh_context.grant, grant);

    // A second redemption stores nothing and names the first one's grant.
    let second = grant_for(&client, &alice);
    let second_tokens = tokens_for(&second);
    assert_eq!(
        repos
            .oauth
            .redeem_code(&code.code_hash, now(), &second, &second_tokens)
            .await?,
        CodeRedemption::AlreadyRedeemed {
            grant_id: Some(grant.id)
        }
    );
    assert_eq!(
        repos
            .oauth
            .find_access_token(&second_tokens.access.token_hash)
            .await?,
        None
    );
    assert_eq!(
        repos
            .oauth
            .redeem_code(
                &TokenHash::of("dh_ac_never_issued"),
                now(),
                &second,
                &second_tokens
            )
            .await?,
        CodeRedemption::Missing
    );
    Ok(())
}

pub async fn concurrent_redemptions_of_one_code_let_exactly_one_win(
    repos: &Repositories,
) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    for _ in 0..5 {
        let code = code_for(&client, &alice);
        repos.oauth.insert_code(&code).await?;
        let (first, second) = (grant_for(&client, &alice), grant_for(&client, &alice));
        let (first_tokens, second_tokens) = (tokens_for(&first), tokens_for(&second));
        let at = now();
        let (a, b) = tokio::join!(
            repos
                .oauth
                .redeem_code(&code.code_hash, at, &first, &first_tokens),
            repos
                .oauth
                .redeem_code(&code.code_hash, at, &second, &second_tokens),
        );
        let outcomes = [a?, b?];
        let winners = outcomes
            .iter()
            .filter(|outcome| **outcome == CodeRedemption::Redeemed)
            .count();
        assert_eq!(winners, 1, "{outcomes:?}");
    }
    Ok(())
}

pub async fn a_refresh_token_rotates_once_and_only_while_live(repos: &Repositories) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let first = refresh_of(&tokens)?.clone();
    let next = tokens_for(&grant);
    let at = now();
    assert!(
        repos
            .oauth
            .rotate_refresh_token(&first.token_hash, at, &next)
            .await?
    );
    let (rotated, _) = repos
        .oauth
        .find_refresh_token(&first.token_hash)
        .await?
        .context("the rotated token")?;
    assert_eq!(rotated.rotated_at, Some(at));
    let successor = refresh_of(&next)?;
    assert!(
        repos
            .oauth
            .find_refresh_token(&successor.token_hash)
            .await?
            .is_some()
    );
    assert!(
        repos
            .oauth
            .find_access_token(&next.access.token_hash)
            .await?
            .is_some()
    );

    // Rotated already: refused, and nothing stored.
    let again = tokens_for(&grant);
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&first.token_hash, now(), &again)
            .await?
    );
    assert_eq!(
        repos
            .oauth
            .find_access_token(&again.access.token_hash)
            .await?,
        None
    );
    // Expired at `now`: refused.
    let later = successor.expires_at;
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&successor.token_hash, later, &again)
            .await?
    );
    // Unknown: refused.
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&TokenHash::of("dh_rt_never_issued"), now(), &again)
            .await?
    );
    // Revoked grant: refused.
    repos.oauth.revoke_grant(grant.id, now()).await?;
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&successor.token_hash, now(), &again)
            .await?
    );
    assert_eq!(
        repos
            .oauth
            .find_access_token(&again.access.token_hash)
            .await?,
        None
    );
    Ok(())
}

pub async fn concurrent_rotations_of_one_refresh_token_let_exactly_one_win(
    repos: &Repositories,
) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let mut current = refresh_of(&tokens)?.clone();
    for _ in 0..10 {
        let (a, b) = (tokens_for(&grant), tokens_for(&grant));
        let at = now();
        let (first, second) = tokio::join!(
            repos
                .oauth
                .rotate_refresh_token(&current.token_hash, at, &a),
            repos
                .oauth
                .rotate_refresh_token(&current.token_hash, at, &b),
        );
        let (first, second) = (first?, second?);
        assert!(
            first != second,
            "exactly one rotation wins: {first} {second}"
        );
        let (winner, loser) = if first { (a, b) } else { (b, a) };
        assert_eq!(
            repos
                .oauth
                .find_access_token(&loser.access.token_hash)
                .await?,
            None
        );
        current = refresh_of(&winner)?.clone();
    }
    Ok(())
}

pub async fn revoking_a_grant_reaches_every_token_and_keeps_the_first_time(
    repos: &Repositories,
) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let (other, other_tokens) = started_grant(repos, &client, &alice).await?;
    let first = now();
    repos.oauth.revoke_grant(grant.id, first).await?;
    repos
        .oauth
        .revoke_grant(grant.id, first + time::Duration::minutes(1))
        .await?;
    let (_, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(context.grant.revoked_at, Some(first));
    let (_, context) = repos
        .oauth
        .find_refresh_token(&refresh_of(&tokens)?.token_hash)
        .await?
        .context("the refresh token")?;
    assert_eq!(context.grant.revoked_at, Some(first));
    let (_, untouched) = repos
        .oauth
        .find_access_token(&other_tokens.access.token_hash)
        .await?
        .context("the other grant's token")?;
    assert_eq!(untouched.grant, other);
    // A missing grant is no error.
    repos
        .oauth
        .revoke_grant(GrantId(Uuid::now_v7()), now())
        .await?;
    Ok(())
}

pub async fn revoking_an_access_token_leaves_its_grant(repos: &Repositories) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let at = now();
    repos
        .oauth
        .revoke_access_token(&tokens.access.token_hash, at)
        .await?;
    repos
        .oauth
        .revoke_access_token(&tokens.access.token_hash, at + time::Duration::minutes(1))
        .await?;
    let (access, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(access.revoked_at, Some(at));
    assert_eq!(context.grant, grant);
    repos
        .oauth
        .revoke_access_token(&TokenHash::of("dh_at_never_issued"), now())
        .await?;
    Ok(())
}

/// Disabling the partner or deactivating the user shows in the next lookup of any token: this
/// is what stops every token of theirs at once.
pub async fn tokens_come_back_with_the_current_state_of_user_and_partner(
    repos: &Repositories,
) -> Outcome {
    let (alice, acme, client) = oauth_setup(repos).await?;
    let (_, tokens) = started_grant(repos, &client, &alice).await?;
    repos.partners.set_active(&acme.slug, false).await?;
    repos.users.set_active(alice.id, false).await?;
    let (_, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert!(!context.partner.active && !context.user.active);
    let (_, context) = repos
        .oauth
        .find_refresh_token(&refresh_of(&tokens)?.token_hash)
        .await?
        .context("the refresh token")?;
    assert!(!context.partner.active && !context.user.active);
    let (_, partner) = repos
        .oauth
        .find_client(client.id)
        .await?
        .context("the client")?;
    assert!(!partner.active);
    Ok(())
}

pub async fn sessions_round_trip_with_their_user(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let session = Session {
        token_hash: TokenHash::of("dh_ss_x"),
        user_id: alice.id,
        created_at: now(),
        expires_at: now() + time::Duration::hours(12),
    };
    repos.oauth.insert_session(&session).await?;
    assert_eq!(
        repos.oauth.find_session(&session.token_hash).await?,
        Some((session, alice))
    );
    assert_eq!(
        repos.oauth.find_session(&TokenHash::of("dh_ss_y")).await?,
        None
    );
    Ok(())
}

pub async fn a_bound_grant_keeps_its_key_thumbprint(repos: &Repositories) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let bound = Grant {
        jkt: Some(JKT.into()),
        ..grant_for(&client, &alice)
    };
    let (grant, tokens) = start_grant(repos, &client, &alice, bound).await?;
    let (_, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(context.grant.jkt.as_deref(), Some(JKT));
    assert_eq!(context.grant.token_type(), "DPoP");
    let (_, context) = repos
        .oauth
        .find_refresh_token(&refresh_of(&tokens)?.token_hash)
        .await?
        .context("the refresh token")?;
    assert_eq!(context.grant, grant);
    Ok(())
}

/// An RFC 7638 thumbprint (of the RFC 8037 Ed25519 example key).
const JKT: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

pub async fn a_dpop_proof_id_is_recorded_once_per_key(repos: &Repositories) -> Outcome {
    let other_key = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs";
    let at = now();
    let until = at + time::Duration::minutes(5);
    let oauth = &repos.oauth;
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[1; 32], at, until)
            .await?
    );
    assert!(
        !oauth
            .record_dpop_proof_once(JKT, &[1; 32], at, until)
            .await?
    );
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[2; 32], at, until)
            .await?
    );
    assert!(
        oauth
            .record_dpop_proof_once(other_key, &[1; 32], at, until)
            .await?
    );
    let just_before = until - time::Duration::microseconds(1);
    assert!(
        !oauth
            .record_dpop_proof_once(JKT, &[1; 32], just_before, until)
            .await?
    );
    Ok(())
}

pub async fn an_expired_dpop_proof_id_is_taken_over(repos: &Repositories) -> Outcome {
    let at = now();
    let ttl = time::Duration::minutes(5);
    let oauth = &repos.oauth;
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[7; 32], at, at + ttl)
            .await?
    );
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[8; 32], at, at + ttl)
            .await?
    );
    // At expiry the records are gone (pruned or taken over), and spent again for a new window.
    let after = at + ttl;
    for hash in [[7; 32], [8; 32]] {
        assert!(
            oauth
                .record_dpop_proof_once(JKT, &hash, after, after + ttl)
                .await?
        );
        assert!(
            !oauth
                .record_dpop_proof_once(JKT, &hash, after, after + ttl)
                .await?
        );
    }
    Ok(())
}

pub async fn concurrent_records_of_one_dpop_proof_id_let_exactly_one_win(
    repos: &Repositories,
) -> Outcome {
    let at = now();
    let until = at + time::Duration::minutes(5);
    for round in 0..20_u8 {
        let hash = [round; 32];
        let (first, second) = tokio::join!(
            repos.oauth.record_dpop_proof_once(JKT, &hash, at, until),
            repos.oauth.record_dpop_proof_once(JKT, &hash, at, until),
        );
        let (first, second) = (first?, second?);
        assert!(first != second, "exactly one record wins: {first} {second}");
    }
    Ok(())
}

// Idempotency keys.

fn key_claim(caller: &str, key: &str) -> KeyClaim {
    KeyClaim {
        caller: caller.into(),
        key: IdempotencyKey::parse(key.as_bytes()).unwrap_or_else(|_| unreachable!("a test key")),
        claim_id: Uuid::now_v7(),
    }
}

fn claim_request(claim: &KeyClaim, body: &[u8], at: time::OffsetDateTime) -> ClaimRequest {
    ClaimRequest {
        claim: claim.clone(),
        fingerprint: Fingerprint::of("POST", "/games/mtg/decks", body),
        now: at,
        expires_at: at + idempotency::KEY_LIFETIME,
        abandoned_before: at - idempotency::ABANDONED_AFTER,
    }
}

fn created(body: &str) -> StoredResponse {
    StoredResponse {
        status: 201,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("etag".into(), "\"1\"".into()),
        ],
        body: body.as_bytes().to_vec(),
    }
}

pub async fn an_idempotency_key_is_claimed_once_per_caller(repos: &Repositories) -> Outcome {
    let keys = &repos.idempotency_keys;
    let at = datetime!(2026-06-01 12:00 UTC);
    let first = key_claim("user:a", "k-1");
    assert_eq!(
        keys.claim(&claim_request(&first, b"{}", at)).await?,
        Claimed::Claimed
    );
    // While it runs, a repeat finds it unfinished, whatever its body.
    let repeat = key_claim("user:a", "k-1");
    let in_progress = Claimed::Held(KeyRecord {
        fingerprint: Fingerprint::of("POST", "/games/mtg/decks", b"{}"),
        response: None,
    });
    assert_eq!(
        keys.claim(&claim_request(&repeat, b"{}", at)).await?,
        in_progress
    );
    // Keys are the caller's: another caller's same key is another key.
    let other_caller = key_claim("partner:acme", "k-1");
    assert_eq!(
        keys.claim(&claim_request(&other_caller, b"{}", at)).await?,
        Claimed::Claimed
    );
    // Only the holding claim completes it; the response comes back byte for byte.
    keys.complete(&repeat, &created("{\"wrong\":true}")).await?;
    keys.complete(&first, &created("{\"id\":\"é\"}")).await?;
    assert_eq!(
        keys.claim(&claim_request(
            &repeat,
            b"{}",
            at + time::Duration::hours(23)
        ))
        .await?,
        Claimed::Held(KeyRecord {
            fingerprint: Fingerprint::of("POST", "/games/mtg/decks", b"{}"),
            response: Some(created("{\"id\":\"é\"}")),
        })
    );
    // A finished record is never released, and is never abandoned.
    keys.release(&first).await?;
    let later = at + time::Duration::hours(2);
    assert!(matches!(
        keys.claim(&claim_request(&repeat, b"{}", later)).await?,
        Claimed::Held(KeyRecord {
            response: Some(_),
            ..
        })
    ));
    Ok(())
}

pub async fn expired_released_and_abandoned_keys_are_claimed_again(
    repos: &Repositories,
) -> Outcome {
    let keys = &repos.idempotency_keys;
    let at = datetime!(2026-06-01 12:00 UTC);
    // Expired after 24 hours, even when finished.
    let first = key_claim("user:a", "expires");
    keys.claim(&claim_request(&first, b"{}", at)).await?;
    keys.complete(&first, &created("{}")).await?;
    let next_day = key_claim("user:a", "expires");
    assert_eq!(
        keys.claim(&claim_request(
            &next_day,
            b"{\"other\":1}",
            at + idempotency::KEY_LIFETIME
        ))
        .await?,
        Claimed::Claimed
    );
    // Released by its holder: free at once.
    let failed = key_claim("user:a", "released");
    keys.claim(&claim_request(&failed, b"{}", at)).await?;
    keys.release(&key_claim("user:a", "released")).await?;
    assert!(matches!(
        keys.claim(&claim_request(&key_claim("user:a", "released"), b"{}", at))
            .await?,
        Claimed::Held(_)
    ));
    keys.release(&failed).await?;
    let retry = key_claim("user:a", "released");
    assert_eq!(
        keys.claim(&claim_request(&retry, b"{}", at)).await?,
        Claimed::Claimed
    );
    // Unfinished past the abandonment delay: a retry takes it over, and the overtaken
    // request can neither complete nor release it afterwards.
    let takeover_at = at + idempotency::ABANDONED_AFTER;
    let successor = key_claim("user:a", "released");
    assert_eq!(
        keys.claim(&claim_request(&successor, b"{}", takeover_at))
            .await?,
        Claimed::Claimed
    );
    keys.complete(&retry, &created("{\"stale\":true}")).await?;
    keys.release(&retry).await?;
    keys.complete(&successor, &created("{\"fresh\":true}"))
        .await?;
    assert_eq!(
        keys.claim(&claim_request(
            &key_claim("user:a", "released"),
            b"{}",
            takeover_at
        ))
        .await?,
        Claimed::Held(KeyRecord {
            fingerprint: Fingerprint::of("POST", "/games/mtg/decks", b"{}"),
            response: Some(created("{\"fresh\":true}")),
        })
    );
    Ok(())
}

pub async fn concurrent_first_claims_of_a_key_let_exactly_one_win(repos: &Repositories) -> Outcome {
    let at = now();
    let claims = (0..8).map(|_| {
        let keys = repos.idempotency_keys.clone();
        let request = claim_request(&key_claim("user:a", "race"), b"{}", at);
        tokio::spawn(async move { keys.claim(&request).await })
    });
    let mut winners = 0;
    for claim in claims.collect::<Vec<_>>() {
        if claim.await?? == Claimed::Claimed {
            winners += 1;
        }
    }
    assert_eq!(winners, 1);
    Ok(())
}

// Likes.

pub async fn deck_likes_count_once_per_user_and_follow_the_sort(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (liked, other) = (deck(&alice, "Liked"), deck(&alice, "Other"));
    let mut hidden = deck(&alice, "Hidden");
    hidden.content.visibility = Visibility::Private;
    for new in [&liked, &other, &hidden] {
        repos.decks.insert(new).await?;
    }
    let reader = |viewer: &User| DeckReader {
        game: "mtg".into(),
        viewer: Some(viewer.id),
    };
    let like = |id: DeckId, by: &User, liked: bool| {
        let (decks, reader, user) = (repos.decks.clone(), reader(by), by.id);
        async move { decks.set_like(id, &reader, user, liked, now()).await }
    };
    let likes = |id: DeckId| {
        let decks = repos.decks.clone();
        async move { anyhow::Ok(decks.find(id).await?.context("the deck")?.likes) }
    };
    // Idempotent per user.
    assert!(like(liked.id, &bob, true).await?);
    assert!(like(liked.id, &bob, true).await?);
    assert!(like(liked.id, &alice, true).await?);
    assert_eq!(likes(liked.id).await?, 2);
    let mut by_likes = list_query(None);
    by_likes.sort = DeckSort::Likes;
    by_likes.order = SortOrder::Desc;
    let page = repos.decks.list(&by_likes).await?;
    assert_eq!(page.items[0].id, liked.id);
    assert_eq!(page.items[0].likes, 2);
    assert!(like(liked.id, &bob, false).await?);
    assert!(like(liked.id, &bob, false).await?);
    assert_eq!(likes(liked.id).await?, 1);
    // Hidden from the liker, another game, or missing: refused, nothing counted.
    assert!(!like(hidden.id, &bob, true).await?);
    assert!(like(hidden.id, &alice, true).await?);
    assert_eq!(likes(hidden.id).await?, 1);
    let elsewhere = DeckReader {
        game: "other".into(),
        viewer: Some(bob.id),
    };
    assert!(
        !repos
            .decks
            .set_like(other.id, &elsewhere, bob.id, true, now())
            .await?
    );
    assert!(!like(DeckId(Uuid::now_v7()), &bob, true).await?);
    assert_eq!(likes(other.id).await?, 0);
    Ok(())
}

/// A fork of `source` at `version` by `owner`, named `name`.
fn fork_of(owner: &User, source: DeckId, version: i32, name: &str) -> NewDeck {
    let mut new = deck(owner, name);
    new.forked_from = Some(ForkedFrom {
        deck_id: source,
        version,
    });
    new
}

pub async fn forks_name_their_source_as_it_is_now_and_are_listed_by_it(
    repos: &Repositories,
) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let source = deck(&alice, "Original");
    repos.decks.insert(&source).await?;
    repos.decks.insert(&deck(&bob, "Unrelated")).await?;
    let first = fork_of(&bob, source.id, 1, "Fork one");
    let inserted = repos.decks.insert(&first).await?;
    let origin = |visibility| ForkOrigin {
        source: ForkedFrom {
            deck_id: source.id,
            version: 1,
        },
        access: Some(SourceAccess {
            visibility,
            owner: alice.id,
            is_archived: false,
        }),
    };
    assert_eq!(inserted.fork, Some(origin(Visibility::Public)));
    assert_eq!(inserted.forks, 0);
    repos
        .decks
        .revise(source.id, update_to("Original v2", now()))
        .await?;
    let mut second = fork_of(&alice, source.id, 2, "Fork two");
    second.created_at += time::Duration::milliseconds(1);
    repos.decks.insert(&second).await?;

    let found = repos.decks.find(source.id).await?.context("the source")?;
    assert_eq!((found.forks, found.fork), (2, None));
    let overview = repos
        .decks
        .find_overview(source.id)
        .await?
        .context("the source's overview")?;
    assert_eq!(overview.listing.forks, 2);
    // A fork saved keeps its source.
    let saved = repos
        .decks
        .revise(first.id, update_to("Fork one v2", now()))
        .await?;
    assert_eq!(saved.fork, Some(origin(Visibility::Public)));

    let mut query = list_query(Some(bob.id));
    query.filters.forked_from = Some(source.id);
    let forks = repos.decks.list(&query).await?;
    assert_eq!(names(&forks), ["Fork one v2", "Fork two"]);
    assert_eq!(forks.total, 2);
    assert_eq!(forks.items[1].fork.map(|fork| fork.source.version), Some(2));
    let all = repos.decks.list(&list_query(None)).await?;
    let listed = |name: &str| all.items.iter().find(|deck| deck.name == name).cloned();
    assert_eq!(listed("Original v2").context("the source listed")?.forks, 2);
    assert_eq!(
        listed("Fork one v2").context("a fork listed")?.fork,
        Some(origin(Visibility::Public))
    );

    // The source turned private: its forks read what the read rule needs to hide it.
    repos
        .decks
        .revise(
            source.id,
            Box::new(|deck: &Deck| {
                let mut content = deck.content.clone();
                content.visibility = Visibility::Private;
                Ok(revision_of(deck, content, HistoryType::Update, now()))
            }),
        )
        .await?;
    let fork = repos.decks.find(first.id).await?.context("the fork")?;
    assert_eq!(fork.fork, Some(origin(Visibility::Private)));
    assert_eq!(fork.forked_from(Some(bob.id)), None);
    assert_eq!(
        fork.forked_from(Some(alice.id))
            .map(|source| source.deck_id),
        Some(source.id)
    );
    let overview = repos
        .decks
        .find_overview(first.id)
        .await?
        .context("the fork's overview")?;
    assert_eq!(overview.listing.fork, Some(origin(Visibility::Private)));
    Ok(())
}

pub async fn concurrent_forks_of_one_deck_all_count(repos: &Repositories) -> Outcome {
    let owner = user("owner");
    repos.users.insert(&owner).await?;
    let source = deck(&owner, "Popular");
    repos.decks.insert(&source).await?;
    let tasks: Vec<_> = (0..20)
        .map(|index| {
            let (decks, new) = (
                repos.decks.clone(),
                fork_of(&owner, source.id, 1, &format!("Fork {index}")),
            );
            tokio::spawn(async move { decks.insert(&new).await.map(drop) })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    let found = repos.decks.find(source.id).await?.context("the source")?;
    assert_eq!(found.forks, 20);
    Ok(())
}

pub async fn concurrent_likes_lose_nothing(repos: &Repositories) -> Outcome {
    let owner = user("owner");
    repos.users.insert(&owner).await?;
    let target = deck(&owner, "Popular");
    repos.decks.insert(&target).await?;
    let primary = deck(&owner, "Primary");
    repos.decks.insert(&primary).await?;
    let guide = fixtures::guide(&owner, primary.id, "Popular plan");
    repos.sideboard_guides.insert(&guide).await?;
    let mut fans = Vec::new();
    for index in 0..6 {
        let fan = user(&format!("fan{index}"));
        repos.users.insert(&fan).await?;
        fans.push(fan.id);
    }
    // Every fan likes twice at once, on the deck and the guide.
    let tasks: Vec<_> = fans
        .iter()
        .chain(fans.iter())
        .map(|fan| {
            let (decks, guides, fan) = (repos.decks.clone(), repos.sideboard_guides.clone(), *fan);
            let reader = DeckReader {
                game: "mtg".into(),
                viewer: Some(fan),
            };
            tokio::spawn(async move {
                let deck = decks.set_like(target.id, &reader, fan, true, now()).await?;
                let guide = guides.set_like(guide.id, "mtg", fan, true, now()).await?;
                anyhow::Ok(deck && guide)
            })
        })
        .collect();
    for task in tasks {
        assert!(task.await??);
    }
    let deck_likes = repos
        .decks
        .find(target.id)
        .await?
        .context("the deck")?
        .likes;
    let guide_likes = repos
        .sideboard_guides
        .find(guide.id)
        .await?
        .context("the guide")?
        .likes;
    assert_eq!((deck_likes, guide_likes), (6, 6));
    Ok(())
}

pub async fn guide_likes_count_once_per_user_for_visible_guides(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let primary = deck(&alice, "Primary");
    repos.decks.insert(&primary).await?;
    let public = fixtures::guide(&alice, primary.id, "Public plan");
    let mut private = fixtures::guide(&alice, primary.id, "Private plan");
    private.content.visibility = Visibility::Private;
    let before = repos.sideboard_guides.insert(&public).await?;
    repos.sideboard_guides.insert(&private).await?;
    let guides = &repos.sideboard_guides;
    assert!(
        guides
            .set_like(public.id, "mtg", bob.id, true, now())
            .await?
    );
    assert!(
        guides
            .set_like(public.id, "mtg", bob.id, true, now())
            .await?
    );
    let after = guides.find(public.id).await?.context("the guide")?;
    // A like is no edit.
    assert_eq!(
        (after.likes, after.updated_at),
        (1, before.guide.updated_at)
    );
    let mut by_likes = guide_query(bob.id);
    by_likes.sort = GuideSort::Likes;
    by_likes.order = SortOrder::Desc;
    let page = guides.list(&by_likes).await?;
    assert_eq!(
        page.items
            .iter()
            .map(|g| (g.id, g.likes))
            .collect::<Vec<_>>(),
        [(public.id, 1)]
    );
    assert!(
        guides
            .set_like(public.id, "mtg", bob.id, false, now())
            .await?
    );
    assert_eq!(guides.find(public.id).await?.context("the guide")?.likes, 0);
    assert!(
        !guides
            .set_like(private.id, "mtg", bob.id, true, now())
            .await?
    );
    assert!(
        !guides
            .set_like(public.id, "other", bob.id, true, now())
            .await?
    );
    assert!(
        !guides
            .set_like(GuideId(Uuid::now_v7()), "mtg", bob.id, true, now())
            .await?
    );
    assert!(
        guides
            .set_like(private.id, "mtg", alice.id, true, now())
            .await?
    );
    assert_eq!(
        guides.find(private.id).await?.context("the guide")?.likes,
        1
    );
    Ok(())
}

pub async fn failed_sign_ins_are_counted_restarted_and_forgotten_per_key(
    repos: &Repositories,
) -> Outcome {
    let at = datetime!(2026-06-01 12:00 UTC);
    let minute = time::Duration::minutes(1);
    let alice = ThrottleKey::Username("alice".into());
    let ip = ThrottleKey::Ip("2001:db8::/64".into());
    let both = [alice.clone(), ip.clone()];
    assert_eq!(repos.oauth.sign_in_failures(&both).await?, [None, None]);
    let count = |failures, last_failure_at| FailureCount {
        failures,
        last_failure_at,
    };
    let counted = repos
        .oauth
        .record_sign_in_failure(&both, at, at - 15 * minute)
        .await?;
    assert_eq!(counted, [count(1, at), count(1, at)]);
    let counted = repos
        .oauth
        .record_sign_in_failure(std::slice::from_ref(&ip), at + minute, at - 14 * minute)
        .await?;
    assert_eq!(counted, [count(2, at + minute)]);
    // A count last failed at or before the restart point starts again.
    let later = at + 20 * minute;
    let counted = repos.oauth.record_sign_in_failure(&both, later, at).await?;
    assert_eq!(counted, [count(1, later), count(3, later)]);
    repos.oauth.clear_sign_in_failures(&alice).await?;
    assert_eq!(
        repos.oauth.sign_in_failures(&both).await?,
        [None, Some(count(3, later))]
    );
    Ok(())
}

/// The prune jobs of the store (contract §7) with short lifetimes: each kind of record goes
/// when its time has passed, in batches of two, and not before; then nothing is left to prune.
pub async fn every_kind_of_record_is_pruned_after_its_time_in_small_batches(
    repos: &Repositories,
) -> Outcome {
    use deckhand_domain::ports::{Clock as _, FixedClock};
    use deckhand_domain::pruning::{PruneService, Retention};
    use std::collections::BTreeMap;

    let start = now();
    let minute = time::Duration::minutes(1);
    let (alice, acme, client) = oauth_setup(repos).await?;
    let mut grants = Vec::new();
    for _ in 0..3 {
        grants.push(started_grant(repos, &client, &alice).await?);
    }
    let revoked = grants[0].1.access.token_hash;
    repos.oauth.revoke_access_token(&revoked, start).await?;
    repos.oauth.revoke_grant(grants[1].0.id, start).await?;
    repos
        .oauth
        .insert_session(&Session {
            token_hash: TokenHash::of("session"),
            user_id: alice.id,
            created_at: start,
            expires_at: start + 12 * 60 * minute,
        })
        .await?;
    for n in 0..3_u8 {
        let five = start + 5 * minute;
        repos
            .oauth
            .record_dpop_proof_once("jkt", &[n; 32], start, five)
            .await?;
        repos
            .signature_replays
            .record_signature_once(&acme.slug, &[n; 32], start, five)
            .await?;
    }
    repos
        .oauth
        .record_sign_in_failure(&[ThrottleKey::Username("alice".into())], start, start)
        .await?;
    repos
        .idempotency_keys
        .claim(&claim_request(&key_claim("user:a", "k"), b"{}", start))
        .await?;
    let viewed = deck(&alice, "Viewed");
    repos.decks.insert(&viewed).await?;
    for n in 0..3_u8 {
        repos
            .decks
            .count_view(viewed.id, &anyone(), &[n; 32], start, 60 * minute, 0.0)
            .await?;
    }

    let clock = std::sync::Arc::new(FixedClock::at(start));
    let pruning = PruneService::new(
        repos.prune_jobs.clone(),
        clock.clone(),
        Retention {
            pageview_window: 60 * minute,
            sign_in_window: 15 * minute,
            event_retention: 30 * 24 * 60 * minute,
        },
    );
    let round = || async {
        let mut deleted = BTreeMap::new();
        for pruned in pruning.prune_round(2, 100).await {
            let rows = pruned.deleted?;
            if rows > 0 {
                deleted.insert(pruned.name, rows);
            }
        }
        anyhow::Ok(deleted)
    };
    // Nothing is dead yet.
    assert_eq!(round().await?, BTreeMap::new());

    // Two hours on: codes, proof ids, signature replays, sign-in failures and pageview rows are
    // past their time; expired and revoked tokens are kept a week.
    clock.advance(120 * minute);
    let expected = BTreeMap::from([
        ("DPoP proof ids", 3),
        ("authorization codes", 3),
        ("pageview dedupe", 3),
        ("sign-in failures", 1),
        ("signature replays", 3),
    ]);
    assert_eq!(round().await?, expected);
    assert!(repos.oauth.find_access_token(&revoked).await?.is_some());
    let refresh = refresh_of(&grants[2].1)?.token_hash;
    assert!(repos.oauth.find_refresh_token(&refresh).await?.is_some());
    // The dedupe window is over for the pruned visitors: they count again.
    let again = repos
        .decks
        .count_view(
            viewed.id,
            &anyone(),
            &[0; 32],
            clock.now(),
            60 * minute,
            0.0,
        )
        .await?
        .context("a visible deck")?;
    assert!(again.incremented);

    // Eight days on: the revoked token and the revoked grant's refresh token, the session and
    // the idempotency record go; the grants whose tokens are all gone go with them.
    clock.advance(8 * 24 * 60 * minute);
    let expected = BTreeMap::from([
        ("expired access tokens", 2),
        ("grants without tokens", 1),
        ("idempotency records", 1),
        ("pageview dedupe", 1),
        ("refresh tokens of revoked grants", 1),
        ("revoked access tokens", 1),
        ("sign-in sessions", 1),
    ]);
    assert_eq!(round().await?, expected);
    assert!(repos.oauth.find_refresh_token(&refresh).await?.is_some());

    // A month on the last refresh tokens expire, and their grants go after them; the deck's
    // event is past the 30 days of retention.
    clock.advance(30 * 24 * 60 * minute);
    let expected = BTreeMap::from([
        ("events", 1),
        ("expired refresh tokens", 2),
        ("grants without tokens", 2),
    ]);
    assert_eq!(round().await?, expected);
    assert!(repos.oauth.find_refresh_token(&refresh).await?.is_none());
    assert_eq!(round().await?, BTreeMap::new());
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The suite is a list of names; this keeps it from forgetting a contract.
    #[test]
    fn every_contract_is_in_the_suite() {
        let source = [
            include_str!("contract.rs"),
            include_str!("contract/events.rs"),
            include_str!("contract/webhooks.rs"),
            include_str!("contract/card_search.rs"),
            include_str!("contract/collections.rs"),
            include_str!("contract/fab.rs"),
        ]
        .concat();
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
        let defined: Vec<&str> = [before, after, include_str!("contract/events.rs")]
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
