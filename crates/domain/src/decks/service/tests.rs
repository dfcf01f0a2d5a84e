//! The deck service's rules, over mockall ports and a fixed clock: what a create and a PATCH
//! write, who may write, what a rollback restores, the summary and featured cards, and that an
//! invalid request never reaches the store.

use std::sync::{Arc, Mutex};

use futures_executor::block_on;
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

use super::*;
use crate::catalog::ports::MockCatalogRepository;
use crate::catalog::{CardIdentifier, CatalogEntry, Preference};
use crate::decks::ports::{InsertDeckError, MockDeckRepository, ReviseDeckError};
use crate::decks::test_decks::{fab, mtg};
use crate::decks::{Author, DeckFacts};
use crate::events::EventType;
use crate::identity::{Lane, PartnerRef, PrincipalUser, Scopes, Tier, Username};
use crate::system::{FixedClock, MockIdGenerator, MockRandom};
use crate::validation::FieldViolation;

const NOW: OffsetDateTime = datetime!(2026-03-01 12:00 UTC);
const CREATED: OffsetDateTime = datetime!(2026-02-01 9:30 UTC);
const NEW_DECK: Uuid = Uuid::from_u128(0xdec0);
const ALICE: UserId = UserId(Uuid::from_u128(1));
const BOB: UserId = UserId(Uuid::from_u128(2));

/// A printing of the bundled test catalog; `n` makes its ids.
fn printing(n: u128, name: &str, colors: &[&str]) -> CatalogEntry {
    CatalogEntry {
        printing: Printing {
            variant_id: Uuid::from_u128(0x1000 + n),
            card_id: Uuid::from_u128(0x2000 + n),
            name: name.into(),
            set: "tst".into(),
            collector_number: n.to_string(),
            type_line: "Creature".into(),
            image_url: None,
            colors: colors.iter().map(|c| (*c).to_owned()).collect(),
            catalog_a_id: None,
            catalog_b_id: None,
            catalog_c_id: None,
        },
        face_names: Vec::new(),
        lang: "en".into(),
        released_at: None,
        preference: Preference::Default,
        legalities: Default::default(),
        color_identity: Vec::new(),
        text_rules: None,
    }
}

fn catalog() -> Vec<CatalogEntry> {
    vec![
        printing(1, "Zur the Enchanter", &["W", "U", "B"]),
        printing(2, "Atraxa", &["G", "W"]),
        printing(3, "Lurrus", &["W", "B"]),
        printing(4, "Lightning Bolt", &["R"]),
        printing(5, "Island", &[]),
    ]
}

fn by_variant(n: u128) -> CardIdentifier {
    CardIdentifier {
        variant_id: Some(Uuid::from_u128(0x1000 + n).to_string()),
        ..CardIdentifier::default()
    }
}

fn line(section: &str, quantity: u32, n: u128) -> CardLineInput {
    CardLineInput {
        section: section.into(),
        quantity,
        foil: false,
        identifier: by_variant(n),
    }
}

fn snapshot_of(n: u128) -> CardSnapshot {
    let entry = catalog()
        .into_iter()
        .find(|entry| entry.printing.variant_id == Uuid::from_u128(0x1000 + n))
        .unwrap();
    snapshot(entry.printing)
}

fn card(section: &str, quantity: u32, n: u128) -> DeckCard {
    DeckCard {
        section: section.into(),
        quantity,
        foil: false,
        card: snapshot_of(n),
    }
}

/// A catalog that finds printings by variant id, and knows one format.
fn catalog_repository() -> MockCatalogRepository {
    let mut repository = MockCatalogRepository::new();
    repository.expect_find_printings().returning(|_, keys| {
        Ok(catalog()
            .into_iter()
            .filter(|entry| keys.variant_ids.contains(&entry.printing.variant_id))
            .collect())
    });
    repository.expect_formats().returning(|_| {
        Ok(vec![crate::catalog::Format {
            id: crate::catalog::format_id("mtg", "commander"),
            slug: "commander".into(),
            name: "Commander".into(),
            rules: crate::catalog::seeds::mtg_rules("commander"),
        }]
        .into())
    });
    repository
}

fn service_over(decks: MockDeckRepository) -> DeckService {
    service_at(decks, Arc::new(FixedClock::at(NOW)))
}

fn service_at(decks: MockDeckRepository, clock: Arc<FixedClock>) -> DeckService {
    let mut ids = MockIdGenerator::new();
    ids.expect_new_id().returning(|| NEW_DECK);
    let system = SystemPorts {
        clock,
        ids: Arc::new(ids),
        random: Arc::new(MockRandom::new()),
        passwords: Arc::new(crate::system::InlinePasswordVerifier),
    };
    DeckService::new(
        Arc::new(decks),
        CatalogService::new(Arc::new(catalog_repository())),
        system,
        DeckPolicy::default(),
        [9; 32],
    )
}

fn user(id: UserId, premium: bool) -> Principal {
    Principal {
        lane: Lane::PersonalAccessToken,
        user: Some(PrincipalUser {
            id,
            username: Username::parse(if id == ALICE { "alice" } else { "bob" }).unwrap(),
            premium,
        }),
        partner: None,
        scopes: Scopes::parse_list("decks:read decks:write").unwrap(),
    }
}

fn alice() -> Principal {
    user(ALICE, false)
}

fn bob() -> Principal {
    user(BOB, false)
}

/// A deck as the store would answer `insert`.
fn stored(new: &NewDeck) -> Deck {
    new.as_inserted(Username::parse("alice").unwrap(), None)
}

/// Alice's public deck at version 3, imported from moxfield.
fn existing() -> Deck {
    let content = DeckContent {
        name: "Esper".into(),
        notes: "notes".into(),
        visibility: Visibility::Public,
        format_id: None,
        youtube_url: Some("https://youtu.be/x".into()),
        thumbnail: None,
        legal: true,
        archetype: Some("Control".into()),
        cards: vec![card("commander", 1, 1), card("mainboard", 30, 5)],
        featured: None,
    };
    Deck {
        facts: DeckFacts {
            id: DeckId(Uuid::from_u128(0xabc)),
            game: "mtg".into(),
            author: Author {
                id: ALICE,
                username: Username::parse("alice").unwrap(),
            },
            summary: summarize(&mtg(), &content),
            pageviews: 10,
            likes: 2,
            has_guide: false,
            has_sideboard_guide: false,
            fork: None,
            forks: 4,
            created_at: CREATED,
            updated_at: CREATED,
        },
        content,
        provenance: Provenance {
            source_provider: "moxfield".into(),
            source_external_id: Some("abc".into()),
            source_external_version: Some("7".into()),
            source_external_url: None,
            source_imported_at: Some(CREATED),
        },
        is_archived: false,
        version: 3,
    }
}

/// A store holding `deck` whose `revise` runs the reviser once against it, as a real store
/// does under its lock, and records every revision it was asked to store.
fn store_revising(deck: Deck, revisions: Arc<Mutex<Vec<Revision>>>) -> MockDeckRepository {
    let mut decks = MockDeckRepository::new();
    let found = deck.clone();
    decks
        .expect_find()
        .returning(move |_| Ok(Some(found.clone())));
    decks.expect_revise().returning(move |_, reviser| {
        let revision = reviser(&deck).map_err(ReviseDeckError::Refused)?;
        revisions.lock().unwrap().push(revision.clone());
        Ok(revision.applied_to(deck.clone()))
    });
    decks
}

fn patch(
    service: &DeckService,
    principal: &Principal,
    changes: DeckChanges,
    if_match: Option<i32>,
) -> Result<Deck, SaveDeckError> {
    block_on(service.update(principal, &mtg(), existing().facts.id, changes, if_match))
}

/// An operation's refusal, which holds violations when the input was invalid.
trait Refusal: std::fmt::Debug {
    fn into_violations(self) -> Option<Violations>;
}

impl Refusal for CreateDeckError {
    fn into_violations(self) -> Option<Violations> {
        match self {
            Self::Invalid(violations) => Some(violations),
            _ => None,
        }
    }
}

impl Refusal for SaveDeckError {
    fn into_violations(self) -> Option<Violations> {
        match self {
            Self::Invalid(violations) => Some(violations),
            _ => None,
        }
    }
}

impl Refusal for ForkError {
    fn into_violations(self) -> Option<Violations> {
        match self {
            Self::Invalid(violations) => Some(violations),
            _ => None,
        }
    }
}

fn violations(error: impl Refusal) -> Vec<(String, &'static str)> {
    let refusal = format!("{error:?}");
    match error.into_violations() {
        Some(Violations(list)) => list
            .into_iter()
            .map(|FieldViolation { field, code, .. }| (field, code))
            .collect(),
        None => panic!("expected violations, got {refusal}"),
    }
}

// ---- create -------------------------------------------------------------------------------

#[test]
fn a_create_stores_the_deck_of_the_acting_user_with_defaults_at_the_clock_time() {
    let mut decks = MockDeckRepository::new();
    let inserted = Arc::new(Mutex::new(None));
    let seen = inserted.clone();
    decks.expect_insert().times(1).returning(move |new| {
        *seen.lock().unwrap() = Some(new.clone());
        Ok(stored(new))
    });
    let service = service_over(decks);
    let changes = DeckChanges {
        name: Some("Zur".into()),
        cards: Some(vec![line("commander", 1, 1), line("mainboard", 4, 4)]),
        ..DeckChanges::default()
    };
    let deck = block_on(service.create(&alice(), &mtg(), changes)).unwrap();

    let new = inserted.lock().unwrap().clone().unwrap();
    assert_eq!(new.id, DeckId(NEW_DECK));
    assert_eq!(new.owner, ALICE);
    assert_eq!(new.game, "mtg");
    assert_eq!(new.created_at, NOW);
    assert_eq!(new.provenance, Provenance::manual());
    assert_eq!(
        new.content,
        DeckContent {
            name: "Zur".into(),
            notes: String::new(),
            visibility: Visibility::Private,
            format_id: None,
            youtube_url: None,
            thumbnail: None,
            legal: false,
            archetype: None,
            cards: vec![card("commander", 1, 1), card("mainboard", 4, 4)],
            featured: None,
        }
    );
    assert_eq!(new.summary, summarize(&mtg(), &new.content));
    assert_eq!(deck.facts.id, DeckId(NEW_DECK));
}

#[test]
fn a_partner_without_a_user_creates_for_the_partners_creator() {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_insert()
        .withf(|new| new.owner == BOB)
        .times(1)
        .returning(|new| Ok(stored(new)));
    let partner = Principal {
        lane: Lane::PartnerApiKey,
        user: None,
        partner: Some(PartnerRef {
            slug: "acme".into(),
            created_by: BOB,
            game_scopes: crate::identity::GameScopes::All,
            tier: Tier::partner(),
        }),
        scopes: Scopes::parse_list("decks:write").unwrap(),
    };
    let changes = DeckChanges {
        name: Some("From a partner".into()),
        ..DeckChanges::default()
    };
    block_on(service_over(decks).create(&partner, &mtg(), changes)).unwrap();
}

#[test]
fn an_anonymous_create_is_not_found_and_stores_nothing() {
    // No expectation on the store: touching it fails the test.
    let service = service_over(MockDeckRepository::new());
    let changes = DeckChanges {
        name: Some("x".into()),
        ..DeckChanges::default()
    };
    let result = block_on(service.create(&Principal::anonymous(), &mtg(), changes));
    assert!(matches!(result, Err(CreateDeckError::NoUser)), "{result:?}");
}

#[test]
fn an_external_id_on_create_stamps_the_import_time() {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_insert()
        .times(1)
        .returning(|new| Ok(stored(new)));
    let changes = DeckChanges {
        name: Some("Imported".into()),
        source_provider: Some("moxfield".into()),
        source_external_id: Patch::Set("m-1".into()),
        source_external_url: Patch::Set("https://moxfield.com/decks/m-1".into()),
        ..DeckChanges::default()
    };
    let deck = block_on(service_over(decks).create(&alice(), &mtg(), changes)).unwrap();
    assert_eq!(
        deck.provenance,
        Provenance {
            source_provider: "moxfield".into(),
            source_external_id: Some("m-1".into()),
            source_external_version: None,
            source_external_url: Some("https://moxfield.com/decks/m-1".into()),
            source_imported_at: Some(NOW),
        }
    );
}

#[test]
fn a_create_with_a_known_format_keeps_it_and_an_unknown_one_is_refused() {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_insert()
        .times(1)
        .returning(|new| Ok(stored(new)));
    let service = service_over(decks);
    let commander = crate::catalog::format_id("mtg", "commander");
    let with_format = |id: Uuid| DeckChanges {
        name: Some("x".into()),
        format: Patch::Set(id.to_string()),
        ..DeckChanges::default()
    };
    let deck = block_on(service.create(&alice(), &mtg(), with_format(commander))).unwrap();
    assert_eq!(deck.content.format_id, Some(commander));

    let unknown = block_on(service.create(&alice(), &mtg(), with_format(Uuid::nil())));
    assert_eq!(
        violations(unknown.unwrap_err()),
        [("format".to_owned(), "unknown")]
    );
}

#[test]
fn a_duplicate_provenance_on_insert_is_reported_as_such() {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_insert()
        .returning(|_| Err(InsertDeckError::DuplicateProvenance));
    let changes = DeckChanges {
        name: Some("x".into()),
        ..DeckChanges::default()
    };
    let result = block_on(service_over(decks).create(&alice(), &mtg(), changes));
    assert!(
        matches!(result, Err(CreateDeckError::DuplicateProvenance)),
        "{result:?}"
    );
}

// ---- card lines ---------------------------------------------------------------------------

#[test]
fn the_same_printing_twice_in_a_section_is_one_line_with_the_summed_quantity() {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_insert()
        .times(1)
        .returning(|new| Ok(stored(new)));
    let changes = DeckChanges {
        name: Some("x".into()),
        cards: Some(vec![
            line("mainboard", 2, 4),
            line("sideboard", 1, 4),
            line("mainboard", 3, 4),
        ]),
        ..DeckChanges::default()
    };
    let deck = block_on(service_over(decks).create(&alice(), &mtg(), changes)).unwrap();
    assert_eq!(
        deck.content.cards,
        [card("mainboard", 5, 4), card("sideboard", 1, 4)]
    );
}

#[test]
fn a_merged_total_over_the_quantity_range_is_refused() {
    let service = service_over(MockDeckRepository::new());
    let changes = DeckChanges {
        name: Some("x".into()),
        cards: Some(vec![line("mainboard", 999, 5), line("mainboard", 1, 5)]),
        ..DeckChanges::default()
    };
    let error = block_on(service.create(&alice(), &mtg(), changes)).unwrap_err();
    assert_eq!(violations(error), [("cards".to_owned(), "range")]);
}

#[test]
fn unknown_sections_are_all_reported_before_any_resolution() {
    let service = service_over(MockDeckRepository::new());
    let changes = DeckChanges {
        name: Some("x".into()),
        cards: Some(vec![
            line("side", 1, 4),
            line("mainboard", 1, 4),
            line("Tokens", 1, 4),
        ]),
        ..DeckChanges::default()
    };
    let error = block_on(service.create(&alice(), &mtg(), changes)).unwrap_err();
    assert_eq!(
        violations(error),
        [
            ("cards[0].section".to_owned(), "unknown"),
            ("cards[2].section".to_owned(), "unknown")
        ]
    );
}

#[test]
fn unresolved_cards_and_featured_cards_name_their_field() {
    let service = service_over(MockDeckRepository::new());
    let unknown = CardIdentifier {
        variant_id: Some(Uuid::from_u128(0xdead).to_string()),
        ..CardIdentifier::default()
    };
    let changes = DeckChanges {
        name: Some("x".into()),
        cards: Some(vec![line("mainboard", 1, 4), {
            let mut missing = line("mainboard", 1, 4);
            missing.identifier = unknown.clone();
            missing
        }]),
        ..DeckChanges::default()
    };
    match block_on(service.create(&alice(), &mtg(), changes)) {
        Err(CreateDeckError::Unresolved { field, items }) => {
            assert_eq!(field, "cards");
            assert_eq!(items.len(), 1);
            assert_eq!(items[0].index, 1);
        }
        other => panic!("{other:?}"),
    }
    let changes = DeckChanges {
        name: Some("x".into()),
        featured: Patch::Set(vec![FeaturedInput {
            slot: FeaturedSlot::Cover,
            foil: false,
            identifier: unknown,
        }]),
        ..DeckChanges::default()
    };
    match block_on(service.create(&alice(), &mtg(), changes)) {
        Err(CreateDeckError::Unresolved { field, .. }) => assert_eq!(field, "featured"),
        other => panic!("{other:?}"),
    }
}

// ---- PATCH --------------------------------------------------------------------------------

#[test]
fn a_patch_appends_exactly_one_history_record() {
    // The store is asked once, to revise: no separate read, insert or version write.
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let seen = revisions.clone();
    let deck = existing();
    let mut decks = MockDeckRepository::new();
    decks.expect_revise().times(1).returning(move |_, reviser| {
        let revision = reviser(&deck).map_err(ReviseDeckError::Refused)?;
        seen.lock().unwrap().push(revision.clone());
        Ok(deck.clone())
    });
    let changes = DeckChanges {
        name: Some("Esper Control".into()),
        ..DeckChanges::default()
    };
    patch(&service_over(decks), &alice(), changes, Some(3)).unwrap();

    let revisions = revisions.lock().unwrap();
    assert_eq!(revisions.len(), 1);
    assert_eq!(revisions[0].history_type, HistoryType::Update);
    assert_eq!(revisions[0].at, NOW);
    assert_eq!(revisions[0].content.name, "Esper Control");
}

#[test]
fn a_patch_changes_only_what_it_names_and_clears_what_it_nulls() {
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let service = service_over(store_revising(existing(), revisions.clone()));
    let changes = DeckChanges {
        notes: Some("new notes".into()),
        archetype: Patch::Clear,
        thumbnail: Patch::Set("https://img/x.png".into()),
        is_archived: Some(true),
        ..DeckChanges::default()
    };
    let deck = patch(&service, &alice(), changes, None).unwrap();

    let before = existing();
    assert_eq!(
        deck.content,
        DeckContent {
            notes: "new notes".into(),
            archetype: None,
            thumbnail: Some("https://img/x.png".into()),
            ..before.content.clone()
        }
    );
    assert!(deck.is_archived);
    assert_eq!(deck.provenance, before.provenance);
    assert_eq!(deck.facts.summary, before.facts.summary);
    assert_eq!(deck.version, 4);
}

#[test]
fn a_patch_of_the_cards_recomputes_the_summary() {
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let service = service_over(store_revising(existing(), revisions.clone()));
    let changes = DeckChanges {
        cards: Some(vec![line("commander", 1, 2), line("mainboard", 4, 4)]),
        ..DeckChanges::default()
    };
    let deck = patch(&service, &alice(), changes, None).unwrap();
    assert_eq!(deck.facts.summary, summarize(&mtg(), &deck.content));
    assert_eq!(deck.facts.summary.colors, ["W", "R", "G"]);
    assert_eq!(deck.facts.summary.featured_cards[0].card.name, "Atraxa");
}

#[test]
fn provenance_stamps_the_import_time_only_when_an_external_id_is_given() {
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let service = service_over(store_revising(existing(), revisions));
    let before = existing().provenance;

    // Another version or URL of the same import keeps its import time.
    let kept = patch(
        &service,
        &alice(),
        DeckChanges {
            source_external_version: Patch::Set("8".into()),
            source_external_url: Patch::Set("https://moxfield.com/decks/abc".into()),
            ..DeckChanges::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(
        kept.provenance,
        Provenance {
            source_external_version: Some("8".into()),
            source_external_url: Some("https://moxfield.com/decks/abc".into()),
            ..before.clone()
        }
    );

    // An external id given now is an import now.
    let set = patch(
        &service,
        &alice(),
        DeckChanges {
            source_external_id: Patch::Set("def".into()),
            ..DeckChanges::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(set.provenance.source_external_id.as_deref(), Some("def"));
    assert_eq!(set.provenance.source_imported_at, Some(NOW));

    // Clearing the external id clears its import time.
    let cleared = patch(
        &service,
        &alice(),
        DeckChanges {
            source_provider: Some("manual".into()),
            source_external_id: Patch::Clear,
            ..DeckChanges::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(
        cleared.provenance,
        Provenance {
            source_provider: "manual".into(),
            source_external_id: None,
            source_imported_at: None,
            ..before
        }
    );
}

#[test]
fn only_the_owner_may_write_and_others_are_told_not_found() {
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let service = service_over(store_revising(existing(), revisions.clone()));
    let rename = || DeckChanges {
        name: Some("mine now".into()),
        ..DeckChanges::default()
    };
    let result = patch(&service, &bob(), rename(), None);
    assert!(matches!(result, Err(SaveDeckError::NotFound)), "{result:?}");
    let result = patch(&service, &Principal::anonymous(), rename(), None);
    assert!(matches!(result, Err(SaveDeckError::NotFound)), "{result:?}");
    assert!(revisions.lock().unwrap().is_empty());
}

#[test]
fn a_deck_of_another_game_is_not_found_for_its_owner_too() {
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let mut elsewhere = existing();
    elsewhere.facts.game = "lorcana".into();
    let service = service_over(store_revising(elsewhere, revisions.clone()));
    let changes = DeckChanges {
        name: Some("x".into()),
        ..DeckChanges::default()
    };
    let result = patch(&service, &alice(), changes, None);
    assert!(matches!(result, Err(SaveDeckError::NotFound)), "{result:?}");
    assert!(revisions.lock().unwrap().is_empty());
}

#[test]
fn if_match_must_name_the_current_version() {
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let service = service_over(store_revising(existing(), revisions.clone()));
    let rename = || DeckChanges {
        name: Some("renamed".into()),
        ..DeckChanges::default()
    };
    let stale = patch(&service, &alice(), rename(), Some(2));
    assert!(
        matches!(
            stale,
            Err(SaveDeckError::PreconditionFailed { current_version: 3 })
        ),
        "{stale:?}"
    );
    assert!(revisions.lock().unwrap().is_empty());
    patch(&service, &alice(), rename(), Some(3)).unwrap();
    patch(&service, &alice(), rename(), None).unwrap();
    assert_eq!(revisions.lock().unwrap().len(), 2);
}

#[test]
fn an_invalid_patch_never_reaches_the_store() {
    // No expectation on the store: touching it fails the test.
    let service = service_over(MockDeckRepository::new());
    let error = patch(&service, &alice(), DeckChanges::default(), None).unwrap_err();
    assert_eq!(violations(error), [("body".to_owned(), "empty")]);
    let error = patch(
        &service,
        &alice(),
        DeckChanges {
            name: Some(" ".into()),
            is_archived: Some(true),
            ..DeckChanges::default()
        },
        None,
    )
    .unwrap_err();
    assert_eq!(violations(error), [("name".to_owned(), "blank")]);
}

#[test]
fn the_store_refusing_a_duplicate_provenance_is_reported_as_such() {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_revise()
        .returning(|_, _| Err(ReviseDeckError::DuplicateProvenance));
    let changes = DeckChanges {
        source_external_id: Patch::Set("taken".into()),
        ..DeckChanges::default()
    };
    let result = patch(&service_over(decks), &alice(), changes, None);
    assert!(
        matches!(result, Err(SaveDeckError::DuplicateProvenance)),
        "{result:?}"
    );
}

// ---- featured cards and summaries ---------------------------------------------------------

#[test]
fn featured_cards_derive_from_commanders_by_name_then_companions() {
    let content = DeckContent {
        cards: vec![
            card("mainboard", 4, 4),
            card("companion", 1, 3),
            card("commander", 1, 1),
            card("commander", 1, 2),
        ],
        ..existing().content
    };
    let featured = summarize(&mtg(), &content).featured_cards;
    let shown: Vec<(&str, &str, u32, &str)> = featured
        .iter()
        .map(|f| {
            (
                f.slot_key.as_str(),
                f.label.as_str(),
                f.sort_order,
                f.card.name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("commander:0", "Commander", 0, "Atraxa"),
            ("commander:1", "Commander", 1, "Zur the Enchanter"),
            ("companion:0", "Companion", 2, "Lurrus"),
        ]
    );
}

/// A `fab` card of a section: its colours are its pitch's (none for a hero).
fn fab_card(section: &str, quantity: u32, name: &str, pitch: Option<&str>) -> DeckCard {
    DeckCard {
        section: section.into(),
        quantity,
        foil: false,
        card: CardSnapshot {
            variant_id: Uuid::new_v5(&Uuid::NAMESPACE_OID, name.as_bytes()),
            card_id: Uuid::new_v5(&Uuid::NAMESPACE_URL, name.as_bytes()),
            name: name.into(),
            set: "wtr".into(),
            collector_number: "1".into(),
            type_line: "Warrior Hero".into(),
            image_url: None,
            colors: pitch.map(str::to_owned).into_iter().collect(),
        },
    }
}

#[test]
fn a_fab_decks_hero_is_its_featured_card_and_its_colours_are_the_counted_pitches() {
    let content = DeckContent {
        cards: vec![
            fab_card("deck", 3, "Sink Below (red)", Some("red")),
            fab_card("hero", 1, "Dorinthea Ironsong", None),
            fab_card("arena", 1, "Dawnblade", None),
            fab_card("deck", 3, "Sigil of Solace (blue)", Some("blue")),
            fab_card(
                "maybeboard",
                1,
                "Enlightened Strike (yellow)",
                Some("yellow"),
            ),
        ],
        ..existing().content
    };
    let summary = summarize(&fab(), &content);
    let shown: Vec<(&str, &str, &str, u32, &str)> = summary
        .featured_cards
        .iter()
        .map(|f| {
            (
                f.slot.as_str(),
                f.slot_key.as_str(),
                f.label.as_str(),
                f.sort_order,
                f.card.name.as_str(),
            )
        })
        .collect();
    assert_eq!(shown, [("hero", "hero:0", "Hero", 0, "Dorinthea Ironsong")]);
    // The maybeboard's yellow does not count; the rest in pitch order.
    assert_eq!(summary.colors, ["red", "blue"]);
    // mtg's section names mean nothing in fab: no featured card without a hero.
    let heroless = DeckContent {
        cards: vec![fab_card("deck", 3, "Sink Below (red)", Some("red"))],
        ..content
    };
    assert!(summarize(&fab(), &heroless).featured_cards.is_empty());
}

#[test]
fn chosen_featured_cards_replace_the_derived_ones_until_cleared() {
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let service = service_over(store_revising(existing(), revisions));
    let chosen = patch(
        &service,
        &alice(),
        DeckChanges {
            featured: Patch::Set(vec![
                FeaturedInput {
                    slot: FeaturedSlot::Cover,
                    foil: true,
                    identifier: by_variant(4),
                },
                FeaturedInput {
                    slot: FeaturedSlot::Cover,
                    foil: false,
                    identifier: by_variant(3),
                },
            ]),
            ..DeckChanges::default()
        },
        None,
    )
    .unwrap();
    let shown: Vec<(String, bool, String)> = chosen
        .facts
        .summary
        .featured_cards
        .iter()
        .map(|f| (f.slot_key.clone(), f.foil, f.card.name.clone()))
        .collect();
    assert_eq!(
        shown,
        [
            ("cover:0".to_owned(), true, "Lightning Bolt".to_owned()),
            ("cover:1".to_owned(), false, "Lurrus".to_owned()),
        ]
    );

    let chosen_deck = chosen;
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let service = service_over(store_revising(chosen_deck, revisions));
    let cleared = patch(
        &service,
        &alice(),
        DeckChanges {
            featured: Patch::Clear,
            ..DeckChanges::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(cleared.content.featured, None);
    assert_eq!(cleared.facts.summary, existing().facts.summary);
    assert_eq!(
        cleared.facts.summary.featured_cards[0].slot_key,
        "commander:0"
    );
}

#[test]
fn summaries_count_every_section_and_colour_only_counted_ones_in_game_order() {
    let content = DeckContent {
        cards: vec![
            card("mainboard", 4, 4),
            card("mainboard", 20, 5),
            card("sideboard", 2, 3),
            card("maybeboard", 1, 2),
        ],
        ..existing().content
    };
    let summary = summarize(&mtg(), &content);
    assert_eq!(
        summary.section_counts,
        BTreeMap::from([
            ("mainboard".to_owned(), 24),
            ("maybeboard".to_owned(), 1),
            ("sideboard".to_owned(), 2),
        ])
    );
    // Atraxa (G, W) sits in the uncounted maybeboard: no green; white comes from Lurrus.
    assert_eq!(summary.colors, ["W", "B", "R"]);
    assert!(summary.featured_cards.is_empty());
}

// ---- reading, rollback, views -------------------------------------------------------------

#[test]
fn private_decks_are_found_for_their_owner_only() {
    let private = Deck {
        content: DeckContent {
            visibility: Visibility::Private,
            ..existing().content
        },
        ..existing()
    };
    let mut decks = MockDeckRepository::new();
    decks
        .expect_find()
        .returning(move |_| Ok(Some(private.clone())));
    let service = service_over(decks);
    let id = existing().facts.id;
    assert!(block_on(service.get(&alice(), &mtg(), id)).is_ok());
    for stranger in [bob(), Principal::anonymous()] {
        let result = block_on(service.get(&stranger, &mtg(), id));
        assert!(matches!(result, Err(FindDeckError::NotFound)), "{result:?}");
    }
    let lorcana = Game {
        slug: "lorcana".into(),
        ..mtg()
    };
    let result = block_on(service.get(&alice(), &lorcana, id));
    assert!(matches!(result, Err(FindDeckError::NotFound)), "{result:?}");
}

#[test]
fn a_rollback_restores_content_and_summary_but_not_provenance_or_archive() {
    let old_content = DeckContent {
        name: "Esper v1".into(),
        cards: vec![card("mainboard", 60, 5)],
        ..existing().content
    };
    let old_summary = summarize(&mtg(), &old_content);
    let version = DeckVersion {
        version_number: 1,
        history_type: HistoryType::Create,
        content: old_content.clone(),
        summary: old_summary.clone(),
        edited_at: CREATED,
    };
    let archived = Deck {
        is_archived: true,
        ..existing()
    };
    let revisions = Arc::new(Mutex::new(Vec::new()));
    let mut decks = store_revising(archived, revisions.clone());
    decks
        .expect_version()
        .withf(|_, number| *number == 1)
        .times(1)
        .returning(move |_, _| Ok(Some(version.clone())));
    let service = service_over(decks);
    let deck =
        block_on(service.rollback(&alice(), &mtg(), existing().facts.id, 1, Some(3))).unwrap();

    assert_eq!(deck.content, old_content);
    assert_eq!(deck.facts.summary, old_summary);
    assert_eq!(deck.provenance, existing().provenance);
    assert!(deck.is_archived);
    let revisions = revisions.lock().unwrap();
    assert_eq!(revisions.len(), 1);
    assert_eq!(
        revisions[0].history_type,
        HistoryType::Rollback { restored_from: 1 }
    );
    assert_eq!(revisions[0].at, NOW);
}

/// A store that holds `deck` and records the deck `insert` was asked to store.
fn store_forking(deck: Deck, inserted: Arc<Mutex<Option<NewDeck>>>) -> MockDeckRepository {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_find()
        .returning(move |_| Ok(Some(deck.clone())));
    decks.expect_insert().returning(move |new| {
        *inserted.lock().unwrap() = Some(new.clone());
        Ok(stored(new))
    });
    decks
}

#[test]
fn a_fork_copies_the_current_content_privately_and_names_its_source() {
    let inserted = Arc::new(Mutex::new(None));
    let service = service_over(store_forking(existing(), inserted.clone()));
    let deck = block_on(service.fork(&bob(), &mtg(), existing().facts.id, ForkRequest::default()))
        .unwrap();

    let new = inserted.lock().unwrap().clone().unwrap();
    assert_eq!(
        (new.id, new.owner, new.created_at),
        (DeckId(NEW_DECK), BOB, NOW)
    );
    assert_eq!(
        new.forked_from,
        Some(ForkedFrom {
            deck_id: existing().facts.id,
            version: 3
        })
    );
    // Everything of the content but the visibility; no provenance.
    assert_eq!(
        new.content,
        DeckContent {
            visibility: Visibility::Private,
            ..existing().content
        }
    );
    assert_eq!(new.summary, summarize(&mtg(), &new.content));
    assert_eq!(new.provenance, Provenance::manual());
    assert_eq!(new.first_version().history_type, HistoryType::Create);
    assert_eq!(
        (deck.version, deck.facts.likes, deck.facts.forks),
        (1, 0, 0)
    );
}

#[test]
fn a_fork_takes_a_given_version_name_and_visibility() {
    let old_content = DeckContent {
        name: "Esper v1".into(),
        cards: vec![card("mainboard", 60, 5)],
        ..existing().content
    };
    let version = DeckVersion {
        version_number: 1,
        history_type: HistoryType::Create,
        content: old_content.clone(),
        summary: DeckSummary::default(),
        edited_at: CREATED,
    };
    let inserted = Arc::new(Mutex::new(None));
    let mut decks = store_forking(existing(), inserted.clone());
    decks
        .expect_version()
        .withf(|_, number| *number == 1)
        .returning(move |_, _| Ok(Some(version.clone())));
    let request = ForkRequest {
        name: Some("Mine".into()),
        visibility: Some(vec!["public".into()]),
        version: Some(1),
    };
    block_on(service_over(decks).fork(&bob(), &mtg(), existing().facts.id, request)).unwrap();
    let new = inserted.lock().unwrap().clone().unwrap();
    assert_eq!(new.forked_from.map(|source| source.version), Some(1));
    assert_eq!(
        new.content,
        DeckContent {
            name: "Mine".into(),
            visibility: Visibility::Public,
            ..old_content
        }
    );
}

#[test]
fn a_fork_needs_a_user_a_readable_source_a_stored_version_and_valid_fields() {
    // No store expectations: none of these may store anything.
    let mut decks = MockDeckRepository::new();
    let private = Deck {
        content: DeckContent {
            visibility: Visibility::Private,
            ..existing().content
        },
        ..existing()
    };
    decks
        .expect_find()
        .returning(move |_| Ok(Some(private.clone())));
    decks.expect_version().returning(|_, _| Ok(None));
    let service = service_over(decks);
    let id = existing().facts.id;
    let partner = Principal {
        lane: Lane::PartnerApiKey,
        user: None,
        partner: Some(PartnerRef {
            slug: "acme".into(),
            created_by: ALICE,
            game_scopes: crate::identity::GameScopes::All,
            tier: Tier::partner(),
        }),
        scopes: Scopes::parse_list("decks:write").unwrap(),
    };
    let result = block_on(service.fork(&partner, &mtg(), id, ForkRequest::default()));
    assert!(matches!(result, Err(ForkError::NoUser)), "{result:?}");
    let result = block_on(service.fork(&bob(), &mtg(), id, ForkRequest::default()));
    assert!(matches!(result, Err(ForkError::NotFound)), "{result:?}");
    let old = ForkRequest {
        version: Some(9),
        ..ForkRequest::default()
    };
    let result = block_on(service.fork(&alice(), &mtg(), id, old));
    assert!(matches!(result, Err(ForkError::NotFound)), "{result:?}");
    let invalid = ForkRequest {
        name: Some(String::new()),
        visibility: Some(vec!["friends".into()]),
        version: None,
    };
    let error = block_on(service.fork(&alice(), &mtg(), id, invalid)).unwrap_err();
    assert_eq!(
        violations(error),
        [
            ("name".to_owned(), "length"),
            ("visibility".to_owned(), "invalid")
        ]
    );
}

#[test]
fn forks_of_a_hidden_deck_are_not_listed() {
    let private = Deck {
        content: DeckContent {
            visibility: Visibility::Private,
            ..existing().content
        },
        ..existing()
    };
    let mut decks = MockDeckRepository::new();
    let overview = private.overview();
    decks
        .expect_find_overview()
        .returning(move |_| Ok(Some(overview.clone())));
    // Only the owner's list reaches the store.
    decks
        .expect_list()
        .times(1)
        .returning(|_| Ok(Page::with_capped_total(Vec::new(), 0)));
    let service = service_over(decks);
    let request = ListRequest {
        with_summary: false,
        filters: DeckFilters {
            forked_from: Some(existing().facts.id),
            ..DeckFilters::default()
        },
        sort: DeckSort::default(),
        order: SortOrder::default(),
        page: PageRequest { page: 1, limit: 20 },
    };
    let page = block_on(service.list(&bob(), &mtg(), request.clone())).unwrap();
    assert_eq!((page.items.len(), page.total), (0, 0));
    block_on(service.list(&alice(), &mtg(), request)).unwrap();
}

#[test]
fn two_decks_compare_only_when_both_are_readable() {
    let mut private = existing();
    private.facts.id = DeckId(Uuid::from_u128(0xdef));
    private.content.name = "Hidden".into();
    private.content.visibility = Visibility::Private;
    let mut decks = MockDeckRepository::new();
    let hidden = private.clone();
    decks.expect_find().returning(move |id| {
        Ok(Some(if id == hidden.facts.id {
            hidden.clone()
        } else {
            existing()
        }))
    });
    let service = service_over(decks);
    let diff =
        block_on(service.compare(&alice(), &mtg(), existing().facts.id, private.facts.id)).unwrap();
    assert_eq!((diff.from, diff.to), (3, 3));
    assert_eq!(diff.fields.len(), 2, "{:?}", diff.fields);
    let result = block_on(service.compare(&bob(), &mtg(), existing().facts.id, private.facts.id));
    assert!(matches!(result, Err(FindDeckError::NotFound)), "{result:?}");
}

#[test]
fn a_rollback_to_no_version_is_not_found() {
    let mut decks = MockDeckRepository::new();
    decks.expect_version().returning(|_, _| Ok(None));
    let service = service_over(decks);
    for number in [0, -1, 9] {
        let result =
            block_on(service.rollback(&alice(), &mtg(), existing().facts.id, number, None));
        assert!(matches!(result, Err(RollbackError::NotFound)), "{result:?}");
    }
}

#[test]
fn views_are_counted_per_keyed_visitor_within_the_policy_window() {
    let seen: Arc<Mutex<Vec<[u8; 32]>>> = Arc::new(Mutex::new(Vec::new()));
    let mut decks = MockDeckRepository::new();
    let deck = existing();
    decks
        .expect_find()
        .returning(move |_| Ok(Some(deck.clone())));
    let visitors = seen.clone();
    decks
        .expect_count_view()
        .withf(|_, _, _, now, window, weight| {
            *now == NOW
                && *window == DeckPolicy::default().pageview_window
                && *weight == trending::view_weight(NOW)
        })
        .times(4)
        .returning(move |_, _, visitor, _, _, _| {
            visitors.lock().unwrap().push(*visitor);
            Ok(Some(ViewCount {
                pageviews: 11,
                incremented: true,
            }))
        });
    let service = service_over(decks);
    let id = existing().facts.id;
    let ip: IpAddr = "192.0.2.7".parse().unwrap();
    let other_ip: IpAddr = "192.0.2.8".parse().unwrap();
    let anonymous = Principal::anonymous();
    for (principal, ip) in [
        (&bob(), ip),
        (&bob(), other_ip),
        (&anonymous, ip),
        (&anonymous, other_ip),
    ] {
        block_on(service.register_view(principal, &mtg(), id, ip)).unwrap();
    }
    let seen = seen.lock().unwrap();
    // A user is one visitor from any address; anonymous visitors are told apart by address.
    assert_eq!(seen[0], seen[1]);
    assert_ne!(seen[2], seen[3]);
    assert_ne!(seen[0], seen[2]);
    // Neither the address nor the user id is stored in the clear.
    let text = String::from_utf8_lossy(&seen[2]);
    assert!(!text.contains("192.0.2.7"));
}

#[test]
fn lists_are_asked_for_the_game_and_the_acting_viewer() {
    let mut decks = MockDeckRepository::new();
    decks
        .expect_list()
        .withf(|query| query.game == "mtg" && query.viewer == Some(BOB))
        .times(1)
        .returning(|_| {
            Ok(Page {
                items: Vec::new(),
                total: 0,
                total_exact: true,
            })
        });
    let request = ListRequest {
        with_summary: false,
        filters: DeckFilters::default(),
        sort: DeckSort::default(),
        order: SortOrder::default(),
        page: PageRequest::new(None, None).unwrap(),
    };
    let page = block_on(service_over(decks).list(&bob(), &mtg(), request)).unwrap();
    assert!(page.items.is_empty());
}

#[test]
fn premium_guides_are_whole_for_the_owner_and_premium_users_only() {
    let mut public = existing();
    public.facts.has_guide = true;
    let mut decks = MockDeckRepository::new();
    decks
        .expect_find()
        .returning(move |_| Ok(Some(public.clone())));
    decks.expect_guide().returning(|deck| {
        Ok(Some(DeckGuide {
            id: Uuid::from_u128(7),
            deck_id: deck,
            content_type: crate::decks::ContentType::Markdown,
            content: "x".repeat(500),
            is_premium: true,
            created_at: CREATED,
            updated_at: CREATED,
        }))
    });
    let service = service_over(decks);
    let id = existing().facts.id;
    let read = |principal: &Principal| {
        block_on(service.guide(principal, &mtg(), id))
            .unwrap()
            .unwrap()
    };
    let whole = read(&alice());
    let premium = read(&user(BOB, true));
    let preview = read(&bob());
    assert_eq!(whole, premium);
    assert_ne!(whole, preview);
    assert_eq!(read(&Principal::anonymous()), preview);
}

#[test]
fn a_guide_is_written_by_the_owner_only_at_the_clock_time() {
    let mut decks = MockDeckRepository::new();
    let deck = existing();
    decks
        .expect_find()
        .returning(move |_| Ok(Some(deck.clone())));
    decks
        .expect_put_guide()
        .withf(|guide, event| {
            guide.created_at == NOW
                && guide.updated_at == NOW
                && event.occurred_at == NOW
                && event.event_type == EventType::DeckStrategyGuideUpdated
                && event.subject_id == Some(guide.deck_id.0)
        })
        .times(1)
        .returning(|guide, _| Ok((guide.clone(), true)));
    let service = service_over(decks);
    let input = || GuideInput {
        content_type: "markdown".into(),
        content: "# Plan".into(),
        is_premium: false,
    };
    let id = existing().facts.id;
    let result = block_on(service.put_guide(&bob(), &mtg(), id, input()));
    assert!(matches!(result, Err(PutGuideError::NotFound)), "{result:?}");
    let (_, created) = block_on(service.put_guide(&alice(), &mtg(), id, input())).unwrap();
    assert!(created);
}

#[test]
fn an_overview_follows_the_visibility_and_game_rules_of_a_read() {
    let mut private = existing();
    private.content.visibility = Visibility::Private;
    let mut decks = MockDeckRepository::new();
    let stored = private.overview();
    decks
        .expect_find_overview()
        .returning(move |_| Ok(Some(stored.clone())));
    let service = service_over(decks);
    let id = private.facts.id;
    let read = |principal: &Principal, game: &Game| block_on(service.overview(principal, game, id));
    assert_eq!(read(&alice(), &mtg()).unwrap(), private.overview());
    for (principal, game) in [
        (bob(), mtg()),
        (Principal::anonymous(), mtg()),
        (
            alice(),
            Game {
                slug: "lorcana".into(),
                ..mtg()
            },
        ),
    ] {
        let result = read(&principal, &game);
        assert!(matches!(result, Err(FindDeckError::NotFound)), "{result:?}");
    }
}
