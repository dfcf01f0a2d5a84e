//! The card catalog: seeded games and formats, idempotent imports, and every way a printing is
//! found (exact keys, names, preferred printings).

use anyhow::Context as _;
use deckhand_domain::catalog::{
    CardPick, CatalogCounts, FeaturedSlot, Game, Preference, PrintingKeys, format_id,
};
use deckhand_domain::ports::Repositories;
use uuid::Uuid;

use crate::fixtures::printing;

use super::support::Outcome;

/// The rows the catalog migration seeds, identical in every store.
pub async fn games_and_formats_are_seeded(repos: &Repositories) -> Outcome {
    let games = repos.catalog.games().await?;
    let slugs: Vec<&str> = games.iter().map(|game| game.slug.as_str()).collect();
    assert_eq!(slugs, ["mtg", "lorcana", "fab"]);
    let mtg = repos.catalog.game("mtg").await?.context("mtg")?;
    assert_eq!(*mtg, games[0]);
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
    for format in formats.iter() {
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

/// A batch's legalities are recorded after its cards are stored
/// (`CatalogService::import_batches`); for a card the catalog does not hold, the store
/// refuses them and records nothing.
pub async fn legalities_of_a_card_not_stored_are_refused(repos: &Repositories) -> Outcome {
    let stored = printing(Uuid::new_v4(), "Stored Card", "tst", "1");
    let unknown = printing(Uuid::new_v4(), "Unknown Card", "tst", "2");
    let at = crate::fixtures::now();
    repos
        .catalog
        .store_entries("mtg", std::slice::from_ref(&stored))
        .await?;
    let refused = repos
        .catalog
        .record_imported_legalities("mtg", &[stored.clone(), unknown.clone()], at)
        .await;
    assert!(refused.is_err());
    let ids = [stored.printing.card_id, unknown.printing.card_id];
    let facts = repos.catalog.card_facts("mtg", &ids).await?;
    assert_eq!(facts.len(), 1);
    assert!(facts[0].legalities.is_empty(), "{:?}", facts[0].legalities);
    Ok(())
}
