//! Flesh and Blood's contract: the game's rows as the migration seeds them, and a slice of the
//! real `@flesh-and-blood/cards` file stored, found and re-imported alike in every store.

use anyhow::Context as _;
use deckhand_domain::catalog::source::{FabCard, fab_entries};
use deckhand_domain::catalog::{CatalogCounts, CatalogEntry, Game, PrintingKeys, name_key};
use deckhand_domain::ports::Repositories;

use super::Outcome;
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
    for format in &formats {
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
