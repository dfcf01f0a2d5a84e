//! Catalog files, record by record: what an import keeps, skips and prefers. Reading the file
//! (gzip, JSON array or JSON Lines, streaming) is the application's job; these are the rules.
//!
//! Decisions (see docs/catalog.md):
//! - Scryfall objects whose layout is not a deck card (tokens, emblems, art cards, planes,
//!   schemes, vanguards) are skipped.
//! - Non-English printings are imported (found by variant id, catalog ids, set and number) but
//!   never chosen as a card's default printing while an English one exists. Names are the
//!   card's English (oracle) name on every printing, so a name finds the card, never a
//!   printing in another language.
//! - Multi-face cards keep their face names; the front face name finds the card.
//! - Promos (see `scryfall_is_promo`) are never a card's default printing while a regular
//!   English one exists.
//! - Colours come from the card, or else from the union of its faces, in the game's order.
//! - `fab` (`@flesh-and-blood/cards`): each `cardIdentifier` is a card, named with its pitch
//!   colour (`Sink Below (red)`) and found by its printed name too; each of its printings is a
//!   printing, set and number read from its identifier (`WTR216`); foiled or treated printings
//!   are never a card's default while a plain one exists; card backs are skipped.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use uuid::Uuid;

use super::deck_rules::{CardTextRules, HeroCard, text_rules};
use super::{CatalogEntry, Game, Preference, Printing};

/// Scryfall layouts that are not cards one puts in a deck.
pub const SKIPPED_SCRYFALL_LAYOUTS: [&str; 7] = [
    "token",
    "double_faced_token",
    "emblem",
    "art_series",
    "planar",
    "scheme",
    "vanguard",
];

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{0} is missing")]
    Missing(&'static str),
    #[error("released_at {0:?} is not a date (YYYY-MM-DD)")]
    BadDate(String),
    #[error("colour {0:?} is not a colour of this game")]
    UnknownColor(String),
    #[error("{0} is empty")]
    Empty(&'static str),
    /// PostgreSQL stores no NUL in text, and no reader means one.
    #[error("{0} holds a NUL character")]
    HoldsNul(&'static str),
    #[error("printing identifier {0:?} is not a set code and a number (WTR216)")]
    BadPrint(String),
}

/// `value` of a field a card is found by: neither blank nor holding a NUL.
fn required_text(field: &'static str, value: String) -> Result<String, RecordError> {
    if value.trim().is_empty() {
        return Err(RecordError::Empty(field));
    }
    free_text(field, value)
}

/// `value` of any other text field: anything but a NUL.
fn free_text(field: &'static str, value: String) -> Result<String, RecordError> {
    if value.contains('\0') {
        return Err(RecordError::HoldsNul(field));
    }
    Ok(value)
}

fn optional_text(
    field: &'static str,
    value: Option<String>,
) -> Result<Option<String>, RecordError> {
    value.map(|value| free_text(field, value)).transpose()
}

/// Face names, each required, when the card has more than one face.
fn face_names(names: Vec<String>) -> Result<Vec<String>, RecordError> {
    if names.len() > 1 {
        names
            .into_iter()
            .map(|name| required_text("a face name", name))
            .collect()
    } else {
        Ok(Vec::new())
    }
}

fn legalities(
    legalities: BTreeMap<String, String>,
) -> Result<Arc<BTreeMap<String, String>>, RecordError> {
    legalities
        .into_iter()
        .map(|(format, status)| {
            Ok((
                free_text("a legality's format", format)?,
                free_text("a legality's status", status)?,
            ))
        })
        .collect::<Result<_, _>>()
        .map(Arc::new)
}

/// The fields of a Scryfall card object that the catalog uses; the others are ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct ScryfallCard {
    pub id: Uuid,
    #[serde(default)]
    pub oracle_id: Option<Uuid>,
    pub name: String,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub released_at: Option<String>,
    #[serde(default)]
    pub layout: Option<String>,
    #[serde(default)]
    pub image_uris: Option<ScryfallImages>,
    #[serde(default)]
    pub type_line: Option<String>,
    #[serde(default)]
    pub colors: Option<Vec<String>>,
    #[serde(default)]
    pub color_identity: Option<Vec<String>>,
    /// Absent from some bulk files (the bundled 2019 one); then the deck-building clauses come
    /// from the seeded rows instead (docs/catalog.md).
    #[serde(default)]
    pub oracle_text: Option<String>,
    #[serde(default)]
    pub card_faces: Vec<ScryfallFace>,
    #[serde(default)]
    pub legalities: BTreeMap<String, String>,
    pub set: String,
    #[serde(default)]
    pub set_type: Option<String>,
    pub collector_number: String,
    #[serde(default)]
    pub tcgplayer_id: Option<u64>,
    #[serde(default)]
    pub mtgo_id: Option<u64>,
    #[serde(default)]
    pub arena_id: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ScryfallFace {
    pub name: String,
    #[serde(default)]
    pub type_line: Option<String>,
    #[serde(default)]
    pub colors: Option<Vec<String>>,
    #[serde(default)]
    pub image_uris: Option<ScryfallImages>,
    #[serde(default)]
    pub oracle_text: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ScryfallImages {
    #[serde(default)]
    pub normal: Option<String>,
}

/// A Scryfall card as a catalog entry of `game`; `None` when it is skipped.
pub fn scryfall_entry(
    game: &Game,
    card: ScryfallCard,
) -> Result<Option<CatalogEntry>, RecordError> {
    if card
        .layout
        .as_deref()
        .is_some_and(|layout| SKIPPED_SCRYFALL_LAYOUTS.contains(&layout))
    {
        return Ok(None);
    }
    let card_id = card.oracle_id.ok_or(RecordError::Missing("oracle_id"))?;
    let faces = &card.card_faces;
    let face_names = face_names(faces.iter().map(|face| face.name.clone()).collect())?;
    let type_line = card.type_line.clone().unwrap_or_else(|| {
        faces
            .iter()
            .filter_map(|face| face.type_line.as_deref())
            .collect::<Vec<_>>()
            .join(" // ")
    });
    let image_url = card
        .image_uris
        .as_ref()
        .and_then(|images| images.normal.clone())
        .or_else(|| {
            faces
                .iter()
                .find_map(|face| face.image_uris.as_ref().and_then(|i| i.normal.clone()))
        });
    let colors: Vec<&str> = match &card.colors {
        Some(colors) => colors.iter().map(String::as_str).collect(),
        None => faces
            .iter()
            .flat_map(|face| face.colors.iter().flatten())
            .map(String::as_str)
            .collect(),
    };
    let promo = scryfall_is_promo(&card);
    // The identity of a card is at least its colours when a file leaves it out.
    let color_identity = match &card.color_identity {
        Some(identity) => game.order_colors(identity.iter().map(String::as_str)),
        None => game.order_colors(colors.iter().copied()),
    };
    let text_rules = scryfall_text_rules(&card);
    let lang = free_text("lang", card.lang.unwrap_or_else(|| "en".to_owned()))?;
    Ok(Some(CatalogEntry {
        printing: Printing {
            variant_id: card.id,
            card_id,
            name: required_text("name", card.name)?,
            set: required_text("set", card.set.to_lowercase())?,
            collector_number: required_text("collector_number", card.collector_number)?,
            type_line: free_text("type_line", type_line)?,
            image_url: optional_text("image_uris", image_url)?,
            colors: game.order_colors(colors),
            catalog_a_id: card.tcgplayer_id.map(|id| id.to_string()),
            catalog_b_id: card.mtgo_id.map(|id| id.to_string()),
            catalog_c_id: card.arena_id.map(|id| id.to_string()),
        },
        face_names,
        preference: preference(&lang, promo),
        lang,
        released_at: parse_date(card.released_at.as_deref())?,
        legalities: legalities(card.legalities)?,
        color_identity,
        text_rules,
    }))
}

/// The deck-building clauses of a card's oracle text (all faces), when the file has any text.
fn scryfall_text_rules(card: &ScryfallCard) -> Option<CardTextRules> {
    let texts: Vec<&str> = card
        .oracle_text
        .iter()
        .chain(
            card.card_faces
                .iter()
                .filter_map(|face| face.oracle_text.as_ref()),
        )
        .map(String::as_str)
        .collect();
    (!texts.is_empty()).then(|| text_rules(&texts.join("\n")))
}

/// One record of the generic JSON Lines format (docs/catalog.md), for games without a
/// Scryfall: unknown fields are refused so that typos surface.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenericCard {
    pub card_id: Uuid,
    pub variant_id: Uuid,
    pub name: String,
    #[serde(default)]
    pub faces: Vec<String>,
    pub set: String,
    pub collector_number: String,
    #[serde(default)]
    pub type_line: String,
    #[serde(default)]
    pub image_url: Option<String>,
    #[serde(default)]
    pub colors: Vec<String>,
    /// Defaults to `colors`.
    #[serde(default)]
    pub color_identity: Option<Vec<String>>,
    /// Rules text, read for deck-building clauses as Scryfall's `oracle_text` is.
    #[serde(default)]
    pub oracle_text: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub released_at: Option<String>,
    #[serde(default)]
    pub promo: bool,
    #[serde(default)]
    pub legalities: BTreeMap<String, String>,
    #[serde(default)]
    pub catalog_a_id: Option<String>,
    #[serde(default)]
    pub catalog_b_id: Option<String>,
    #[serde(default)]
    pub catalog_c_id: Option<String>,
}

/// A generic record as a catalog entry of `game`. Its colours must be the game's.
pub fn generic_entry(game: &Game, card: GenericCard) -> Result<CatalogEntry, RecordError> {
    if let Some(unknown) = card
        .colors
        .iter()
        .find(|color| !game.colors.contains(color))
    {
        return Err(RecordError::UnknownColor(unknown.clone()));
    }
    if let Some(unknown) = card
        .color_identity
        .iter()
        .flatten()
        .find(|color| !game.colors.contains(color))
    {
        return Err(RecordError::UnknownColor(unknown.clone()));
    }
    let color_identity = game.order_colors(
        card.color_identity
            .as_ref()
            .unwrap_or(&card.colors)
            .iter()
            .map(String::as_str),
    );
    let text_rules = card.oracle_text.as_deref().map(text_rules);
    let lang = free_text("lang", card.lang.unwrap_or_else(|| "en".to_owned()))?;
    Ok(CatalogEntry {
        printing: Printing {
            variant_id: card.variant_id,
            card_id: card.card_id,
            name: required_text("name", card.name)?,
            set: required_text("set", card.set.to_lowercase())?,
            collector_number: required_text("collector_number", card.collector_number)?,
            type_line: free_text("type_line", card.type_line)?,
            image_url: optional_text("image_url", card.image_url)?,
            colors: game.order_colors(card.colors.iter().map(String::as_str)),
            catalog_a_id: optional_text("catalog_a_id", card.catalog_a_id)?,
            catalog_b_id: optional_text("catalog_b_id", card.catalog_b_id)?,
            catalog_c_id: optional_text("catalog_c_id", card.catalog_c_id)?,
        },
        face_names: face_names(card.faces)?,
        preference: preference(&lang, card.promo),
        lang,
        released_at: parse_date(card.released_at.as_deref())?,
        legalities: legalities(card.legalities)?,
        color_identity,
        text_rules,
    })
}

/// The namespace of `fab` card and printing ids (a random v4 UUID chosen once; never change
/// it): cards are UUID v5 of `fab/<cardIdentifier>`, printings of
/// `fab/<cardIdentifier>/<print>/<image>`, so every install and every re-import agree.
pub const FAB_NAMESPACE: Uuid = Uuid::from_u128(0x2fbf099c_8a1c_4d01_a2a6_b4516a982302);

/// The formats of `fab` as the `@flesh-and-blood/cards` package names them, and their slugs.
/// Formats the game has no row for (draft, sealed, Golden Age) are left out of legalities.
pub const FAB_FORMATS: [(&str, &str); 6] = [
    ("Classic Constructed", "cc"),
    ("Blitz", "blitz"),
    ("Living Legend", "living-legend"),
    ("Silver Age", "silver-age"),
    ("Ultimate Pit Fight", "ultimate-pit-fight"),
    ("Open", "open"),
];

/// The fields of an `@flesh-and-blood/cards` card that the catalog uses; the others are
/// ignored (docs/catalog.md, "fab").
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FabCard {
    pub card_identifier: String,
    pub name: String,
    /// 1 red, 2 yellow, 3 blue; absent for cards without a pitch (heroes, weapons, ...).
    #[serde(default)]
    pub pitch: Option<u8>,
    #[serde(default)]
    pub type_text: Option<String>,
    /// `Hero` marks a hero card.
    #[serde(default)]
    pub types: Vec<String>,
    /// On a hero: the hero it is, as other cards' `legalHeroes` name it (`Dorinthea`).
    #[serde(default)]
    pub hero: Option<String>,
    /// On a hero: a young hero (Blitz); absent on adult ones.
    #[serde(default)]
    pub young: bool,
    /// The heroes whose decks may hold the card; empty: any.
    #[serde(default)]
    pub legal_heroes: Vec<String>,
    #[serde(default)]
    pub is_card_back: bool,
    #[serde(default)]
    pub legal_formats: Vec<String>,
    #[serde(default)]
    pub banned_formats: Vec<String>,
    #[serde(default)]
    pub restricted_formats: Vec<String>,
    #[serde(default)]
    pub printings: Vec<FabPrinting>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FabPrinting {
    /// `WTR216`: the set's three-character code, then the number within the set.
    pub identifier: String,
    /// `WTR216-Rainbow`: unique within a card with `image`.
    pub print: String,
    #[serde(default)]
    pub image: Option<String>,
    #[serde(default)]
    pub foiling: Option<String>,
    #[serde(default)]
    pub treatment: Option<String>,
    #[serde(default)]
    pub tcgplayer: Option<FabTcgplayer>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FabTcgplayer {
    #[serde(default)]
    pub product_id: Option<String>,
}

/// The name a `fab` card goes by: its printed name, with its pitch colour in parentheses when
/// it has one (`Sink Below (red)`), so that the three `Sink Below` are three cards with three
/// names, each found by its own name and counted on its own for copy limits.
pub fn pitched_name(name: &str, pitch_color: Option<&str>) -> String {
    match pitch_color {
        Some(color) => format!("{} ({color})", name.trim()),
        None => name.trim().to_owned(),
    }
}

/// The colour of `pitch` in `game`: its colours are the pitches in order (1 is the first).
pub fn pitch_color(game: &Game, pitch: u8) -> Option<&str> {
    usize::from(pitch)
        .checked_sub(1)
        .and_then(|at| game.colors.get(at))
        .map(String::as_str)
}

/// A printing identifier such as `WTR216` or `1HP001` as (set in lower case, number).
pub fn split_print(print: &str) -> Option<(String, String)> {
    let print = print.trim();
    let set = print.get(..3)?;
    let number = print.get(3..)?;
    let valid = set.chars().all(|c| c.is_ascii_alphanumeric())
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit());
    valid.then(|| (set.to_lowercase(), number.to_owned()))
}

/// Each printing of an `@flesh-and-blood/cards` card as a catalog entry of `game`; none for a
/// card back or a card without printings (skipped).
pub fn fab_entries(game: &Game, card: FabCard) -> Result<Vec<CatalogEntry>, RecordError> {
    if card.is_card_back {
        return Ok(Vec::new());
    }
    let identifier = required_text("cardIdentifier", card.card_identifier)?;
    let pitch = match card.pitch {
        Some(pitch) => Some(
            pitch_color(game, pitch)
                .ok_or_else(|| RecordError::UnknownColor(format!("pitch {pitch}")))?
                .to_owned(),
        ),
        None => None,
    };
    let printed = required_text("name", card.name)?;
    let name = pitched_name(&printed, pitch.as_deref());
    let card_id = Uuid::new_v5(&FAB_NAMESPACE, format!("fab/{identifier}").as_bytes());
    let colors: Vec<String> = pitch.into_iter().collect();
    let type_line = free_text("typeText", card.type_text.unwrap_or_default())?;
    let legalities = fab_legalities(
        &card.legal_formats,
        &card.banned_formats,
        &card.restricted_formats,
    );
    let text_rules = fab_text_rules(
        &printed,
        &card.types,
        card.hero,
        card.young,
        card.legal_heroes,
    )?;
    card.printings
        .into_iter()
        .map(|printing| {
            let (set, number) = split_print(&printing.identifier)
                .ok_or_else(|| RecordError::BadPrint(printing.identifier.clone()))?;
            let image = printing.image.unwrap_or_default();
            let variant_id = Uuid::new_v5(
                &FAB_NAMESPACE,
                format!("fab/{identifier}/{}/{image}", printing.print).as_bytes(),
            );
            let plain = printing.foiling.is_none() && printing.treatment.is_none();
            Ok(CatalogEntry {
                printing: Printing {
                    variant_id,
                    card_id,
                    name: name.clone(),
                    set,
                    collector_number: number,
                    type_line: type_line.clone(),
                    image_url: None,
                    colors: colors.clone(),
                    catalog_a_id: optional_text(
                        "tcgplayer.productId",
                        printing
                            .tcgplayer
                            .and_then(|tcgplayer| tcgplayer.product_id),
                    )?,
                    catalog_b_id: Some(identifier.clone()),
                    catalog_c_id: None,
                },
                // The printed name finds the card too: ambiguous when it has several pitches.
                face_names: vec![printed.clone()],
                lang: "en".to_owned(),
                released_at: None,
                preference: preference("en", !plain),
                legalities: legalities.clone(),
                color_identity: colors.clone(),
                text_rules: Some(text_rules.clone()),
            })
        })
        .collect()
}

/// What a `fab` card brings to a check beyond its legalities: whether it is a hero (`types`
/// holds `Hero`; the hero it is, `hero`, or else its printed name; `young`), and the heroes
/// whose decks may hold it (`legalHeroes`).
fn fab_text_rules(
    printed: &str,
    types: &[String],
    hero: Option<String>,
    young: bool,
    legal_heroes: Vec<String>,
) -> Result<CardTextRules, RecordError> {
    let hero = if types.iter().any(|kind| kind == "Hero") {
        let name = match hero {
            Some(name) => required_text("hero", name)?,
            None => printed.to_owned(),
        };
        Some(HeroCard { name, young })
    } else {
        None
    };
    Ok(CardTextRules {
        hero,
        legal_heroes: legal_heroes
            .into_iter()
            .map(|name| required_text("a legal hero", name))
            .collect::<Result<_, _>>()?,
        ..CardTextRules::default()
    })
}

/// Legal where the package says so, banned and restricted where it says so (over legal), and
/// `not_legal` in every other format of `fab`.
fn fab_legalities(
    legal: &[String],
    banned: &[String],
    restricted: &[String],
) -> Arc<BTreeMap<String, String>> {
    let names = |list: &[String], wanted: &str| list.iter().any(|name| name == wanted);
    Arc::new(
        FAB_FORMATS
            .iter()
            .map(|(name, slug)| {
                let status = if names(banned, name) {
                    "banned"
                } else if names(restricted, name) {
                    "restricted"
                } else if names(legal, name) {
                    "legal"
                } else {
                    "not_legal"
                };
                ((*slug).to_owned(), status.to_owned())
            })
            .collect(),
    )
}

/// Scryfall's `set_type` says `promo` when present; bulk files often drop it, so promo sets'
/// codes (`p` + a set code, as `pgrn`) and the `★` of premium collector numbers count too.
fn scryfall_is_promo(card: &ScryfallCard) -> bool {
    card.set_type.as_deref() == Some("promo")
        || (card.set.len() == 4 && card.set.starts_with('p'))
        || card.collector_number.contains('★')
}

fn preference(lang: &str, promo: bool) -> Preference {
    match (lang == "en", promo) {
        (true, false) => Preference::Default,
        (true, true) => Preference::Promo,
        (false, _) => Preference::OtherLanguage,
    }
}

fn parse_date(text: Option<&str>) -> Result<Option<time::Date>, RecordError> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    text.map(|text| {
        time::Date::parse(text, format).map_err(|_| RecordError::BadDate(text.to_owned()))
    })
    .transpose()
}

/// The day a Scryfall bulk file was made, as its name says (`default-cards-20240515091234.json`,
/// gzipped or not): the eight digits after the last `-`. `None` for any other name.
pub fn scryfall_file_day(file_name: &str) -> Option<time::Date> {
    let stamp = file_name.rsplit('-').next()?;
    let digits: String = stamp.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 8 {
        return None;
    }
    let format = time::macros::format_description!("[year][month][day]");
    time::Date::parse(&digits[..8], format).ok()
}

#[cfg(test)]
mod file_day_tests {
    use time::macros::date;

    use super::scryfall_file_day;

    #[test]
    fn a_bulk_file_name_says_its_day() {
        assert_eq!(
            scryfall_file_day("default-cards-20240515091234.json"),
            Some(date!(2024 - 05 - 15))
        );
        assert_eq!(
            scryfall_file_day("all-cards-20190401000000.json.gz"),
            Some(date!(2019 - 04 - 01))
        );
        assert_eq!(scryfall_file_day("default-cards-2019.jsonl.gz"), None);
        assert_eq!(scryfall_file_day("cards.json"), None);
        assert_eq!(scryfall_file_day("default-cards-20241399000000.json"), None);
    }
}
