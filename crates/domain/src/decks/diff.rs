//! What changed between two versions of a deck: per section, the cards added, removed and
//! changed in quantity, and the top-level fields that changed with their old and new values.
//! Either version may be the older one; the diff reads "from `from` to `to`".

use std::collections::BTreeMap;

use uuid::Uuid;

use super::model::{CardSnapshot, DeckContent, DeckVersion, FeaturedChoice, Visibility};
use crate::catalog::Game;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionDiff {
    pub from: i32,
    pub to: i32,
    /// Fields in a fixed order: name, notes, visibility, format, youtube_url, thumbnail, legal,
    /// archetype, featured.
    pub fields: Vec<FieldChange>,
    /// Sections with changes, in the game's order.
    pub sections: Vec<SectionDiff>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub field: &'static str,
    pub old: FieldValue,
    pub new: FieldValue,
}

/// A top-level field's value, as the diff shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    Text(Option<String>),
    Flag(bool),
    Visibility(Visibility),
    Format(Option<Uuid>),
    /// `None` while the featured cards are derived from the deck.
    Featured(Option<Vec<FeaturedChoice>>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionDiff {
    pub section: String,
    pub added: Vec<CardChange>,
    pub removed: Vec<CardChange>,
    pub changed: Vec<CardChange>,
}

/// A deck line (a printing, foil or not) whose quantity differs; 0 where it is absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardChange {
    pub card: CardSnapshot,
    pub foil: bool,
    pub old_quantity: u32,
    pub new_quantity: u32,
}

/// The changes that turn version `from` into version `to`.
pub fn between(game: &Game, from: &DeckVersion, to: &DeckVersion) -> VersionDiff {
    VersionDiff {
        from: from.version_number,
        to: to.version_number,
        fields: field_changes(&from.content, &to.content),
        sections: game
            .sections
            .iter()
            .filter_map(|section| section_diff(&section.key, &from.content, &to.content))
            .collect(),
    }
}

fn field_changes(old: &DeckContent, new: &DeckContent) -> Vec<FieldChange> {
    let text = |value: &str| FieldValue::Text(Some(value.to_owned()));
    let optional = |value: &Option<String>| FieldValue::Text(value.clone());
    [
        ("name", text(&old.name), text(&new.name)),
        ("notes", text(&old.notes), text(&new.notes)),
        (
            "visibility",
            FieldValue::Visibility(old.visibility),
            FieldValue::Visibility(new.visibility),
        ),
        (
            "format",
            FieldValue::Format(old.format_id),
            FieldValue::Format(new.format_id),
        ),
        (
            "youtube_url",
            optional(&old.youtube_url),
            optional(&new.youtube_url),
        ),
        (
            "thumbnail",
            optional(&old.thumbnail),
            optional(&new.thumbnail),
        ),
        (
            "legal",
            FieldValue::Flag(old.legal),
            FieldValue::Flag(new.legal),
        ),
        (
            "archetype",
            optional(&old.archetype),
            optional(&new.archetype),
        ),
        (
            "featured",
            FieldValue::Featured(old.featured.clone()),
            FieldValue::Featured(new.featured.clone()),
        ),
    ]
    .into_iter()
    .filter(|(_, old, new)| old != new)
    .map(|(field, old, new)| FieldChange { field, old, new })
    .collect()
}

/// One line of a section: its printing and foil, with the quantity.
type Lines<'a> = BTreeMap<(Uuid, bool), (&'a CardSnapshot, u32)>;

fn lines<'a>(content: &'a DeckContent, section: &str) -> Lines<'a> {
    let mut lines = Lines::new();
    for line in content.cards.iter().filter(|line| line.section == section) {
        lines
            .entry((line.card.variant_id, line.foil))
            .or_insert((&line.card, 0))
            .1 += line.quantity;
    }
    lines
}

fn section_diff(section: &str, old: &DeckContent, new: &DeckContent) -> Option<SectionDiff> {
    let (old, new) = (lines(old, section), lines(new, section));
    let mut diff = SectionDiff {
        section: section.to_owned(),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
    };
    let keys: std::collections::BTreeSet<&(Uuid, bool)> = old.keys().chain(new.keys()).collect();
    for key in keys {
        let (before, after) = (old.get(key), new.get(key));
        let old_quantity = before.map_or(0, |(_, quantity)| *quantity);
        let new_quantity = after.map_or(0, |(_, quantity)| *quantity);
        let Some((card, _)) = after.or(before) else {
            continue;
        };
        let change = CardChange {
            card: (*card).clone(),
            foil: key.1,
            old_quantity,
            new_quantity,
        };
        match (old_quantity, new_quantity) {
            (0, _) => diff.added.push(change),
            (_, 0) => diff.removed.push(change),
            (old, new) if old != new => diff.changed.push(change),
            _ => {}
        }
    }
    let by_card = |a: &CardChange, b: &CardChange| {
        (&a.card.name, &a.card.set, &a.card.collector_number, a.foil).cmp(&(
            &b.card.name,
            &b.card.set,
            &b.card.collector_number,
            b.foil,
        ))
    };
    for cards in [&mut diff.added, &mut diff.removed, &mut diff.changed] {
        cards.sort_by(by_card);
    }
    let unchanged = diff.added.is_empty() && diff.removed.is_empty() && diff.changed.is_empty();
    (!unchanged).then_some(diff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Section;
    use crate::decks::model::{DeckCard, DeckSummary, HistoryType};
    use crate::decks::test_decks;

    fn game() -> Game {
        let section = |key: &str| Section {
            key: key.into(),
            label: key.into(),
            counted: true,
        };
        Game {
            slug: "mtg".into(),
            name: "Magic".into(),
            sections: vec![
                section("commander"),
                section("mainboard"),
                section("sideboard"),
            ],
            colors: vec![],
        }
    }

    fn card(name: &str, n: u128) -> CardSnapshot {
        CardSnapshot {
            variant_id: Uuid::from_u128(n),
            card_id: Uuid::from_u128(n + 1000),
            name: name.into(),
            set: "set".into(),
            collector_number: n.to_string(),
            type_line: "Instant".into(),
            image_url: None,
            colors: vec![],
        }
    }

    fn line(section: &str, card: &CardSnapshot, quantity: u32, foil: bool) -> DeckCard {
        DeckCard {
            section: section.into(),
            quantity,
            foil,
            card: card.clone(),
        }
    }

    fn version(number: i32, name: &str, cards: Vec<DeckCard>) -> DeckVersion {
        DeckVersion {
            version_number: number,
            history_type: HistoryType::Update,
            content: test_decks::content(name, Visibility::Private, cards),
            summary: DeckSummary::default(),
            edited_at: time::OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn cards_are_added_removed_and_changed_per_section_in_game_order() {
        let (bolt, shock, opt) = (card("Bolt", 1), card("Shock", 2), card("Opt", 3));
        let from = version(
            1,
            "Burn",
            vec![
                line("mainboard", &bolt, 4, false),
                line("mainboard", &shock, 2, false),
                line("sideboard", &opt, 1, false),
            ],
        );
        let to = version(
            3,
            "Burn",
            vec![
                line("sideboard", &shock, 1, false),
                line("mainboard", &bolt, 3, false),
                line("mainboard", &opt, 4, true),
            ],
        );
        let diff = between(&game(), &from, &to);
        assert_eq!((diff.from, diff.to), (1, 3));
        assert!(diff.fields.is_empty());
        let sections: Vec<&str> = diff.sections.iter().map(|s| s.section.as_str()).collect();
        assert_eq!(sections, ["mainboard", "sideboard"]);
        let main = &diff.sections[0];
        assert_eq!(main.added.len(), 1);
        assert_eq!(
            (main.added[0].card.name.as_str(), main.added[0].foil),
            ("Opt", true)
        );
        assert_eq!(
            (main.added[0].old_quantity, main.added[0].new_quantity),
            (0, 4)
        );
        assert_eq!(main.removed[0].card.name, "Shock");
        assert_eq!(
            (main.removed[0].old_quantity, main.removed[0].new_quantity),
            (2, 0)
        );
        assert_eq!(main.changed[0].card.name, "Bolt");
        assert_eq!(
            (main.changed[0].old_quantity, main.changed[0].new_quantity),
            (4, 3)
        );
        let side = &diff.sections[1];
        assert_eq!(side.added[0].card.name, "Shock");
        assert_eq!(side.removed[0].card.name, "Opt");
    }

    #[test]
    fn a_reversed_diff_swaps_added_and_removed_and_old_and_new() {
        let bolt = card("Bolt", 1);
        let one = version(1, "Old", vec![]);
        let two = version(2, "New", vec![line("mainboard", &bolt, 4, false)]);
        let back = between(&game(), &two, &one);
        assert_eq!(back.sections[0].removed[0].old_quantity, 4);
        assert_eq!(
            back.fields,
            [FieldChange {
                field: "name",
                old: FieldValue::Text(Some("New".into())),
                new: FieldValue::Text(Some("Old".into())),
            }]
        );
    }

    #[test]
    fn a_version_against_itself_is_empty() {
        let bolt = card("Bolt", 1);
        let one = version(1, "Burn", vec![line("mainboard", &bolt, 4, false)]);
        let diff = between(&game(), &one, &one);
        assert!(diff.fields.is_empty() && diff.sections.is_empty());
    }
}
