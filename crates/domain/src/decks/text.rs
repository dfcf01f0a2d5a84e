//! The deck-list text format: rendering a deck for export, and (below) reading pasted lists.
//!
//! Text in, text out: no catalog and no I/O. Names are not resolved here; the caller maps stored
//! decks into a [`DeckList`] and resolves parsed entries against the catalog itself. Users read
//! about the format in `docs/deck-text-format.md`; keep the two in step.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::RangeInclusive;

/// The quantities one line may carry: the bounds of a card entry on a deck, so that every line
/// the parser accepts could also be stored.
pub const QUANTITY_RANGE: RangeInclusive<u32> = 1..=999;

/// Written after a line for a foil card, and recognised there when reading.
pub const FOIL_MARKER: &str = "*F*";

/// A section of a game's deck, e.g. mtg's `mainboard` labelled `Deck`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionSpec {
    pub key: String,
    pub label: String,
}

/// One card of a section, as the caller knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListLine {
    pub quantity: u32,
    pub name: String,
    pub printing: Option<PrintingRef>,
    pub foil: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintingRef {
    pub set: String,
    pub collector_number: String,
}

/// A deck ready to render: the exported sections in game order, each with its cards in any
/// order. Sections left out here (mtg's maybeboard) are not exported.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeckList {
    pub sections: Vec<(SectionSpec, Vec<ListLine>)>,
}

/// Renders `list` in the export format: one block per non-empty section, in the order given,
/// headed by the section's label; blocks separated by one blank line; LF endings and a final
/// newline. A deck with no cards renders as the empty string.
///
/// Each line is `<qty> <name>`, followed by ` (<SET>) <collector number>` when the printing is
/// known and by ` *F*` when foil. Lines with the same name, printing and foil are merged by
/// summing; a sum over 999 is written as several lines of at most 999 so that the parser reads
/// every line back. Lines are sorted by name (case-insensitively), set, then collector number
/// (its leading digits as a number). Lines with quantity 0 or a blank name are not cards and are
/// left out.
pub fn render(list: &DeckList) -> String {
    let mut out = String::new();
    for (section, lines) in &list.sections {
        let merged = merge(lines);
        if merged.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(section.label.trim());
        out.push('\n');
        for (key, total) in merged {
            write_lines(&mut out, &key, total);
        }
    }
    out
}

/// What makes two lines the same card, in the order lines are written.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LineKey {
    folded_name: String,
    name: String,
    printing: Option<(String, CollectorNumber)>,
    foil: bool,
}

/// Orders `9` before `10` and `123` before `123a`: by the length of the leading digits, then as
/// text (equal-length digit runs compare as numbers). Numbers without leading digits go last.
#[derive(Debug, PartialEq, Eq)]
struct CollectorNumber(String);

impl CollectorNumber {
    fn sort_key(&self) -> (bool, usize, &str) {
        let digits = self.0.bytes().take_while(u8::is_ascii_digit).count();
        (digits == 0, digits, &self.0)
    }
}

impl Ord for CollectorNumber {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl PartialOrd for CollectorNumber {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn merge(lines: &[ListLine]) -> BTreeMap<LineKey, u64> {
    let mut merged = BTreeMap::new();
    for line in lines {
        let name = normalize_name(&line.name);
        if line.quantity == 0 || name.is_empty() {
            continue;
        }
        let key = LineKey {
            folded_name: name.to_lowercase(),
            name,
            printing: line.printing.as_ref().and_then(writable_printing),
            foil: line.foil,
        };
        *merged.entry(key).or_insert(0) += u64::from(line.quantity);
    }
    merged
}

/// A printing the parser could not read back (a blank part, whitespace or parentheses inside)
/// is left out rather than written wrongly: the card is still exported by name. Catalog
/// printings never hit this.
fn writable_printing(printing: &PrintingRef) -> Option<(String, CollectorNumber)> {
    let set = printing.set.trim();
    let number = printing.collector_number.trim();
    (is_set_code(set) && is_collector_number(number))
        .then(|| (set.to_uppercase(), CollectorNumber(number.to_owned())))
}

fn write_lines(out: &mut String, key: &LineKey, total: u64) {
    let max = u64::from(*QUANTITY_RANGE.end());
    let mut left = total;
    while left > 0 {
        let quantity = left.min(max);
        left -= quantity;
        // Writing to a String cannot fail.
        let _ = write!(out, "{quantity} {}", key.name);
        if let Some((set, number)) = &key.printing {
            let _ = write!(out, " ({set}) {}", number.0);
        }
        if key.foil {
            out.push(' ');
            out.push_str(FOIL_MARKER);
        }
        out.push('\n');
    }
}

/// Names are compared and written with runs of whitespace as one space, so a stray tab or
/// newline in a name can neither split a line nor make two spellings of one card differ.
fn normalize_name(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_set_code(set: &str) -> bool {
    !set.is_empty() && !set.contains(|c: char| c.is_whitespace() || c == '(' || c == ')')
}

fn is_collector_number(number: &str) -> bool {
    !number.is_empty() && !number.contains(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mtg_sections() -> Vec<SectionSpec> {
        [
            ("commander", "Commander"),
            ("companion", "Companion"),
            ("mainboard", "Deck"),
            ("sideboard", "Sideboard"),
        ]
        .into_iter()
        .map(|(key, label)| SectionSpec {
            key: key.into(),
            label: label.into(),
        })
        .collect()
    }

    fn card(quantity: u32, name: &str) -> ListLine {
        ListLine {
            quantity,
            name: name.into(),
            printing: None,
            foil: false,
        }
    }

    fn printed(quantity: u32, name: &str, set: &str, number: &str) -> ListLine {
        ListLine {
            printing: Some(PrintingRef {
                set: set.into(),
                collector_number: number.into(),
            }),
            ..card(quantity, name)
        }
    }

    fn mtg_list(cards: Vec<Vec<ListLine>>) -> DeckList {
        DeckList {
            sections: mtg_sections().into_iter().zip(cards).collect(),
        }
    }

    #[test]
    fn renders_non_empty_sections_in_order_with_labels_and_a_final_newline() {
        let list = mtg_list(vec![
            vec![printed(1, "Atraxa, Praetors' Voice", "2xm", "190")],
            vec![],
            vec![
                card(4, "Lightning Bolt"),
                printed(20, "Mountain", "M19", "277"),
            ],
            vec![card(2, "Fire // Ice")],
        ]);
        assert_eq!(
            render(&list),
            "Commander\n1 Atraxa, Praetors' Voice (2XM) 190\n\n\
             Deck\n4 Lightning Bolt\n20 Mountain (M19) 277\n\n\
             Sideboard\n2 Fire // Ice\n"
        );
    }

    #[test]
    fn an_empty_deck_renders_as_nothing() {
        assert_eq!(render(&DeckList::default()), "");
        assert_eq!(render(&mtg_list(vec![vec![], vec![], vec![], vec![]])), "");
    }

    #[test]
    fn sorts_by_name_then_set_then_collector_number() {
        let list = mtg_list(vec![
            vec![],
            vec![],
            vec![
                printed(1, "Shock", "M19", "156"),
                printed(1, "Island", "M19", "10"),
                printed(1, "Island", "M19", "9"),
                printed(1, "Island", "DOM", "251"),
                printed(1, "Island", "M19", "9a"),
                card(1, "island"),
                printed(1, "Island", "M19", "S1"),
                card(1, "Forest"),
            ],
        ]);
        assert_eq!(
            render(&list),
            "Deck\n1 Forest\n1 Island (DOM) 251\n1 Island (M19) 9\n1 Island (M19) 9a\n\
             1 Island (M19) 10\n1 Island (M19) S1\n1 island\n1 Shock (M19) 156\n"
        );
    }

    #[test]
    fn merges_the_same_name_printing_and_foil_by_summing() {
        let foil = ListLine {
            foil: true,
            ..printed(1, "Opt", "dom", "60")
        };
        let list = mtg_list(vec![
            vec![],
            vec![],
            vec![
                printed(2, "Opt", "DOM", "60"),
                foil.clone(),
                printed(1, "Opt", "dom", "60"),
                foil,
                card(1, "Opt"),
            ],
        ]);
        assert_eq!(
            render(&list),
            "Deck\n1 Opt\n3 Opt (DOM) 60\n2 Opt (DOM) 60 *F*\n"
        );
    }

    #[test]
    fn writes_foil_after_the_printing_or_the_name() {
        let list = mtg_list(vec![
            vec![],
            vec![],
            vec![ListLine {
                foil: true,
                ..card(1, "Opt")
            }],
        ]);
        assert_eq!(render(&list), "Deck\n1 Opt *F*\n");
    }

    #[test]
    fn splits_a_merged_total_over_999_into_readable_lines() {
        let list = mtg_list(vec![
            vec![],
            vec![],
            vec![card(999, "Relentless Rats"), card(500, "Relentless Rats")],
        ]);
        assert_eq!(
            render(&list),
            "Deck\n999 Relentless Rats\n500 Relentless Rats\n"
        );
    }

    #[test]
    fn leaves_out_cards_without_quantity_or_name_and_sections_left_empty() {
        let list = mtg_list(vec![
            vec![card(0, "Sol Ring")],
            vec![card(1, "  \t ")],
            vec![card(1, "Sol Ring")],
        ]);
        assert_eq!(render(&list), "Deck\n1 Sol Ring\n");
    }

    #[test]
    fn collapses_whitespace_in_names_so_a_line_stays_one_line() {
        let list = mtg_list(vec![vec![], vec![], vec![card(1, " Sol\n  Ring\t")]]);
        assert_eq!(render(&list), "Deck\n1 Sol Ring\n");
    }

    #[test]
    fn drops_a_printing_it_could_not_read_back_but_keeps_the_card() {
        let list = mtg_list(vec![
            vec![],
            vec![],
            vec![
                printed(1, "Opt", "", "60"),
                printed(1, "Shock", "M 19", "156"),
                printed(1, "Bolt", "(M10)", "146"),
                printed(1, "Duress", "M19", " "),
            ],
        ]);
        assert_eq!(render(&list), "Deck\n1 Bolt\n1 Duress\n1 Opt\n1 Shock\n");
    }
}
