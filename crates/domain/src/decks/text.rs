//! The deck-list text format: rendering a deck for export and reading pasted lists back.
//!
//! Text in, text out: no catalog and no I/O. Names are not resolved here; the caller maps stored
//! decks into a [`DeckList`] and resolves parsed entries against the catalog itself. Users read
//! about the format in `docs/deck-text-format.md`; keep the two in step.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use super::card_line::{CardLineInput, QUANTITY_RANGE};
use crate::catalog::CardIdentifier;

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

/// The sections plain lists and `SB:` lines go to, when the game has them: the first of
/// `mainboard` (mtg) and `deck` (fab).
const MAIN_SECTIONS: [&str; 2] = ["mainboard", "deck"];
const SIDEBOARD: &str = "sideboard";

/// Longest excerpt of a line quoted in a warning, so one huge line cannot make a huge header.
const QUOTE_LIMIT: usize = 60;

/// What [`parse`] read: the cards in text order, and one warning per line it skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedList {
    pub entries: Vec<ParsedEntry>,
    pub warnings: Vec<ParseWarning>,
}

/// One card line. `set` and `collector_number` are both present or both absent; `set` is in
/// upper case, as the export writes it. Nothing here is resolved against a catalog yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedEntry {
    /// 1-based, counting every line of the input.
    pub line: usize,
    /// The key of one of the sections given to [`parse`].
    pub section: String,
    pub quantity: u32,
    pub name: String,
    pub set: Option<String>,
    pub collector_number: Option<String>,
    pub foil: bool,
}

impl ParsedEntry {
    /// This line as a card entry: identified by its name, and by its set and collector number
    /// where the line gave them.
    pub(crate) fn into_card_line(self) -> CardLineInput {
        CardLineInput {
            section: self.section,
            quantity: self.quantity,
            foil: self.foil,
            identifier: CardIdentifier {
                name: Some(self.name),
                set: self.set,
                collector_number: self.collector_number,
                ..CardIdentifier::default()
            },
        }
    }
}

/// A skipped line. `message` does not repeat the line number; `Display` reads
/// `line 3: could not read "xyz"`, the form of the export warnings header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseWarning {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Reads a deck list pasted in any of the common forms (see `docs/deck-text-format.md`):
///
/// - section headers: a section's label or key, any case, optionally followed by `:`;
/// - without any header, the first block of cards is the mainboard and what follows a blank
///   line the sideboard;
/// - `SB:` before a line puts it in the sideboard wherever it stands;
/// - `4 Name`, `4x Name`, `4X Name`, or `Name` alone for one copy;
/// - ` (SET) 123` after the name for a printing, ` *F*` at the very end for foil;
/// - `//` at the start of a line for a comment. A `//` later in a line is part of the name,
///   as in `Fire // Ice`.
///
/// Windows line endings, a UTF-8 BOM, blank lines and surrounding whitespace are tolerated.
/// Lines that cannot be read become warnings and are skipped; this never fails or panics.
pub fn parse(text: &str, sections: &[SectionSpec]) -> ParsedList {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<Line<'_>> = text.lines().map(|line| classify(line, sections)).collect();
    // A blank line only means "sideboard follows" in lists that say nothing else about
    // sections; in a list with headers it is just layout.
    let has_headers = lines.iter().any(|line| matches!(line, Line::Header(_)));
    let main = MAIN_SECTIONS
        .iter()
        .find_map(|key| sections.iter().find(|section| section.key == *key))
        .or(sections.first())
        .map(|section| section.key.as_str());
    let side = sections
        .iter()
        .find(|section| section.key == SIDEBOARD)
        .map(|section| section.key.as_str());

    let mut parsed = ParsedList::default();
    let mut current = main;
    let mut seen_cards = false;
    for (index, line) in lines.into_iter().enumerate() {
        let number = index + 1;
        let mut warn = |message: String| {
            parsed.warnings.push(ParseWarning {
                line: number,
                message,
            })
        };
        match line {
            Line::Blank => {
                if !has_headers && seen_cards && side.is_some() {
                    current = side;
                }
            }
            Line::Comment => {}
            Line::Header(key) => current = Some(key),
            Line::UnknownHeader(raw) => warn(format!("unknown section header {}", quote(raw))),
            Line::Card {
                raw,
                sideboard,
                card,
            } => {
                seen_cards |= !sideboard;
                let section = if sideboard { side } else { current };
                match (card, section) {
                    (Err(problem), _) => warn(problem.message(raw)),
                    (Ok(_), None) if sideboard => {
                        warn(format!("this game has no sideboard for {}", quote(raw)))
                    }
                    (Ok(_), None) => warn(format!("this game has no sections for {}", quote(raw))),
                    (Ok(card), Some(section)) => parsed.entries.push(ParsedEntry {
                        line: number,
                        section: section.to_owned(),
                        quantity: card.quantity,
                        name: card.name,
                        set: card.printing.as_ref().map(|(set, _)| set.clone()),
                        collector_number: card.printing.map(|(_, number)| number),
                        foil: card.foil,
                    }),
                }
            }
        }
    }
    parsed
}

/// Groups parsed entries by section, in the order of `sections`, keeping name, printing and
/// foil, so that [`render`] can export a parsed list. Entries of sections not given (a
/// maybeboard left out of export) are dropped. Rendering the result of parsing a rendered deck
/// gives the same text back.
pub fn into_deck_list(parsed: &ParsedList, sections: &[SectionSpec]) -> DeckList {
    let sections = sections
        .iter()
        .map(|section| {
            let lines = parsed
                .entries
                .iter()
                .filter(|entry| entry.section == section.key)
                .map(|entry| ListLine {
                    quantity: entry.quantity,
                    name: entry.name.clone(),
                    printing: entry.set.as_ref().zip(entry.collector_number.as_ref()).map(
                        |(set, number)| PrintingRef {
                            set: set.clone(),
                            collector_number: number.clone(),
                        },
                    ),
                    foil: entry.foil,
                })
                .collect();
            (section.clone(), lines)
        })
        .collect();
    DeckList { sections }
}

/// One input line, read on its own: whether it is a card depends on no other line, and only
/// the section it lands in does.
enum Line<'a> {
    Blank,
    Comment,
    Header(&'a str),
    UnknownHeader(&'a str),
    Card {
        raw: &'a str,
        sideboard: bool,
        card: Result<Card, Problem>,
    },
}

struct Card {
    quantity: u32,
    name: String,
    printing: Option<(String, String)>,
    foil: bool,
}

enum Problem {
    Unreadable,
    Quantity(String),
}

impl Problem {
    fn message(&self, raw: &str) -> String {
        match self {
            Problem::Unreadable => format!("could not read {}", quote(raw)),
            Problem::Quantity(quantity) => format!(
                "quantity {quantity} is not between {} and {} in {}",
                QUANTITY_RANGE.start(),
                QUANTITY_RANGE.end(),
                quote(raw)
            ),
        }
    }
}

fn classify<'a>(raw: &'a str, sections: &'a [SectionSpec]) -> Line<'a> {
    let line = raw.trim();
    if line.is_empty() {
        return Line::Blank;
    }
    if line.starts_with("//") {
        return Line::Comment;
    }
    if let Some(key) = header(line, sections) {
        return Line::Header(key);
    }
    // `get` rather than slicing: the line may start with a multi-byte character.
    let (sideboard, rest) = match line.get(..3) {
        Some(prefix) if prefix.eq_ignore_ascii_case("sb:") => (true, line[3..].trim_start()),
        _ => (false, line),
    };
    let (quantity, rest) = split_quantity(rest);
    if quantity.is_none() && !sideboard && line.ends_with(':') {
        return Line::UnknownHeader(line);
    }
    Line::Card {
        raw: line,
        sideboard,
        card: read_card(quantity.unwrap_or(Ok(1)), rest),
    }
}

/// The key of the section `line` names by label or key, labels first since that is what the
/// export writes.
fn header<'a>(line: &str, sections: &'a [SectionSpec]) -> Option<&'a str> {
    let name = line
        .strip_suffix(':')
        .unwrap_or(line)
        .trim_end()
        .to_lowercase();
    let matches = |text: &str| !text.trim().is_empty() && text.trim().to_lowercase() == name;
    sections
        .iter()
        .find(|section| matches(&section.label))
        .or_else(|| sections.iter().find(|section| matches(&section.key)))
        .map(|section| section.key.as_str())
}

/// Splits a leading `4`, `4x` or `4X` off `line`. `None` when the line does not start with a
/// quantity; `Some(Err)` carries a quantity out of range as written.
fn split_quantity(line: &str) -> (Option<Result<u32, Problem>>, &str) {
    let (first, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let digits = first.strip_suffix(['x', 'X']).unwrap_or(first);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return (None, line);
    }
    let quantity = digits
        .parse::<u32>()
        .ok()
        .filter(|quantity| QUANTITY_RANGE.contains(quantity))
        .ok_or_else(|| Problem::Quantity(digits.to_owned()));
    (Some(quantity), rest.trim_start())
}

fn read_card(quantity: Result<u32, Problem>, rest: &str) -> Result<Card, Problem> {
    let (rest, foil) = split_foil(rest);
    let (name, printing) = split_printing(rest);
    let name = normalize_name(name);
    // An unreadable line is reported as such before its quantity: nothing useful was there.
    if name.is_empty() {
        return Err(Problem::Unreadable);
    }
    Ok(Card {
        quantity: quantity?,
        name,
        printing,
        foil,
    })
}

fn split_foil(text: &str) -> (&str, bool) {
    if text.eq_ignore_ascii_case(FOIL_MARKER) {
        return ("", true);
    }
    match text.rsplit_once(char::is_whitespace) {
        Some((head, last)) if last.eq_ignore_ascii_case(FOIL_MARKER) => (head.trim_end(), true),
        _ => (text, false),
    }
}

/// Splits a trailing ` (SET) 123` off a name. Only the complete form counts, so names that end
/// in parentheses of their own (`B.F.M. (Big Furry Monster)`) stay whole.
fn split_printing(text: &str) -> (&str, Option<(String, String)>) {
    let printing = text
        .rsplit_once(char::is_whitespace)
        .and_then(|(head, number)| {
            let (name, set) = head.trim_end().strip_suffix(')')?.rsplit_once('(')?;
            let readable =
                is_set_code(set) && is_collector_number(number) && !number.contains(['(', ')']);
            readable.then(|| (name, (set.to_uppercase(), number.to_owned())))
        });
    match printing {
        Some((name, printing)) => (name, Some(printing)),
        None => (text, None),
    }
}

/// The line as a quoted string for a warning, cut short when long. Export warnings quote
/// names the same way, so one long name cannot make a long header either.
pub(crate) fn quote(raw: &str) -> String {
    match raw.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{:?}", format!("{}…", &raw[..cut])),
        None => format!("{raw:?}"),
    }
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

    fn entry(line: usize, section: &str, quantity: u32, name: &str) -> ParsedEntry {
        ParsedEntry {
            line,
            section: section.into(),
            quantity,
            name: name.into(),
            set: None,
            collector_number: None,
            foil: false,
        }
    }

    fn with_printing(entry: ParsedEntry, set: &str, number: &str) -> ParsedEntry {
        ParsedEntry {
            set: Some(set.into()),
            collector_number: Some(number.into()),
            ..entry
        }
    }

    fn warning(line: usize, message: &str) -> ParseWarning {
        ParseWarning {
            line,
            message: message.into(),
        }
    }

    fn parse_mtg(text: &str) -> ParsedList {
        parse(text, &mtg_sections())
    }

    /// Parses text that must produce no warnings and returns its entries.
    fn entries(text: &str) -> Vec<ParsedEntry> {
        let parsed = parse_mtg(text);
        assert_eq!(parsed.warnings, [], "warnings for {text:?}");
        parsed.entries
    }

    #[test]
    fn reads_the_export_format_back() {
        assert_eq!(
            entries(
                "Commander\n1 Atraxa, Praetors' Voice (2XM) 190\n\n\
                 Deck\n4 Lightning Bolt\n20 Mountain (M19) 277 *F*\n\n\
                 Sideboard\n2 Fire // Ice\n"
            ),
            [
                with_printing(
                    entry(2, "commander", 1, "Atraxa, Praetors' Voice"),
                    "2XM",
                    "190"
                ),
                entry(5, "mainboard", 4, "Lightning Bolt"),
                ParsedEntry {
                    foil: true,
                    ..with_printing(entry(6, "mainboard", 20, "Mountain"), "M19", "277")
                },
                entry(9, "sideboard", 2, "Fire // Ice"),
            ]
        );
    }

    fn fab_sections() -> Vec<SectionSpec> {
        [
            ("hero", "Hero"),
            ("arena", "Arena"),
            ("deck", "Deck"),
            ("inventory", "Inventory"),
            ("maybeboard", "Maybeboard"),
        ]
        .into_iter()
        .map(|(key, label)| SectionSpec {
            key: key.into(),
            label: label.into(),
        })
        .collect()
    }

    /// `fab`: its headers, pitch suffixes kept in the name (they name the card), and a list
    /// without headers read into `deck`, not into the first section (`hero`).
    #[test]
    fn reads_fab_sections_and_pitch_suffixes() {
        let parsed = parse(
            "Hero\n1 Dorinthea Ironsong (WTR) 113\n\nArena\n1 Dawnblade\n\n\
             Deck\n3x Sink Below (red)\n3 Sink Below (Blue) (WTR) 217\n",
            &fab_sections(),
        );
        assert_eq!(parsed.warnings, []);
        assert_eq!(
            parsed.entries,
            [
                with_printing(entry(2, "hero", 1, "Dorinthea Ironsong"), "WTR", "113"),
                entry(5, "arena", 1, "Dawnblade"),
                entry(8, "deck", 3, "Sink Below (red)"),
                with_printing(entry(9, "deck", 3, "Sink Below (Blue)"), "WTR", "217"),
            ]
        );
        let plain = parse("3 Sink Below (yellow)\n", &fab_sections());
        assert_eq!(plain.entries, [entry(1, "deck", 3, "Sink Below (yellow)")]);
        let list = DeckList {
            sections: fab_sections()
                .into_iter()
                .zip([
                    vec![printed(1, "Dorinthea Ironsong", "wtr", "113")],
                    vec![],
                    vec![card(3, "Sink Below (red)")],
                    vec![],
                    vec![],
                ])
                .collect(),
        };
        assert_eq!(
            render(&list),
            "Hero\n1 Dorinthea Ironsong (WTR) 113\n\nDeck\n3 Sink Below (red)\n"
        );
    }

    #[test]
    fn headers_are_labels_or_keys_in_any_case_with_an_optional_colon() {
        let text = "DECK:\n1 A\nsideboard\n1 B\nMainboard :\n1 C\nCompanion:\n1 D\ncommander\n1 E";
        let sections: Vec<_> = entries(text).into_iter().map(|e| e.section).collect();
        assert_eq!(
            sections,
            [
                "mainboard",
                "sideboard",
                "mainboard",
                "companion",
                "commander"
            ]
        );
    }

    #[test]
    fn cards_before_the_first_header_are_mainboard() {
        let found = entries("4 Opt\n\nSideboard\n2 Duress\n");
        assert_eq!(
            found,
            [
                entry(1, "mainboard", 4, "Opt"),
                entry(4, "sideboard", 2, "Duress")
            ]
        );
    }

    #[test]
    fn without_headers_the_block_after_a_blank_line_is_the_sideboard() {
        assert_eq!(
            entries("\n// my deck\n\n4 Opt\n2 Shock\n\n\n3 Duress\n\n1 Negate\n"),
            [
                entry(4, "mainboard", 4, "Opt"),
                entry(5, "mainboard", 2, "Shock"),
                entry(8, "sideboard", 3, "Duress"),
                entry(10, "sideboard", 1, "Negate"),
            ]
        );
    }

    #[test]
    fn with_headers_a_blank_line_changes_nothing() {
        assert_eq!(
            entries("Deck\n4 Opt\n\n2 Shock\n"),
            [
                entry(2, "mainboard", 4, "Opt"),
                entry(4, "mainboard", 2, "Shock")
            ]
        );
    }

    #[test]
    fn without_a_sideboard_section_every_block_stays_in_the_main_one() {
        let sections = [SectionSpec {
            key: "main".into(),
            label: "Main Deck".into(),
        }];
        let parsed = parse("4 Opt\n\n2 Shock\n", &sections);
        assert_eq!(
            parsed.entries,
            [entry(1, "main", 4, "Opt"), entry(3, "main", 2, "Shock")]
        );
    }

    #[test]
    fn sb_prefix_puts_a_line_in_the_sideboard_wherever_it_stands() {
        assert_eq!(
            entries("Deck\n4 Opt\nSB: 2 Duress\nsb:1x Negate\n3 Shock"),
            [
                entry(2, "mainboard", 4, "Opt"),
                entry(3, "sideboard", 2, "Duress"),
                entry(4, "sideboard", 1, "Negate"),
                entry(5, "mainboard", 3, "Shock"),
            ]
        );
    }

    #[test]
    fn quantities_may_carry_an_x_and_a_missing_one_means_one_copy() {
        assert_eq!(
            entries("4x Opt\n3X Shock\n2\tDuress\nSol Ring\nSB: Negate"),
            [
                entry(1, "mainboard", 4, "Opt"),
                entry(2, "mainboard", 3, "Shock"),
                entry(3, "mainboard", 2, "Duress"),
                entry(4, "mainboard", 1, "Sol Ring"),
                entry(5, "sideboard", 1, "Negate"),
            ]
        );
    }

    #[test]
    fn only_the_first_number_is_the_quantity() {
        assert_eq!(
            entries("1 1996 World Champion\n1 Borrowing 100,000 Arrows"),
            [
                entry(1, "mainboard", 1, "1996 World Champion"),
                entry(2, "mainboard", 1, "Borrowing 100,000 Arrows"),
            ]
        );
    }

    #[test]
    fn comments_start_a_line_and_split_card_names_keep_their_slashes() {
        assert_eq!(
            entries("// Burn\n  // indented comment\n2 Fire // Ice\n1 Wear // Tear (STX) 12"),
            [
                entry(3, "mainboard", 2, "Fire // Ice"),
                with_printing(entry(4, "mainboard", 1, "Wear // Tear"), "STX", "12"),
            ]
        );
    }

    #[test]
    fn reads_printings_with_letters_and_stars_and_upper_cases_the_set() {
        assert_eq!(
            entries("1 Opt (dom) 60a\n1 Shock (M19) 5★\n1 Duress (plst) DOM-123"),
            [
                with_printing(entry(1, "mainboard", 1, "Opt"), "DOM", "60a"),
                with_printing(entry(2, "mainboard", 1, "Shock"), "M19", "5★"),
                with_printing(entry(3, "mainboard", 1, "Duress"), "PLST", "DOM-123"),
            ]
        );
    }

    #[test]
    fn names_ending_in_their_own_parentheses_stay_whole() {
        assert_eq!(
            entries(
                "1 B.F.M. (Big Furry Monster)\n1 Erase (Not the Urza's Legacy One)\n1 Opt (DOM)"
            ),
            [
                entry(1, "mainboard", 1, "B.F.M. (Big Furry Monster)"),
                entry(2, "mainboard", 1, "Erase (Not the Urza's Legacy One)"),
                entry(3, "mainboard", 1, "Opt (DOM)"),
            ]
        );
    }

    #[test]
    fn foil_markers_end_the_line_in_any_case() {
        let found = entries("1 Opt (DOM) 60 *F*\n1 Shock *f*\n1 Duress");
        let foils: Vec<_> = found.iter().map(|e| (e.name.as_str(), e.foil)).collect();
        assert_eq!(foils, [("Opt", true), ("Shock", true), ("Duress", false)]);
        assert_eq!(found[0].collector_number.as_deref(), Some("60"));
    }

    #[test]
    fn tolerates_a_bom_crlf_surrounding_whitespace_and_inner_runs_of_spaces() {
        assert_eq!(
            entries(
                "\u{feff}Deck\r\n  4   Lightning\tBolt  \r\n\r\n\tSideboard:  \r\n2 Duress\r\n"
            ),
            [
                entry(2, "mainboard", 4, "Lightning Bolt"),
                entry(5, "sideboard", 2, "Duress"),
            ]
        );
    }

    #[test]
    fn empty_input_reads_as_nothing() {
        assert_eq!(parse_mtg(""), ParsedList::default());
        assert_eq!(
            parse_mtg("\u{feff}\n\r\n  \n// only a comment"),
            ParsedList::default()
        );
    }

    #[test]
    fn warns_about_quantities_out_of_range_and_skips_the_line() {
        let parsed = parse_mtg("0 Opt\n1000 Shock\n99999999999999999999x Duress\n999 Negate");
        assert_eq!(parsed.entries, [entry(4, "mainboard", 999, "Negate")]);
        assert_eq!(
            parsed.warnings,
            [
                warning(1, r#"quantity 0 is not between 1 and 999 in "0 Opt""#),
                warning(
                    2,
                    r#"quantity 1000 is not between 1 and 999 in "1000 Shock""#
                ),
                warning(
                    3,
                    r#"quantity 99999999999999999999 is not between 1 and 999 in "99999999999999999999x Duress""#
                ),
            ]
        );
    }

    #[test]
    fn warns_about_lines_without_a_name() {
        let parsed = parse_mtg("4\n3x\nSB:\nSB: 2\n1 *F*\n0");
        assert_eq!(parsed.entries, []);
        assert_eq!(
            parsed.warnings,
            [
                warning(1, r#"could not read "4""#),
                warning(2, r#"could not read "3x""#),
                warning(3, r#"could not read "SB:""#),
                warning(4, r#"could not read "SB: 2""#),
                warning(5, r#"could not read "1 *F*""#),
                warning(6, r#"could not read "0""#),
            ]
        );
    }

    #[test]
    fn warns_about_unknown_headers_and_keeps_the_current_section() {
        let parsed = parse_mtg("Sideboard\n1 Opt\nCreatures:\n1 Shock");
        assert_eq!(
            parsed.entries,
            [
                entry(2, "sideboard", 1, "Opt"),
                entry(4, "sideboard", 1, "Shock")
            ]
        );
        assert_eq!(
            parsed.warnings,
            [warning(3, r#"unknown section header "Creatures:""#)]
        );
    }

    #[test]
    fn warns_when_the_game_has_no_section_for_a_card() {
        let main_only = [SectionSpec {
            key: "main".into(),
            label: "Main Deck".into(),
        }];
        let parsed = parse("SB: 2 Duress\n1 Opt", &main_only);
        assert_eq!(parsed.entries, [entry(2, "main", 1, "Opt")]);
        assert_eq!(
            parsed.warnings,
            [warning(
                1,
                r#"this game has no sideboard for "SB: 2 Duress""#
            )]
        );

        let parsed = parse("1 Opt", &[]);
        assert_eq!(parsed.entries, []);
        assert_eq!(
            parsed.warnings,
            [warning(1, r#"this game has no sections for "1 Opt""#)]
        );
    }

    #[test]
    fn warnings_display_with_their_line_and_quote_long_lines_cut_short() {
        let long = format!("0 {}\"", "é".repeat(100));
        let parsed = parse_mtg(&format!("\n{long}"));
        let [warning] = parsed.warnings.as_slice() else {
            panic!("expected one warning, got {:?}", parsed.warnings);
        };
        let shown = warning.to_string();
        assert!(
            shown.starts_with(r#"line 2: quantity 0 is not between 1 and 999 in "0 éé"#),
            "{shown}"
        );
        assert!(shown.ends_with("é…\""), "{shown}");
        assert_eq!(shown.matches('é').count(), 58);
    }

    #[test]
    fn quotes_escape_quotes_and_control_characters() {
        let parsed = parse_mtg("Tokens \"x\"\u{7}:");
        assert_eq!(
            parsed.warnings,
            [warning(1, r#"unknown section header "Tokens \"x\"\u{7}:""#)]
        );
    }

    #[test]
    fn into_deck_list_groups_by_section_in_section_order_and_drops_others() {
        let mut sections = mtg_sections();
        sections.push(SectionSpec {
            key: "maybeboard".into(),
            label: "Maybeboard".into(),
        });
        let parsed = parse(
            "Sideboard\n2 Duress\nMaybeboard\n1 Opt\nDeck\n4 Shock (m19) 156 *F*\n1 Negate",
            &sections,
        );
        let list = into_deck_list(&parsed, &mtg_sections());
        let keys: Vec<_> = list.sections.iter().map(|(s, _)| s.key.as_str()).collect();
        assert_eq!(keys, ["commander", "companion", "mainboard", "sideboard"]);
        assert_eq!(
            list.sections[2].1,
            [
                ListLine {
                    foil: true,
                    ..printed(4, "Shock", "M19", "156")
                },
                card(1, "Negate"),
            ]
        );
        assert_eq!(list.sections[3].1, [card(2, "Duress")]);
        assert_eq!(
            render(&list),
            "Deck\n1 Negate\n4 Shock (M19) 156 *F*\n\nSideboard\n2 Duress\n"
        );
    }
}
