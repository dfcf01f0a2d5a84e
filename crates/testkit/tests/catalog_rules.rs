//! The resolution rules of `CatalogService::resolve`, over the memory store with synthetic
//! cards: precedence, reasons, names and default printings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use deckhand_domain::catalog::{
    CardIdentifier, CatalogEntry, CatalogService, Game, MatchedBy, Preference, Resolution,
    UnresolvedReason,
};
use deckhand_testkit::fixtures::printing;
use time::macros::date;
use uuid::Uuid;

struct World {
    catalog: CatalogService,
    game: std::sync::Arc<Game>,
    bears: CatalogEntry,
    bears_old: CatalogEntry,
    fire_ice: CatalogEntry,
    twin_a: CatalogEntry,
}

async fn world() -> World {
    let repos = deckhand_memory::repositories();
    let catalog = CatalogService::new(repos.catalog.clone());
    let game = catalog.game("mtg").await.unwrap();

    let bears_id = Uuid::new_v4();
    let mut bears = printing(bears_id, "Grizzly Bears", "m19", "170");
    bears.printing.catalog_a_id = Some("100".into());
    bears.printing.catalog_b_id = Some("200".into());
    bears.printing.catalog_c_id = Some("300".into());
    bears.released_at = Some(date!(2018 - 07 - 13));
    let mut bears_old = printing(bears_id, "Grizzly Bears", "10e", "268★");
    bears_old.released_at = Some(date!(2007 - 07 - 13));
    bears_old.preference = Preference::Promo;
    bears_old.printing.catalog_a_id = Some("101".into());
    let mut bears_es = printing(bears_id, "Grizzly Bears", "m19", "170");
    bears_es.lang = "es".into();
    bears_es.preference = Preference::OtherLanguage;
    bears_es.released_at = Some(date!(2019 - 01 - 01));

    let mut fire_ice = printing(Uuid::new_v4(), "Fire // Ice", "mh2", "290");
    fire_ice.face_names = vec!["Fire".into(), "Ice".into()];
    std::sync::Arc::make_mut(&mut fire_ice.legalities).insert("modern".into(), "legal".into());
    // Two different cards behind one name and one catalog id.
    let twin_a = printing(Uuid::new_v4(), "Twin", "aaa", "1");
    let mut twin_b = printing(Uuid::new_v4(), "Twin", "bbb", "1");
    twin_b.printing.catalog_a_id = Some("999".into());
    let mut twin_a_with_id = twin_a.clone();
    twin_a_with_id.printing.catalog_a_id = Some("999".into());

    catalog
        .import_batch(
            &game,
            &[
                bears.clone(),
                bears_old.clone(),
                bears_es,
                fire_ice.clone(),
                twin_a_with_id.clone(),
                twin_b,
            ],
            deckhand_testkit::fixtures::now(),
        )
        .await
        .unwrap();
    World {
        catalog,
        game,
        bears,
        bears_old,
        fire_ice,
        twin_a: twin_a_with_id,
    }
}

fn id(build: impl FnOnce(&mut CardIdentifier)) -> CardIdentifier {
    let mut identifier = CardIdentifier::default();
    build(&mut identifier);
    identifier
}

async fn resolve_one(world: &World, identifier: CardIdentifier) -> Resolution {
    world
        .catalog
        .resolve(&world.game, &[identifier], None)
        .await
        .unwrap()
}

async fn matched(world: &World, identifier: CardIdentifier) -> (MatchedBy, Uuid) {
    let resolution = resolve_one(world, identifier).await;
    assert!(resolution.unresolved.is_empty(), "{resolution:?}");
    let resolved = &resolution.resolved[0];
    (resolved.matched_by, resolved.printing.variant_id)
}

async fn reason(world: &World, identifier: CardIdentifier) -> UnresolvedReason {
    let resolution = resolve_one(world, identifier).await;
    assert!(resolution.resolved.is_empty(), "{resolution:?}");
    resolution.unresolved[0].reason
}

#[tokio::test]
async fn each_field_resolves_on_its_own() {
    let w = world().await;
    let bears = w.bears.printing.variant_id;
    let old = w.bears_old.printing.variant_id;
    let cases = [
        (
            id(|i| i.variant_id = Some(old.to_string())),
            MatchedBy::VariantId,
            old,
        ),
        (
            id(|i| i.catalog_a_id = Some("100".into())),
            MatchedBy::CatalogAId,
            bears,
        ),
        (
            id(|i| i.catalog_b_id = Some("200".into())),
            MatchedBy::CatalogBId,
            bears,
        ),
        (
            id(|i| i.catalog_c_id = Some("300".into())),
            MatchedBy::CatalogCId,
            bears,
        ),
        (
            id(|i| {
                i.set = Some("10E".into());
                i.collector_number = Some("268★".into());
            }),
            MatchedBy::SetAndCollectorNumber,
            old,
        ),
        (
            id(|i| i.card_id = Some(w.bears.printing.card_id.to_string())),
            MatchedBy::CardId,
            bears,
        ),
        (
            id(|i| i.name = Some("grizzly BEARS".into())),
            MatchedBy::Name,
            bears,
        ),
        (
            id(|i| {
                i.name = Some("Grizzly Bears".into());
                i.set = Some("10e".into());
            }),
            MatchedBy::Name,
            old,
        ),
    ];
    for (identifier, by, variant) in cases {
        assert_eq!(
            matched(&w, identifier.clone()).await,
            (by, variant),
            "{identifier:?}"
        );
    }
}

#[tokio::test]
async fn higher_precedence_wins_and_misses_fall_through() {
    let w = world().await;
    let fire = w.fire_ice.printing.variant_id;
    // Every field present, each pointing elsewhere: variantId decides.
    let everything = id(|i| {
        i.variant_id = Some(fire.to_string());
        i.catalog_a_id = Some("100".into());
        i.catalog_b_id = Some("200".into());
        i.catalog_c_id = Some("300".into());
        i.set = Some("aaa".into());
        i.collector_number = Some("1".into());
        i.card_id = Some(w.bears.printing.card_id.to_string());
        i.name = Some("Twin".into());
    });
    assert_eq!(matched(&w, everything).await, (MatchedBy::VariantId, fire));
    // catalog_a beats set + number, cardId beats name.
    let a_over_set = id(|i| {
        i.catalog_a_id = Some("100".into());
        i.set = Some("mh2".into());
        i.collector_number = Some("290".into());
    });
    assert_eq!(matched(&w, a_over_set).await.0, MatchedBy::CatalogAId);
    let card_over_name = id(|i| {
        i.card_id = Some(w.fire_ice.printing.card_id.to_string());
        i.name = Some("Grizzly Bears".into());
    });
    assert_eq!(matched(&w, card_over_name).await, (MatchedBy::CardId, fire));
    // A stale id, a malformed UUID and an unknown number hand over to the name.
    let stale = id(|i| {
        i.variant_id = Some(Uuid::new_v4().to_string());
        i.card_id = Some("not-a-uuid".into());
        i.catalog_b_id = Some("0".into());
        i.name = Some("Fire // Ice".into());
    });
    assert_eq!(matched(&w, stale).await, (MatchedBy::Name, fire));
}

#[tokio::test]
async fn names_match_the_front_face_case_insensitively() {
    let w = world().await;
    let fire = w.fire_ice.printing.variant_id;
    for name in ["Fire", "  fIRE ", "fire // ice"] {
        let identifier = id(|i| i.name = Some(name.into()));
        assert_eq!(
            matched(&w, identifier).await,
            (MatchedBy::Name, fire),
            "{name}"
        );
    }
    assert_eq!(
        reason(&w, id(|i| i.name = Some("Ice".into()))).await,
        UnresolvedReason::NotFound
    );
}

#[tokio::test]
async fn the_default_printing_is_the_newest_english_regular_one() {
    let w = world().await;
    // The Spanish printing is newer and the 10e one is a promo: neither is the default.
    let by_name = id(|i| i.name = Some("Grizzly Bears".into()));
    assert_eq!(matched(&w, by_name).await.1, w.bears.printing.variant_id);
    // Set + number shared by two languages: the English one.
    let shared = id(|i| {
        i.set = Some("m19".into());
        i.collector_number = Some("170".into());
    });
    assert_eq!(matched(&w, shared).await.1, w.bears.printing.variant_id);
}

#[tokio::test]
async fn every_reason_is_reported() {
    let w = world().await;
    let blank = id(|i| {
        i.name = Some("   ".into());
        i.set = Some(String::new());
    });
    assert_eq!(
        reason(&w, CardIdentifier::default()).await,
        UnresolvedReason::Empty
    );
    assert_eq!(reason(&w, blank).await, UnresolvedReason::Empty);
    assert_eq!(
        reason(&w, id(|i| i.name = Some("Nothing".into()))).await,
        UnresolvedReason::NotFound
    );
    // A set alone identifies nothing; a name in a set without that card is not found.
    assert_eq!(
        reason(&w, id(|i| i.set = Some("m19".into()))).await,
        UnresolvedReason::NotFound
    );
    let wrong_set = id(|i| {
        i.name = Some("Fire".into());
        i.set = Some("m19".into());
    });
    assert_eq!(reason(&w, wrong_set).await, UnresolvedReason::NotFound);
    assert_eq!(
        reason(&w, id(|i| i.name = Some("twin".into()))).await,
        UnresolvedReason::Ambiguous
    );
    assert_eq!(
        reason(&w, id(|i| i.catalog_a_id = Some("999".into()))).await,
        UnresolvedReason::Ambiguous
    );
    // Ambiguity is settled by a more precise field.
    let settled = id(|i| {
        i.name = Some("Twin".into());
        i.set = Some("aaa".into());
        i.collector_number = Some("1".into());
    });
    assert_eq!(matched(&w, settled).await.1, w.twin_a.printing.variant_id);
}

#[tokio::test]
async fn a_format_keeps_only_legal_or_restricted_printings() {
    let w = world().await;
    let modern = w.catalog.format(&w.game, "modern").await.unwrap().unwrap();
    let vintage = w
        .catalog
        .format(
            &w.game,
            &w.catalog
                .format(&w.game, "VINTAGE")
                .await
                .unwrap()
                .unwrap()
                .id
                .to_string(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(vintage.slug, "vintage");
    let identifiers = [
        id(|i| i.name = Some("Fire".into())),
        id(|i| i.name = Some("Grizzly Bears".into())),
    ];
    let resolution = w
        .catalog
        .resolve(&w.game, &identifiers, Some(&modern))
        .await
        .unwrap();
    assert_eq!(resolution.resolved.len(), 1);
    assert_eq!(resolution.resolved[0].index, 0);
    assert_eq!(resolution.unresolved[0].index, 1);
    assert_eq!(
        resolution.unresolved[0].reason,
        UnresolvedReason::NotLegalInFormat
    );
    assert!(
        w.catalog
            .format(&w.game, "pauperish")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn results_keep_request_positions() {
    let w = world().await;
    let identifiers = [
        id(|i| i.name = Some("Nothing".into())),
        id(|i| i.name = Some("Fire".into())),
        CardIdentifier::default(),
        id(|i| i.name = Some("Fire".into())),
    ];
    let resolution = w
        .catalog
        .resolve(&w.game, &identifiers, None)
        .await
        .unwrap();
    let resolved: Vec<usize> = resolution.resolved.iter().map(|r| r.index).collect();
    let unresolved: Vec<usize> = resolution.unresolved.iter().map(|u| u.index).collect();
    assert_eq!((resolved, unresolved), (vec![1, 3], vec![0, 2]));
    assert_eq!(resolution.resolved[0].input, identifiers[1]);
}
