//! Catalog entries for the domain's unit tests.

use std::collections::BTreeMap;
use std::sync::Arc;

use time::macros::date;
use uuid::Uuid;

use super::{CatalogEntry, Preference, Printing};

/// A printing of card `card` (named `Card {card}`), variant `variant`, released 2019-01-01.
pub(crate) fn entry(variant: u128, card: u128, set: &str, number: &str) -> CatalogEntry {
    CatalogEntry {
        printing: Printing {
            variant_id: Uuid::from_u128(variant),
            card_id: Uuid::from_u128(card),
            name: format!("Card {card}"),
            set: set.into(),
            collector_number: number.into(),
            type_line: "Creature".into(),
            image_url: None,
            colors: Vec::new(),
            catalog_a_id: None,
            catalog_b_id: None,
            catalog_c_id: None,
        },
        face_names: Vec::new(),
        lang: "en".into(),
        released_at: Some(date!(2019 - 01 - 01)),
        preference: Preference::Default,
        legalities: Arc::new(BTreeMap::new()),
        color_identity: Vec::new(),
        text_rules: None,
    }
}
