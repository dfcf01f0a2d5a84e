//! What changed between two versions of a deck: per section, the cards added, removed and
//! changed in quantity, and the top-level fields that changed with their old and new values.
//! Either version may be the older one; the diff reads "from `from` to `to`". Two decks compare
//! with the same function, each at its current version ([`Side`]).

use std::collections::BTreeMap;

use uuid::Uuid;

use super::model::{CardSnapshot, Deck, DeckContent, DeckVersion, FeaturedChoice, Visibility};
use super::text::{DeckList, ListLine, SectionSpec, render};
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

/// One side of a diff: a version number and the content at that version. A history record is
/// one, and so is a deck at its current version.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub version: i32,
    pub content: &'a DeckContent,
}

impl<'a> From<&'a DeckVersion> for Side<'a> {
    fn from(version: &'a DeckVersion) -> Self {
        Self {
            version: version.version_number,
            content: &version.content,
        }
    }
}

impl<'a> From<&'a Deck> for Side<'a> {
    fn from(deck: &'a Deck) -> Self {
        Self {
            version: deck.version,
            content: &deck.content,
        }
    }
}

/// The changes that turn `from` into `to`: two versions of one deck, or two decks.
pub fn between<'a>(game: &Game, from: impl Into<Side<'a>>, to: impl Into<Side<'a>>) -> VersionDiff {
    let (from, to) = (from.into(), to.into());
    VersionDiff {
        from: from.version,
        to: to.version,
        fields: field_changes(from.content, to.content),
        sections: game
            .sections
            .iter()
            .filter_map(|section| section_diff(&section.key, from.content, to.content))
            .collect(),
    }
}

/// The card changes of `diff` as deck-list text: per section in game order, a block of the
/// lines to add and one of the lines to remove (a quantity change is the difference), each in
/// the export's line format. A block is a `// Add` or `// Remove` comment, the section's label
/// as a header and its lines, so each block alone is a deck list that `text::parse` reads back;
/// blocks are separated by one blank line. No card changes: the one comment line
/// [`NO_CARD_CHANGES`], so the answer says so instead of being empty (and still reads back as
/// a deck list without cards).
pub fn as_text(game: &Game, diff: &VersionDiff) -> String {
    let mut blocks = Vec::new();
    for section in &diff.sections {
        let Some(spec) = game.section(&section.section).map(|spec| SectionSpec {
            key: spec.key.clone(),
            label: spec.label.clone(),
        }) else {
            continue;
        };
        let changes = section
            .added
            .iter()
            .chain(&section.removed)
            .chain(&section.changed);
        let (mut add, mut remove) = (Vec::new(), Vec::new());
        for change in changes {
            if change.new_quantity > change.old_quantity {
                add.push(list_line(change, change.new_quantity - change.old_quantity));
            } else if change.old_quantity > change.new_quantity {
                remove.push(list_line(change, change.old_quantity - change.new_quantity));
            }
        }
        for (marker, lines) in [(ADD_MARKER, add), (REMOVE_MARKER, remove)] {
            let block = render(&DeckList {
                sections: vec![(spec.clone(), lines)],
            });
            if !block.is_empty() {
                blocks.push(format!("{marker}\n{block}"));
            }
        }
    }
    if blocks.is_empty() {
        return format!("{NO_CARD_CHANGES}\n");
    }
    blocks.join("\n")
}

/// The whole of [`as_text`] when the decks have the same cards.
pub const NO_CARD_CHANGES: &str = "// No card changes";

/// The comment that opens a block of lines to add in [`as_text`].
pub const ADD_MARKER: &str = "// Add";
/// The comment that opens a block of lines to remove in [`as_text`].
pub const REMOVE_MARKER: &str = "// Remove";

fn list_line(change: &CardChange, quantity: u32) -> ListLine {
    change.card.printed_line(quantity, change.foil)
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
            featured_slot: None,
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

    #[test]
    fn the_text_adds_and_removes_per_section_and_each_block_parses_back() {
        use crate::decks::export::readable_sections;
        use crate::decks::text::{self, into_deck_list};

        let game = test_decks::mtg();
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
            2,
            "Burn",
            vec![
                line("mainboard", &bolt, 3, false),
                line("mainboard", &opt, 4, true),
                line("sideboard", &shock, 1, false),
            ],
        );
        let diff = between(&game, &from, &to);
        let text = as_text(&game, &diff);
        assert_eq!(
            text,
            "// Add\nDeck\n4 Opt (SET) 3 *F*\n\n\
             // Remove\nDeck\n1 Bolt (SET) 1\n2 Shock (SET) 2\n\n\
             // Add\nSideboard\n1 Shock (SET) 2\n\n\
             // Remove\nSideboard\n1 Opt (SET) 3\n"
        );
        // Each block alone is a deck list: the parser reads its lines into its section with the
        // changed quantities, and renders them back to the same block.
        let sections = readable_sections(&game);
        let blocks: Vec<&str> = text.split("\n\n").collect();
        assert_eq!(blocks.len(), 4);
        let mut read_back = Vec::new();
        for block in blocks {
            let block = format!("{}\n", block.trim_end());
            let (marker, body) = block.split_once('\n').unwrap();
            let parsed = text::parse(&block, &sections);
            assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
            assert_eq!(text::render(&into_deck_list(&parsed, &sections)), body);
            for entry in parsed.entries {
                read_back.push((
                    marker.to_owned(),
                    entry.section,
                    entry.name,
                    entry.quantity,
                    entry.foil,
                ));
            }
        }
        let expected = [
            ("// Add", "mainboard", "Opt", 4, true),
            ("// Remove", "mainboard", "Bolt", 1, false),
            ("// Remove", "mainboard", "Shock", 2, false),
            ("// Add", "sideboard", "Shock", 1, false),
            ("// Remove", "sideboard", "Opt", 1, false),
        ]
        .map(|(marker, section, name, quantity, foil)| {
            (
                marker.to_owned(),
                section.to_owned(),
                name.to_owned(),
                quantity,
                foil,
            )
        });
        assert_eq!(read_back, expected);
    }

    #[test]
    fn two_decks_compare_at_their_current_versions() {
        let game = test_decks::mtg();
        let owner = crate::identity::UserId(Uuid::from_u128(9));
        let at = time::OffsetDateTime::UNIX_EPOCH;
        let bolt = card("Bolt", 1);
        let mut a = test_decks::deck(
            crate::decks::DeckId(Uuid::from_u128(1)),
            owner,
            "alice",
            test_decks::content(
                "Burn",
                Visibility::Public,
                vec![line("mainboard", &bolt, 4, false)],
            ),
            at,
        );
        a.version = 3;
        let b = test_decks::deck(
            crate::decks::DeckId(Uuid::from_u128(2)),
            owner,
            "alice",
            test_decks::content("Burn", Visibility::Public, vec![]),
            at,
        );
        let diff = between(&game, &a, &b);
        assert_eq!((diff.from, diff.to), (3, 1));
        assert_eq!(diff.sections[0].removed[0].old_quantity, 4);
        let unchanged = as_text(&game, &between(&game, &a, &a));
        assert_eq!(unchanged, "// No card changes\n");
        let parsed =
            crate::decks::text::parse(&unchanged, &crate::decks::export::readable_sections(&game));
        assert!(parsed.entries.is_empty() && parsed.warnings.is_empty());
    }
}
