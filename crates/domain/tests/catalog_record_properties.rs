//! Catalog import records over arbitrary input: any JSON object deserializes into a record or
//! fails with serde's error, and any record becomes an entry or a `RecordError`, never a panic.
//! What is accepted can be stored and found: names, sets and collector numbers are non-empty
//! text PostgreSQL takes (no NUL).

use deckhand_domain::catalog::Game;
use deckhand_domain::catalog::source::{GenericCard, ScryfallCard, generic_entry, scryfall_entry};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn mtg() -> Game {
    Game {
        slug: "mtg".into(),
        name: "Magic".into(),
        sections: Vec::new(),
        colors: ["W", "U", "B", "R", "G"].map(String::from).to_vec(),
    }
}

/// Text as files carry it: mostly printable, sometimes empty, blank or holding a NUL.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "\\PC{1,12}",
        1 => Just(String::new()),
        1 => Just("  ".to_owned()),
        1 => "[a-z]{0,3}\u{0}[a-z]{0,3}",
        1 => "[0-9]{4}-[0-9]{2}-[0-9]{2}",
        1 => prop_oneof![Just("W"), Just("U"), Just("x"), Just("token")].prop_map(str::to_owned),
    ]
}

/// Any JSON value, biased to the shapes the fields take.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => text().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<f64>().prop_map(|n| json!(n)),
        2 => Just(json!("0f7c1f4d-5f38-4bd3-9c1e-0d6b0e4f8b7a")),
        1 => Just(json!("b2c6aa39-2d2a-459c-a555-fb48ba993373")),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

const SCRYFALL_FIELDS: [&str; 17] = [
    "id",
    "oracle_id",
    "name",
    "lang",
    "released_at",
    "layout",
    "image_uris",
    "type_line",
    "colors",
    "card_faces",
    "legalities",
    "set",
    "set_type",
    "collector_number",
    "tcgplayer_id",
    "mtgo_id",
    "arena_id",
];

const GENERIC_FIELDS: [&str; 17] = [
    "card_id",
    "variant_id",
    "name",
    "faces",
    "set",
    "collector_number",
    "type_line",
    "image_url",
    "colors",
    "lang",
    "released_at",
    "promo",
    "legalities",
    "catalog_a_id",
    "catalog_b_id",
    "catalog_c_id",
    "unknown",
];

/// An object with some of `fields`, each with an arbitrary value.
fn record(fields: &'static [&'static str]) -> impl Strategy<Value = Value> {
    proptest::collection::vec((0..fields.len(), value()), 0..fields.len() + 3).prop_map(
        move |pairs| {
            let mut object = Map::new();
            for (field, value) in pairs {
                object.insert(fields[field].to_owned(), value);
            }
            Value::Object(object)
        },
    )
}

/// A well-typed record with arbitrary text in every text field.
fn generic_card() -> impl Strategy<Value = Value> {
    (
        text(),
        text(),
        text(),
        text(),
        proptest::option::of(text()),
        proptest::collection::vec(text(), 0..3),
    )
        .prop_map(|(name, set, number, type_line, released_at, colors)| {
            json!({
                "card_id": "0f7c1f4d-5f38-4bd3-9c1e-0d6b0e4f8b7a",
                "variant_id": "b2c6aa39-2d2a-459c-a555-fb48ba993373",
                "name": name, "set": set, "collector_number": number, "type_line": type_line,
                "released_at": released_at, "colors": colors,
            })
        })
}

fn scryfall_card() -> impl Strategy<Value = Value> {
    (text(), text(), text(), proptest::option::of(text()), proptest::collection::vec(text(), 0..3))
        .prop_map(|(name, set, number, layout, faces)| {
            json!({
                "id": "b2c6aa39-2d2a-459c-a555-fb48ba993373",
                "oracle_id": "0f7c1f4d-5f38-4bd3-9c1e-0d6b0e4f8b7a",
                "name": name, "set": set, "collector_number": number, "layout": layout,
                "card_faces": faces.into_iter().map(|name| json!({"name": name})).collect::<Vec<_>>(),
            })
        })
}

/// Text PostgreSQL stores and a reader can find.
fn storable(field: &str, value: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        !value.trim().is_empty(),
        "{field} accepted empty: {value:?}"
    );
    prop_assert!(
        !value.contains('\0'),
        "{field} accepted with a NUL: {value:?}"
    );
    Ok(())
}

fn storable_entry(entry: &deckhand_domain::catalog::CatalogEntry) -> Result<(), TestCaseError> {
    storable("name", &entry.printing.name)?;
    storable("set", &entry.printing.set)?;
    storable("collector_number", &entry.printing.collector_number)?;
    for face in &entry.face_names {
        storable("face name", face)?;
    }
    for text in [&entry.printing.type_line, &entry.lang]
        .into_iter()
        .chain(entry.printing.image_url.as_ref())
        .chain(
            entry
                .legalities
                .iter()
                .flat_map(|(format, status)| [format, status]),
        )
    {
        prop_assert!(!text.contains('\0'), "accepted a NUL: {text:?}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn any_generic_record_is_an_entry_or_an_error(record in prop_oneof![record(&GENERIC_FIELDS), generic_card()]) {
        if let Ok(card) = serde_json::from_value::<GenericCard>(record)
            && let Ok(entry) = generic_entry(&mtg(), card)
        {
            storable_entry(&entry)?;
        }
    }

    #[test]
    fn any_scryfall_record_is_an_entry_a_skip_or_an_error(record in prop_oneof![record(&SCRYFALL_FIELDS), scryfall_card()]) {
        if let Ok(card) = serde_json::from_value::<ScryfallCard>(record)
            && let Ok(Some(entry)) = scryfall_entry(&mtg(), card)
        {
            storable_entry(&entry)?;
        }
    }
}
