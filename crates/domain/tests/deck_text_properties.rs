//! Properties of the deck-list text format over generated decks and arbitrary text: export of a
//! parsed export is a fixed point (the contract's promise), and the parser takes any input.

use deckhand_domain::decks::QUANTITY_RANGE;
use deckhand_domain::decks::text::{
    DeckList, ListLine, PrintingRef, SectionSpec, into_deck_list, parse, render,
};
use proptest::prelude::*;

fn sections(pairs: &[(&str, &str)]) -> Vec<SectionSpec> {
    pairs
        .iter()
        .map(|(key, label)| SectionSpec {
            key: (*key).into(),
            label: (*label).into(),
        })
        .collect()
}

/// mtg's exported sections, and a game without `mainboard`/`sideboard` keys and with labels of
/// several words.
fn games() -> impl Strategy<Value = Vec<SectionSpec>> {
    prop_oneof![
        Just(sections(&[
            ("commander", "Commander"),
            ("companion", "Companion"),
            ("mainboard", "Deck"),
            ("sideboard", "Sideboard"),
        ])),
        Just(sections(&[
            ("main", "Main Deck"),
            ("extra", "Extra Deck"),
            ("side", "Side Deck"),
        ])),
    ]
}

/// Card names as catalogs spell them: letters (some beyond ASCII), digits, commas, apostrophes,
/// hyphens and spaces (runs of them too, which export collapses), and split cards joined by
/// ` // `. A few fixed names make duplicate lines, which export merges, likely.
fn names() -> impl Strategy<Value = String> {
    let simple = "[A-Za-zÆæûöé][A-Za-zÆæûöé0-9 ,'\\-]{0,24}";
    prop_oneof![
        3 => simple,
        2 => (simple, simple).prop_map(|(left, right)| format!("{left} // {right}")),
        1 => Just("Fire // Ice".to_owned()),
        1 => Just("Lightning Bolt".to_owned()),
        1 => Just("1996 World Champion".to_owned()),
    ]
}

fn printings() -> impl Strategy<Value = Option<PrintingRef>> {
    let printing = (
        "[A-Za-z0-9]{2,6}",
        "[0-9]{1,4}[a-e★]?|[A-Z]{1,3}-[0-9]{1,3}",
    )
        .prop_map(|(set, collector_number)| PrintingRef {
            set,
            collector_number,
        });
    prop_oneof![
        2 => Just(None),
        3 => printing.prop_map(Some),
        1 => Just(Some(PrintingRef {
            set: "m19".into(),
            collector_number: "5★".into(),
        })),
    ]
}

fn lines() -> impl Strategy<Value = ListLine> {
    (QUANTITY_RANGE, names(), printings(), any::<bool>()).prop_map(
        |(quantity, name, printing, foil)| ListLine {
            quantity,
            name,
            printing,
            foil,
        },
    )
}

fn decks() -> impl Strategy<Value = (Vec<SectionSpec>, DeckList)> {
    games().prop_flat_map(|game| {
        let count = game.len();
        (
            Just(game),
            prop::collection::vec(prop::collection::vec(lines(), 0..8), count),
        )
            .prop_map(|(game, cards)| {
                let list = DeckList {
                    sections: game.iter().cloned().zip(cards).collect(),
                };
                (game, list)
            })
    })
}

/// Pieces of the syntax the parser looks at, so that generated text reaches its branches far
/// more often than arbitrary strings do.
fn syntaxy_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "\n",
        "\r\n",
        "\r",
        " ",
        "\t",
        "\u{feff}",
        "//",
        "SB:",
        "sb: ",
        "4",
        "4x ",
        "0 ",
        "1000",
        "99999999999999999999",
        "x",
        "Deck",
        "Sideboard:",
        "Mainboard",
        "Creatures:",
        ":",
        "(",
        ")",
        "(M19) ",
        "5★",
        "123a",
        "*F*",
        " *f*",
        "Fire // Ice",
        "é",
        "\u{0}",
        "\"",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|pieces| pieces.concat())
}

fn assert_well_formed(text: &str, game: &[SectionSpec]) {
    let parsed = parse(text, game);
    let line_count = text.lines().count();
    for entry in &parsed.entries {
        assert!(QUANTITY_RANGE.contains(&entry.quantity), "{entry:?}");
        assert!(!entry.name.trim().is_empty(), "{entry:?}");
        assert!(game.iter().any(|s| s.key == entry.section), "{entry:?}");
        assert!((1..=line_count).contains(&entry.line), "{entry:?}");
        assert_eq!(entry.set.is_some(), entry.collector_number.is_some());
    }
    for warning in &parsed.warnings {
        assert!((1..=line_count).contains(&warning.line), "{warning:?}");
    }
    // Whatever was read can be exported.
    render(&into_deck_list(&parsed, game));
}

proptest! {
    #[test]
    fn export_of_a_parsed_export_is_a_fixed_point((game, deck) in decks()) {
        let exported = render(&deck);
        let parsed = parse(&exported, &game);
        prop_assert_eq!(&parsed.warnings, &[]);
        prop_assert_eq!(render(&into_deck_list(&parsed, &game)), exported);
    }

    #[test]
    fn parse_takes_arbitrary_text(text in any::<String>(), game in games()) {
        assert_well_formed(&text, &game);
    }

    #[test]
    fn parse_takes_text_made_of_its_own_syntax(text in syntaxy_text(), game in games()) {
        assert_well_formed(&text, &game);
    }
}
