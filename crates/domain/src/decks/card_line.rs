//! Card lines: the rules every card entry keeps, wherever it comes from (a deck create or PATCH,
//! an export payload, a pasted deck list). Each rule is here once; callers name the field.

use std::ops::RangeInclusive;

use crate::catalog::{CardIdentifier, Game};
use crate::validation::{FieldViolation, Violations};

/// At most this many card lines per deck write or export payload.
pub const MAX_CARD_LINES: usize = 500;

/// A line's quantity, and a merged line's total, stay within this. The text parser reads only
/// quantities in it, so every line it accepts could also be stored.
pub const QUANTITY_RANGE: RangeInclusive<u32> = 1..=999;

/// A card line as a client sends it, before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardLineInput {
    pub section: String,
    pub quantity: u32,
    pub foil: bool,
    pub identifier: CardIdentifier,
}

/// The bounds of a payload's card entries, reported under `field` (`cards`, `deck_payload.cards`):
/// at most [`MAX_CARD_LINES`], each in a section of `game` and of a quantity in
/// [`QUANTITY_RANGE`]. Export payloads and inline format checks share it.
pub(crate) fn check_entries(game: &Game, field: &str, cards: &[CardLineInput], v: &mut Violations) {
    if cards.len() > MAX_CARD_LINES {
        v.push(FieldViolation::new(
            field,
            "too_many",
            format!("at most {MAX_CARD_LINES} card entries"),
        ));
    }
    for (index, card) in cards.iter().enumerate() {
        let entry = format!("{field}[{index}]");
        v.check(check_section(
            game,
            format!("{entry}.section"),
            &card.section,
        ));
        v.check(check_quantity(format!("{entry}.quantity"), card.quantity));
    }
}

/// Refuses a quantity outside [`QUANTITY_RANGE`], reported as `field`.
pub(crate) fn check_quantity(field: String, quantity: u32) -> Result<(), FieldViolation> {
    if QUANTITY_RANGE.contains(&quantity) {
        return Ok(());
    }
    Err(FieldViolation::new(
        field,
        "range",
        format!(
            "must be {} to {}",
            QUANTITY_RANGE.start(),
            QUANTITY_RANGE.end()
        ),
    ))
}

/// Refuses a section key `game` does not have, reported as `field` with the keys it does.
pub(crate) fn check_section(
    game: &Game,
    field: String,
    section: &str,
) -> Result<(), FieldViolation> {
    if game.section(section).is_some() {
        return Ok(());
    }
    let known: Vec<&str> = game
        .sections
        .iter()
        .map(|section| section.key.as_str())
        .collect();
    Err(FieldViolation::new(
        field,
        "unknown",
        format!("must be one of {}", known.join(", ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Section;

    #[test]
    fn quantities_are_1_to_999() {
        assert!(check_quantity("q".into(), 1).is_ok());
        assert!(check_quantity("q".into(), 999).is_ok());
        for outside in [0, 1000, u32::MAX] {
            let violation = check_quantity("cards[3].quantity".into(), outside).unwrap_err();
            assert_eq!(
                violation,
                FieldViolation::new("cards[3].quantity", "range", "must be 1 to 999")
            );
        }
    }

    #[test]
    fn unknown_sections_name_the_known_ones() {
        let game = Game {
            slug: "mtg".into(),
            name: "Magic".into(),
            sections: ["mainboard", "sideboard"]
                .map(|key| Section {
                    key: key.into(),
                    label: key.into(),
                    counted: true,
                    featured_slot: None,
                })
                .into(),
            colors: Vec::new(),
        };
        assert!(check_section(&game, "s".into(), "sideboard").is_ok());
        assert_eq!(
            check_section(&game, "cards[0].section".into(), "Sideboard").unwrap_err(),
            FieldViolation::new(
                "cards[0].section",
                "unknown",
                "must be one of mainboard, sideboard"
            )
        );
    }
}
