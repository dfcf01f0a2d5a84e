//! The repository contract: what every store promises the domain, written once and run against
//! each adapter, so the in-memory store cannot drift from PostgreSQL.
//!
//! Each contract is an async fn over the [`Repositories`] of a fresh, empty store, in the module
//! of its area (`contract/decks.rs`, `contract/oauth.rs`, ...; helpers more than one area uses
//! are in `contract/support.rs`). To add one, write it in its area's module and add its name to
//! the list in [`repository_contract_suite!`](crate::repository_contract_suite); a test below
//! fails if a contract is missing from that list.

use deckhand_domain::ports::Repositories;

use crate::db::TestDb;

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
            legalities_of_a_card_not_stored_are_refused,
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

pub use support::Outcome;

mod card_search;
pub use card_search::*;
mod catalog;
pub use catalog::*;
mod collections;
pub use collections::*;
mod deck_lists;
pub use deck_lists::*;
mod decks;
pub use decks::*;
mod events;
pub use events::*;
mod fab;
pub use fab::*;
mod forks;
pub use forks::*;
mod formats;
pub use formats::*;
mod idempotency;
pub use idempotency::*;
mod identity;
pub use identity::*;
mod likes;
pub use likes::*;
mod oauth;
pub use oauth::*;
mod partners;
pub use partners::*;
mod sideboards;
pub use sideboards::*;
mod store;
pub use store::*;
mod webhooks;
pub use webhooks::*;
mod support;

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
            include_str!("contract/identity.rs"),
            include_str!("contract/store.rs"),
            include_str!("contract/catalog.rs"),
            include_str!("contract/formats.rs"),
            include_str!("contract/decks.rs"),
            include_str!("contract/deck_lists.rs"),
            include_str!("contract/partners.rs"),
            include_str!("contract/sideboards.rs"),
            include_str!("contract/oauth.rs"),
            include_str!("contract/idempotency.rs"),
            include_str!("contract/likes.rs"),
            include_str!("contract/forks.rs"),
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
