//! The CSV layouts of other deck sites' collection exports, read and written with the `csv`
//! crate. Which layout a file is in is told by its header line.

use crate::catalog::CardIdentifier;
use crate::validation::{FieldViolation, Violations};

use super::model::CollectionEntry;

/// A collection export layout this service reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvLayout {
    /// Moxfield's: `Collector Number`, `Edition` a set code.
    Moxfield,
    /// Deckbox's: `Card Number`, `Edition` a set name and `Edition Code` its code.
    Deckbox,
}

/// The header of Moxfield's collection export, as the export writes it.
pub const MOXFIELD_HEADER: [&str; 13] = [
    "Count",
    "Tradelist Count",
    "Name",
    "Edition",
    "Condition",
    "Language",
    "Foil",
    "Tags",
    "Last Modified",
    "Collector Number",
    "Alter",
    "Proxy",
    "Purchase Price",
];

/// The columns a row is read from, found in the header by name (any case).
struct Columns {
    count: usize,
    trade: Option<usize>,
    name: usize,
    edition: Option<usize>,
    edition_code: Option<usize>,
    number: Option<usize>,
    foil: Option<usize>,
    condition: Option<usize>,
    language: Option<usize>,
}

/// One readable row: a count of copies of the card its fields identify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRow {
    /// 1-based, the header being line 1.
    pub line: usize,
    pub text: String,
    pub quantity: u32,
    pub trade_quantity: u32,
    pub foil: bool,
    pub identifier: CardIdentifier,
    pub condition: Option<String>,
    pub language: Option<String>,
}

/// A row that could not be read at all (no name, a count that is no number, a broken record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableRow {
    pub line: usize,
    pub text: String,
    pub reason: &'static str,
}

/// A CSV body as read: its layout, its rows, and the rows it could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedImport {
    pub layout: CsvLayout,
    pub rows: Vec<ImportRow>,
    pub unreadable: Vec<UnreadableRow>,
}

fn layout_error(message: impl Into<String>) -> Violations {
    Violations(vec![FieldViolation::new("body", "layout", message)])
}

impl Columns {
    fn of(header: &csv::StringRecord) -> Result<(CsvLayout, Self), Violations> {
        let find = |name: &str| {
            header
                .iter()
                .position(|column| column.trim().eq_ignore_ascii_case(name))
        };
        let layout = if find("Collector Number").is_some() {
            CsvLayout::Moxfield
        } else if find("Card Number").is_some() || find("Edition Code").is_some() {
            CsvLayout::Deckbox
        } else {
            return Err(layout_error(
                "the header is neither Moxfield's (with \"Collector Number\") nor Deckbox's (with \"Card Number\") collection export",
            ));
        };
        let (Some(count), Some(name)) = (find("Count"), find("Name")) else {
            return Err(layout_error(
                "the header needs \"Count\" and \"Name\" columns",
            ));
        };
        Ok((
            layout,
            Self {
                count,
                trade: find("Tradelist Count"),
                name,
                edition: find("Edition"),
                edition_code: find("Edition Code"),
                number: find("Collector Number").or_else(|| find("Card Number")),
                foil: find("Foil"),
                condition: find("Condition"),
                language: find("Language"),
            },
        ))
    }
}

/// A set code as the catalog keeps it: one word, lower case. A set's full name (`Core Set
/// 2019`, as Deckbox writes `Edition`) is not one, and is then left out of the identifier.
fn set_code(value: &str) -> Option<String> {
    let value = value.trim();
    let is_code =
        !value.is_empty() && value.len() <= 8 && value.chars().all(|c| c.is_ascii_alphanumeric());
    is_code.then(|| value.to_ascii_lowercase())
}

fn is_foil(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "foil" | "etched" | "true" | "yes" | "1"
    )
}

/// Reads a CSV collection export (see [`CsvLayout`]); `Err` when the header is in no known
/// layout. Rows that cannot be read are listed, never fatal.
pub fn parse_csv(body: &str) -> Result<ParsedImport, Violations> {
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(body.as_bytes());
    let header = reader
        .headers()
        .map_err(|_| layout_error("the header line could not be read as CSV"))?
        .clone();
    let (layout, columns) = Columns::of(&header)?;
    let mut parsed = ParsedImport {
        layout,
        rows: Vec::new(),
        unreadable: Vec::new(),
    };
    let mut records = reader.into_records().peekable();
    while let Some(record) = records.next() {
        let end = records
            .peek()
            .and_then(|next| match next {
                Ok(next) => next.position().map(|at| at.byte()),
                Err(error) => error.position().map(|at| at.byte()),
            })
            .map_or(body.len(), |byte| {
                usize::try_from(byte).unwrap_or(body.len())
            });
        match record {
            Ok(record) => {
                let Some(position) = record.position() else {
                    continue;
                };
                let line = usize::try_from(position.line()).unwrap_or(usize::MAX);
                let start = usize::try_from(position.byte()).unwrap_or(0);
                let text = body
                    .get(start..end.max(start))
                    .unwrap_or_default()
                    .trim_end()
                    .to_owned();
                if record.iter().all(|field| field.trim().is_empty()) {
                    continue;
                }
                match read_row(&columns, &record, line, text) {
                    Ok(row) => parsed.rows.push(row),
                    Err(unreadable) => parsed.unreadable.push(unreadable),
                }
            }
            Err(error) => {
                let line = error
                    .position()
                    .map_or(0, |at| usize::try_from(at.line()).unwrap_or(usize::MAX));
                parsed.unreadable.push(UnreadableRow {
                    line,
                    text: String::new(),
                    reason: "malformed",
                });
            }
        }
    }
    Ok(parsed)
}

fn read_row(
    columns: &Columns,
    record: &csv::StringRecord,
    line: usize,
    text: String,
) -> Result<ImportRow, UnreadableRow> {
    let field = |at: Option<usize>| {
        at.and_then(|at| record.get(at))
            .map(str::trim)
            .filter(|value| !value.is_empty())
    };
    let unreadable = |reason| UnreadableRow {
        line,
        text: text.clone(),
        reason,
    };
    let Some(name) = field(Some(columns.name)) else {
        return Err(unreadable("empty"));
    };
    let count = |at: Option<usize>| -> Result<u32, UnreadableRow> {
        match field(at) {
            None => Ok(0),
            Some(value) => value
                .parse::<u32>()
                .ok()
                .filter(|count| *count <= 1_000_000)
                .ok_or_else(|| unreadable("invalid_count")),
        }
    };
    let quantity = count(Some(columns.count))?;
    let trade_quantity = count(columns.trade)?.min(quantity);
    let set = field(columns.edition_code)
        .and_then(set_code)
        .or_else(|| field(columns.edition).and_then(set_code));
    let collector_number = set.as_ref().and(field(columns.number)).map(str::to_owned);
    Ok(ImportRow {
        line,
        quantity,
        trade_quantity,
        foil: field(columns.foil).is_some_and(is_foil),
        identifier: CardIdentifier {
            name: Some(name.to_owned()),
            set,
            collector_number,
            ..CardIdentifier::default()
        },
        condition: field(columns.condition).map(str::to_owned),
        language: field(columns.language).map(str::to_owned),
        text,
    })
}

/// The collection in Moxfield's layout ([`MOXFIELD_HEADER`]), entries in the order given, LF
/// line endings, every field quoted. [`parse_csv`] reads it back to the same
/// entries.
pub fn export_csv(entries: &[CollectionEntry]) -> anyhow::Result<String> {
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(MOXFIELD_HEADER)?;
    for entry in entries {
        let quantity = entry.quantity.to_string();
        let trade = entry.trade_quantity.to_string();
        writer.write_record([
            quantity.as_str(),
            trade.as_str(),
            entry.card.name.as_str(),
            entry.card.set.as_str(),
            entry.condition.as_deref().unwrap_or(""),
            entry.language.as_deref().unwrap_or(""),
            if entry.foil { "foil" } else { "" },
            "",
            "",
            entry.card.collector_number.as_str(),
            "False",
            "False",
            "",
        ])?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}
