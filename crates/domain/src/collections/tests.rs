use std::collections::HashMap;

use uuid::Uuid;

use super::*;
use crate::catalog::{Game, Section};
use crate::decks::{CardSnapshot, DeckCard};

fn game() -> Game {
    // Not Magic: any game's sections, counted or not, in its own order.
    Game {
        slug: "test".into(),
        name: "Test".into(),
        sections: [
            ("hero", true),
            ("deck", true),
            ("side", true),
            ("maybe", false),
        ]
        .map(|(key, counted)| Section {
            key: key.into(),
            label: key.to_uppercase(),
            counted,
            featured_slot: None,
        })
        .into(),
        colors: Vec::new(),
    }
}

fn card(n: u128, name: &str) -> CollectionCard {
    CollectionCard {
        variant_id: Uuid::from_u128(1000 + n),
        card_id: Uuid::from_u128(n),
        name: name.into(),
        set: "abc".into(),
        collector_number: n.to_string(),
    }
}

fn deck_card(section: &str, quantity: u32, n: u128, name: &str, printing: u128) -> DeckCard {
    let collection_card = card(n, name);
    DeckCard {
        section: section.into(),
        quantity,
        foil: false,
        card: CardSnapshot {
            variant_id: Uuid::from_u128(printing),
            card_id: collection_card.card_id,
            name: collection_card.name,
            set: "abc".into(),
            collector_number: "1".into(),
            type_line: String::new(),
            image_url: None,
            colors: Vec::new(),
        },
    }
}

fn line(index: usize, n: u128, foil: bool, quantity: i64) -> CollectionLine {
    CollectionLine {
        index,
        card: card(n, "Card"),
        foil,
        quantity,
        trade_quantity: 0,
        condition: None,
        language: None,
    }
}

#[test]
fn a_delta_may_not_take_a_quantity_below_zero() {
    let held = Held {
        quantity: 2,
        trade_quantity: 2,
    };
    assert_eq!(held.after(&line(0, 1, false, -3)), None);
    assert_eq!(
        held.after(&line(0, 1, false, -2)),
        Some(Held {
            quantity: 0,
            trade_quantity: 0
        })
    );
    assert_eq!(
        Held::default().after(&line(0, 1, false, 4)),
        Some(Held {
            quantity: 4,
            trade_quantity: 0
        })
    );
}

#[test]
fn the_trade_quantity_stays_within_the_quantity() {
    let mut trading = line(0, 1, false, -3);
    trading.trade_quantity = 0;
    let held = Held {
        quantity: 4,
        trade_quantity: 4,
    };
    assert_eq!(
        held.after(&trading),
        Some(Held {
            quantity: 1,
            trade_quantity: 1
        })
    );
}

#[test]
fn lines_of_one_printing_and_finish_merge_at_the_first_position() {
    let merged = merge_lines(vec![
        line(0, 1, false, 3),
        line(1, 1, true, 1),
        line(2, 1, false, -5),
        line(3, 2, false, 1),
    ]);
    let summary: Vec<(usize, bool, i64)> = merged
        .iter()
        .map(|line| (line.index, line.foil, line.quantity))
        .collect();
    assert_eq!(summary, [(0, false, -2), (1, true, 1), (3, false, 1)]);
}

#[test]
fn needs_count_any_printing_and_share_copies_in_section_order() {
    let cards = vec![
        // Two printings of card 1 in `deck`, one in `side`, and a maybe copy that never counts.
        deck_card("deck", 2, 1, "Bolt", 11),
        deck_card("deck", 1, 1, "Bolt", 12),
        deck_card("side", 2, 1, "Bolt", 11),
        deck_card("maybe", 4, 1, "Bolt", 11),
        deck_card("hero", 1, 2, "Arbiter", 21),
        deck_card("deck", 4, 3, "Counter", 31),
    ];
    let owned = HashMap::from([(Uuid::from_u128(1), 4), (Uuid::from_u128(2), 9)]);
    let needs = needs(&game(), &cards, &owned);
    let items: Vec<(&str, &str, u32, u32, u32)> = needs
        .items
        .iter()
        .map(|item| {
            (
                item.name.as_str(),
                item.section.as_str(),
                item.quantity,
                item.owned,
                item.missing,
            )
        })
        .collect();
    assert_eq!(
        items,
        [
            ("Arbiter", "hero", 1, 1, 0),
            ("Bolt", "deck", 3, 3, 0),
            ("Bolt", "side", 2, 1, 1),
            ("Counter", "deck", 4, 0, 4),
        ]
    );
    assert_eq!((needs.have, needs.need), (5, 5));
    assert_eq!(
        shopping_list(&game(), &needs),
        "DECK\n4 Counter\n\nSIDE\n1 Bolt\n"
    );
}

#[test]
fn a_collection_that_covers_everything_needs_nothing() {
    let cards = vec![deck_card("deck", 4, 1, "Bolt", 11)];
    let owned = HashMap::from([(Uuid::from_u128(1), 4)]);
    let needs = needs(&game(), &cards, &owned);
    assert_eq!((needs.have, needs.need), (4, 0));
    assert_eq!(shopping_list(&game(), &needs), "");
}

const MOXFIELD: &str = "\"Count\",\"Tradelist Count\",\"Name\",\"Edition\",\"Condition\",\"Language\",\"Foil\",\"Tags\",\"Last Modified\",\"Collector Number\",\"Alter\",\"Proxy\",\"Purchase Price\"\n\"4\",\"1\",\"Llanowar Elves\",\"m19\",\"Near Mint\",\"English\",\"\",\"\",\"2026-01-01 10:00:00.000000\",\"314\",\"False\",\"False\",\"\"\n\"2\",\"0\",\"Fire // Ice\",\"mh2\",\"Near Mint\",\"English\",\"foil\",\"\",\"\",\"290\",\"False\",\"False\",\"\"\n\"x\",\"0\",\"Broken\",\"m19\",\"\",\"\",\"\",\"\",\"\",\"1\",\"False\",\"False\",\"\"\n";

const DECKBOX: &str = "Count,Tradelist Count,Name,Edition,Edition Code,Card Number,Condition,Language,Foil,Signed,Artist Proof,Altered Art,Misprint,Promo,Textless,Printing Id,Printing Note,Tags,My Price\n3,0,Siege Wurm,Core Set 2019,M19,202,Near Mint,English,,,,,,,,,,,$0.10\n1,0,\"Jace, the Mind Sculptor\",Worldwake,,31,Good (Lightly Played),English,foil,,,,,,,,,,\n";

#[test]
fn moxfield_csv_is_told_by_its_header_and_read_by_line() {
    let parsed = parse_csv(MOXFIELD).unwrap();
    assert_eq!(parsed.layout, CsvLayout::Moxfield);
    assert_eq!(parsed.rows.len(), 2);
    let elves = &parsed.rows[0];
    assert_eq!(elves.line, 2);
    assert_eq!(
        (elves.quantity, elves.trade_quantity, elves.foil),
        (4, 1, false)
    );
    assert_eq!(elves.identifier.set.as_deref(), Some("m19"));
    assert_eq!(elves.identifier.collector_number.as_deref(), Some("314"));
    assert_eq!(elves.condition.as_deref(), Some("Near Mint"));
    assert!(parsed.rows[1].foil);
    assert_eq!(
        parsed.rows[1].identifier.name.as_deref(),
        Some("Fire // Ice")
    );
    assert_eq!(parsed.unreadable.len(), 1);
    assert_eq!(parsed.unreadable[0].line, 4);
    assert_eq!(parsed.unreadable[0].reason, "invalid_count");
    assert!(
        parsed.unreadable[0].text.contains("Broken"),
        "{:?}",
        parsed.unreadable[0]
    );
}

#[test]
fn deckbox_csv_uses_the_edition_code_and_leaves_set_names_out() {
    let parsed = parse_csv(DECKBOX).unwrap();
    assert_eq!(parsed.layout, CsvLayout::Deckbox);
    let wurm = &parsed.rows[0];
    assert_eq!(wurm.identifier.set.as_deref(), Some("m19"));
    assert_eq!(wurm.identifier.collector_number.as_deref(), Some("202"));
    let jace = &parsed.rows[1];
    assert_eq!(
        jace.identifier.name.as_deref(),
        Some("Jace, the Mind Sculptor")
    );
    assert_eq!(jace.identifier.set, None, "a set's name is no code");
    assert_eq!(jace.identifier.collector_number, None);
    assert!(jace.foil);
    assert_eq!(jace.line, 3);
}

/// `body` fed to a [`CsvStream`] in chunks of `size` bytes.
fn streamed(body: &[u8], size: usize) -> Result<ParsedImport, crate::validation::Violations> {
    let mut stream = CsvStream::default();
    for chunk in body.chunks(size) {
        stream.feed(chunk)?;
    }
    stream.finish()
}

#[test]
fn a_body_read_in_chunks_of_any_size_reads_as_the_whole() {
    // A row that spans lines (a quoted line break), CRLF endings and a blank line, besides the
    // two layouts' own files: every chunk boundary falls inside a field, a quote, a CRLF.
    let crlf = MOXFIELD.replace('\n', "\r\n")
        + "\r\n\"1\",\"0\",\"Two\nLines\",\"m19\",\"\",\"\",\"\",\"\",\"\",\"7\",\"\",\"\",\"\"\r\n";
    for body in [MOXFIELD, DECKBOX, crlf.as_str()] {
        let whole = parse_csv(body).unwrap();
        for size in 1..=body.len() {
            assert_eq!(
                streamed(body.as_bytes(), size).unwrap(),
                whole,
                "chunks of {size}"
            );
        }
    }
    let crlf = parse_csv(&crlf).unwrap();
    let two_lines = crlf.rows.last().unwrap();
    assert_eq!(two_lines.line, 6, "the blank line 5 counts");
    assert_eq!(two_lines.identifier.name.as_deref(), Some("Two\nLines"));
    assert!(two_lines.text.starts_with("\"1\",\"0\",\"Two\nLines\""));
    assert_eq!(crlf.unreadable[0].line, 4);
}

#[test]
fn a_header_in_no_layout_is_refused_at_its_first_chunk() {
    let mut stream = CsvStream::default();
    let error = stream.feed(b"Qty,Card\n1,").unwrap_err();
    assert_eq!(error.0[0].code, "layout");
    let mut stream = CsvStream::default();
    stream.feed(b"Count,Name,Collector").unwrap();
}

#[test]
fn a_body_that_is_not_utf8_or_empty_is_refused() {
    let mut body = MOXFIELD.as_bytes().to_vec();
    body.extend_from_slice(
        b"\"1\",\"0\",\"Bad \xff\",\"m19\",\"\",\"\",\"\",\"\",\"\",\"7\",\"\",\"\",\"\"\n",
    );
    let error = streamed(&body, 7).unwrap_err();
    assert_eq!(
        (error.0[0].field.as_str(), error.0[0].code),
        ("body", "encoding")
    );
    let error = parse_csv("").unwrap_err();
    assert_eq!(error.0[0].code, "layout");
    let bom = format!("\u{feff}{MOXFIELD}");
    assert_eq!(parse_csv(&bom).unwrap(), parse_csv(MOXFIELD).unwrap());
}

#[test]
fn an_unknown_header_is_refused() {
    let error = parse_csv("Qty,Card\n1,Bolt\n").unwrap_err();
    assert_eq!(error.0[0].field, "body");
    assert_eq!(error.0[0].code, "layout");
}

#[test]
fn the_export_reads_back_to_the_same_entries() {
    let entries = vec![
        CollectionEntry {
            card: card(1, "Jace, the \"Mind\" Sculptor"),
            foil: true,
            quantity: 3,
            trade_quantity: 1,
            condition: Some("Near Mint".into()),
            language: Some("German".into()),
        },
        CollectionEntry {
            card: card(2, "Bolt"),
            foil: false,
            quantity: 1,
            trade_quantity: 0,
            condition: None,
            language: None,
        },
    ];
    let csv = export_csv(&entries).unwrap();
    assert!(csv.starts_with("\"Count\",\"Tradelist Count\",\"Name\",\"Edition\""));
    let parsed = parse_csv(&csv).unwrap();
    assert_eq!(parsed.layout, CsvLayout::Moxfield);
    assert!(parsed.unreadable.is_empty());
    type Row = (
        u32,
        u32,
        bool,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let read: Vec<Row> = parsed
        .rows
        .into_iter()
        .map(|row| {
            (
                row.quantity,
                row.trade_quantity,
                row.foil,
                row.identifier.name,
                row.condition,
                row.language,
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            (
                3,
                1,
                true,
                Some("Jace, the \"Mind\" Sculptor".into()),
                Some("Near Mint".into()),
                Some("German".into())
            ),
            (1, 0, false, Some("Bolt".into()), None, None),
        ]
    );
}

#[test]
fn filters_match_part_of_a_name_in_any_case_and_a_set() {
    let entry = CollectionEntry {
        card: card(1, "Llanowar Elves"),
        foil: false,
        quantity: 1,
        trade_quantity: 0,
        condition: None,
        language: None,
    };
    assert!(CollectionFilter::new(Some("ELVES"), None).admits(&entry));
    assert!(CollectionFilter::new(None, Some("ABC")).admits(&entry));
    assert!(!CollectionFilter::new(Some("wurm"), None).admits(&entry));
    assert!(!CollectionFilter::new(None, Some("m19")).admits(&entry));
    assert!(CollectionFilter::new(Some(" "), None).admits(&entry));
}
