//! Resolution of `fab` cards (contract, "A second game: Flesh and Blood"), over the memory
//! store holding a slice of the real `@flesh-and-blood/cards` file: name and pitch,
//! `cardIdentifier`, print id, set and number, TCGplayer id, and the format filter.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use deckhand_domain::catalog::{
    CardIdentifier, CatalogService, Game, MatchedBy, Resolution, UnresolvedReason,
};
use deckhand_testkit::contract::fab_slice_entries;

async fn world() -> (CatalogService, Arc<Game>) {
    let repos = deckhand_memory::repositories();
    let catalog = CatalogService::new(repos.catalog.clone());
    let game = catalog.game("fab").await.unwrap();
    let entries = fab_slice_entries(&game).unwrap();
    catalog
        .import_batch(&game, &entries, deckhand_testkit::fixtures::now())
        .await
        .unwrap();
    (catalog, game)
}

fn id(build: impl FnOnce(&mut CardIdentifier)) -> CardIdentifier {
    let mut identifier = CardIdentifier::default();
    build(&mut identifier);
    identifier
}

async fn resolve(
    world: &(CatalogService, Arc<Game>),
    identifiers: &[CardIdentifier],
) -> Resolution {
    world.0.resolve(&world.1, identifiers, None).await.unwrap()
}

#[tokio::test]
async fn a_name_with_several_pitches_needs_one() {
    let world = world().await;
    let named = |name: &str, pitch: Option<&str>| {
        id(|i| {
            i.name = Some(name.into());
            i.pitch = pitch.map(Into::into);
        })
    };
    let resolution = resolve(
        &world,
        &[
            named("Sink Below", Some("1")),
            named("sink below", Some("Yellow")),
            named("Sink Below", Some("3")),
            named("Sink Below (red)", None),
            named("Rout", None),
            named("Dorinthea Ironsong", None),
            named("Sink Below", None),
            named("Sink Below", Some("4")),
            named("Dorinthea Ironsong", Some("red")),
        ],
    )
    .await;
    let names: Vec<&str> = resolution
        .resolved
        .iter()
        .map(|r| r.printing.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Sink Below (red)",
            "Sink Below (yellow)",
            "Sink Below (blue)",
            "Sink Below (red)",
            "Rout (red)",
            "Dorinthea Ironsong",
        ]
    );
    assert!(
        resolution
            .resolved
            .iter()
            .all(|r| r.matched_by == MatchedBy::Name)
    );
    assert_eq!(resolution.resolved[2].printing.colors, ["blue"]);
    assert!(resolution.resolved[5].printing.colors.is_empty());
    let reasons: Vec<(usize, UnresolvedReason)> = resolution
        .unresolved
        .iter()
        .map(|u| (u.index, u.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (6, UnresolvedReason::Ambiguous),
            (7, UnresolvedReason::NotFound),
            (8, UnresolvedReason::NotFound),
        ]
    );
}

#[tokio::test]
async fn card_identifier_print_set_and_number_and_tcgplayer_id_resolve() {
    let world = world().await;
    let resolution = resolve(
        &world,
        &[
            id(|i| i.card_identifier = Some("sink-below-yellow".into())),
            id(|i| i.print = Some("WTR216".into())),
            id(|i| {
                i.set_code = Some("WTR".into());
                i.collector_number = Some("216".into());
            }),
            id(|i| {
                i.set = Some("wtr".into());
                i.collector_number = Some("216".into());
            }),
            id(|i| i.print = Some("wtr-216".into())),
            id(|i| i.card_identifier = Some("no-such-card".into())),
        ],
    )
    .await;
    assert_eq!(resolution.resolved.len(), 4, "{resolution:#?}");
    for resolved in &resolution.resolved {
        assert_eq!(resolved.printing.name, "Sink Below (yellow)");
        assert_eq!(
            resolved.printing.catalog_b_id.as_deref(),
            Some("sink-below-yellow")
        );
    }
    assert_eq!(resolution.resolved[0].matched_by, MatchedBy::CatalogBId);
    assert_eq!(
        resolution.resolved[1].matched_by,
        MatchedBy::SetAndCollectorNumber
    );
    assert_eq!(resolution.resolved[1].printing.set, "wtr");
    assert_eq!(resolution.resolved[1].printing.collector_number, "216");
    assert_eq!(resolution.unresolved.len(), 2);

    // A TCGplayer id finds its printing.
    let tcgplayer = resolution.resolved[1]
        .printing
        .catalog_a_id
        .clone()
        .expect("WTR216 has a TCGplayer id");
    let by_tcgplayer = resolve(&world, &[id(|i| i.tcgplayer_id = Some(tcgplayer.clone()))]).await;
    assert_eq!(by_tcgplayer.resolved[0].matched_by, MatchedBy::CatalogAId);
    assert_eq!(
        by_tcgplayer.resolved[0].printing.catalog_a_id,
        Some(tcgplayer)
    );
}

#[tokio::test]
async fn the_default_printing_is_a_plain_one_and_formats_filter() {
    let world = world().await;
    let by_name = resolve(
        &world,
        &[id(|i| i.name = Some("Dorinthea Ironsong".into()))],
    )
    .await;
    let hero = &by_name.resolved[0].printing;
    assert_eq!(hero.type_line, "Warrior Hero");
    let cc = world.0.format(&world.1, "cc").await.unwrap().unwrap();
    let blitz = world.0.format(&world.1, "blitz").await.unwrap().unwrap();
    let heroes = [
        id(|i| i.name = Some("Dorinthea Ironsong".into())),
        id(|i| i.name = Some("Arakni".into())),
    ];
    let in_cc = world.0.resolve(&world.1, &heroes, Some(&cc)).await.unwrap();
    assert_eq!(in_cc.resolved.len(), 1);
    assert_eq!(
        in_cc.unresolved[0].reason,
        UnresolvedReason::NotLegalInFormat
    );
    let in_blitz = world
        .0
        .resolve(&world.1, &heroes, Some(&blitz))
        .await
        .unwrap();
    assert_eq!(in_blitz.resolved[0].printing.name, "Arakni");
    assert_eq!(in_blitz.unresolved[0].index, 0);
}
