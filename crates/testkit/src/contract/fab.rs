//! Flesh and Blood's contract: the game's rows as the migration seeds them, and a slice of the
//! real `@flesh-and-blood/cards` file stored, found and re-imported alike in every store.

use anyhow::Context as _;
use deckhand_domain::catalog::source::{FabCard, fab_entries, pitch_color, pitched_name};
use deckhand_domain::catalog::{CatalogCounts, CatalogEntry, Game, PrintingKeys, name_key};
use deckhand_domain::ports::Repositories;

use super::support::Outcome;
use crate::fixtures::now;

/// Lines of `@flesh-and-blood/cards` 3.8.6, unchanged (`crates/app/data/make_fab_demo.py`).
pub const FAB_SLICE: &str = include_str!("../../../app/data/fab-demo.jsonl");

/// Every entry of the slice, as the `fab-cards` importer makes them.
pub fn fab_slice_entries(game: &Game) -> anyhow::Result<Vec<CatalogEntry>> {
    let mut entries = Vec::new();
    for line in FAB_SLICE.lines() {
        let card: FabCard = serde_json::from_str(line)?;
        entries.extend(fab_entries(game, card)?);
    }
    Ok(entries)
}

pub async fn fab_is_seeded_with_its_sections_pitches_and_formats(repos: &Repositories) -> Outcome {
    let fab = repos.catalog.game("fab").await?.context("fab")?;
    assert_eq!(fab.name, "Flesh and Blood");
    assert_eq!(fab.colors, ["red", "yellow", "blue"]);
    let sections: Vec<(&str, &str, bool)> = fab
        .sections
        .iter()
        .map(|s| (s.key.as_str(), s.label.as_str(), s.counted))
        .collect();
    assert_eq!(
        sections,
        [
            ("hero", "Hero", true),
            ("arena", "Arena", true),
            ("deck", "Deck", true),
            ("inventory", "Inventory", true),
            ("maybeboard", "Maybeboard", false),
        ]
    );
    let formats = repos.catalog.formats("fab").await?;
    let slugs: Vec<&str> = formats.iter().map(|f| f.slug.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "cc",
            "blitz",
            "living-legend",
            "silver-age",
            "ultimate-pit-fight",
            "open"
        ]
    );
    for format in formats.iter() {
        let id = deckhand_domain::catalog::format_id("fab", &format.slug);
        assert_eq!(format.id, id, "{}", format.slug);
    }
    Ok(())
}

pub async fn fab_cards_of_the_real_file_import_idempotently(repos: &Repositories) -> Outcome {
    let fab = repos.catalog.game("fab").await?.context("fab")?;
    let entries = fab_slice_entries(&fab)?;
    let expected = CatalogCounts {
        cards: 40,
        printings: u64::try_from(entries.len())?,
    };
    for _ in 0..2 {
        repos.catalog.upsert("fab", &entries, now()).await?;
        assert_eq!(repos.catalog.counts("fab").await?, expected);
    }
    assert!(expected.printings > 100, "{expected:?}");

    // A print id (set and number) finds every printing of it, all of one card.
    let keys = PrintingKeys {
        set_numbers: vec![("wtr".into(), "216".into())],
        ..PrintingKeys::default()
    };
    let found = repos.catalog.find_printings("fab", &keys).await?;
    assert!(found.len() >= 2, "{found:#?}");
    assert!(
        found
            .iter()
            .all(|e| e.printing.name == "Sink Below (yellow)")
    );
    assert!(found.iter().all(|e| e.printing.colors == ["yellow"]));
    assert!(
        found
            .iter()
            .all(|e| e.printing.catalog_b_id.as_deref() == Some("sink-below-yellow"))
    );
    assert_eq!(found[0].legalities["cc"], "legal");
    assert_eq!(found[0].legalities["silver-age"], "banned");

    // The printed name means every pitch; the name with its pitch, one card.
    let cards = repos
        .catalog
        .cards_named("fab", &[name_key("Sink Below")])
        .await?;
    assert_eq!(cards.len(), 3, "{cards:#?}");
    let red = repos
        .catalog
        .cards_named("fab", &[name_key("sink below (RED)")])
        .await?;
    assert_eq!(red.len(), 1);

    // TCGplayer ids are catalog a ids.
    let hero = entries
        .iter()
        .find(|e| e.printing.name == "Dorinthea Ironsong" && e.printing.catalog_a_id.is_some())
        .context("a Dorinthea Ironsong printing with a TCGplayer id")?;
    let keys = PrintingKeys {
        catalog_a_ids: vec![hero.printing.catalog_a_id.clone().context("tcgplayer")?],
        ..PrintingKeys::default()
    };
    let found = repos.catalog.find_printings("fab", &keys).await?;
    assert!(
        found
            .iter()
            .all(|e| e.printing.card_id == hero.printing.card_id)
    );
    assert!(hero.printing.colors.is_empty());
    assert_eq!(hero.legalities["cc"], "legal");
    assert_eq!(hero.legalities["blitz"], "not_legal");
    Ok(())
}

pub async fn fab_formats_and_hero_facts_are_what_a_check_reads(repos: &Repositories) -> Outcome {
    use deckhand_domain::formats::{CheckLine, HeroCard, check, seeds};
    use std::collections::HashMap;

    // cc and blitz carry rules; the other formats legality only.
    let formats = repos.catalog.formats("fab").await?;
    for format in formats.iter() {
        assert_eq!(
            format.rules,
            seeds::fab_rules(&format.slug),
            "{}",
            format.slug
        );
    }
    let cc = formats
        .iter()
        .find(|format| format.slug == "cc")
        .context("cc")?;
    let rules = cc.rules.clone().context("cc rules")?;
    assert_eq!(
        (rules.main_section.as_str(), rules.main_min, rules.pool_max),
        ("deck", 60, Some(80))
    );
    assert_eq!(rules.hero.map(|hero| hero.young), Some(false));

    // Hero facts and legal heroes survive the store, per name and pitch.
    let fab = repos.catalog.game("fab").await?.context("fab")?;
    let entries = fab_slice_entries(&fab)?;
    repos.catalog.upsert("fab", &entries, now()).await?;
    let mut ids: Vec<_> = entries.iter().map(|e| e.printing.card_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let facts: HashMap<String, _> = repos
        .catalog
        .card_facts("fab", &ids)
        .await?
        .into_iter()
        .map(|facts| (facts.name.clone(), facts))
        .collect();
    assert_eq!(facts.len(), 40);
    assert_eq!(
        facts["Dorinthea Ironsong"].text.hero,
        Some(HeroCard {
            name: "Dorinthea".into(),
            young: false
        })
    );
    assert_eq!(
        facts["Dorinthea"].text.hero.as_ref().map(|hero| hero.young),
        Some(true)
    );
    assert_eq!(facts["Sink Below (red)"].text.hero, None);
    assert!(
        facts["Sink Below (red)"]
            .text
            .legal_heroes
            .contains(&"Dorinthea".to_owned())
    );
    assert_eq!(
        facts["Alpha Rampage (red)"].text.legal_heroes,
        ["Rhinar", "Shiyana"]
    );

    // The one check over what the store holds: the deck is legal, and each break is named.
    let line = |section: &str, quantity: u32, name: &str| CheckLine {
        section: section.into(),
        quantity,
        card_id: facts.get(name).map(|card| card.card_id),
        name: name.into(),
        place: String::new(),
    };
    // The demo's deck (`cargo run`): its hero, three arena cards, then 23 deck cards of 3
    // copies each, named with their pitches as the catalog names them.
    let deck: Vec<CheckLine> = deckhand::demo::dorinthea_cards()
        .into_iter()
        .map(|card| {
            let pitch = card.identifier.pitch.as_deref().and_then(|pitch| {
                pitch
                    .parse()
                    .ok()
                    .and_then(|pitch| pitch_color(&fab, pitch))
            });
            let name = pitched_name(card.identifier.name.as_deref().unwrap_or_default(), pitch);
            line(&card.section, card.quantity, &name)
        })
        .collect();
    let by_id: HashMap<_, _> = facts
        .values()
        .map(|card| (card.card_id, card.clone()))
        .collect();
    let codes = |deck: &[CheckLine]| -> Vec<&'static str> {
        check(&fab, cc, &rules, deck, &by_id, now())
            .iter()
            .map(|problem| problem.rule.as_str())
            .collect()
    };
    assert_eq!(codes(&deck), Vec::<&str>::new());

    let mut broken = deck.clone();
    broken[0] = line("hero", 1, "Dorinthea");
    broken.truncate(4 + 19);
    broken.extend([
        line("inventory", 1, "Biting Blade (red)"),
        line("inventory", 1, "Biting Blade (red)"),
        line("inventory", 1, "Alpha Rampage (red)"),
        line("inventory", 1, "Art of War (yellow)"),
        line("inventory", 3, "No Such Card"),
        line("inventory", 3, "Overpower (blue)"),
        line("inventory", 3, "Stroke of Foresight (yellow)"),
        line("inventory", 3, "Warrior's Valor (blue)"),
        line("inventory", 3, "Glint the Quicksilver (blue)"),
        line("inventory", 3, "Rout (red)"),
    ]);
    assert_eq!(
        codes(&broken),
        [
            "banned",
            "copy_limit",
            "hero",
            "hero_legality",
            "main_size",
            "not_legal",
            "pool_size",
            "unresolved"
        ]
    );
    // Her adult self is the right age and legal in cc; Alpha Rampage is still not hers.
    broken[0] = line("hero", 1, "Dorinthea Ironsong");
    assert_eq!(
        codes(&broken),
        [
            "banned",
            "copy_limit",
            "hero_legality",
            "main_size",
            "pool_size",
            "unresolved"
        ]
    );
    Ok(())
}
