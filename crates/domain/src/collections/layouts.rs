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

const UNKNOWN_HEADER: &str = "the header is neither Moxfield's (with \"Collector Number\") nor Deckbox's (with \"Card Number\") collection export";

fn layout_error(message: impl Into<String>) -> Violations {
    Violations(vec![FieldViolation::new("body", "layout", message)])
}

impl Columns {
    fn of(header: &[&str]) -> Result<(CsvLayout, Self), Violations> {
        let find = |name: &str| {
            header.iter().position(|column| {
                column
                    .trim_start_matches('\u{feff}')
                    .trim()
                    .eq_ignore_ascii_case(name)
            })
        };
        let layout = if find("Collector Number").is_some() {
            CsvLayout::Moxfield
        } else if find("Card Number").is_some() || find("Edition Code").is_some() {
            CsvLayout::Deckbox
        } else {
            return Err(layout_error(UNKNOWN_HEADER));
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

/// Reads a CSV collection export (see [`CsvLayout`]) held whole; `Err` when the header is in
/// no known layout or the body is not UTF-8. Rows that cannot be read are listed, never fatal.
pub fn parse_csv(body: &str) -> Result<ParsedImport, Violations> {
    let mut stream = CsvStream::default();
    stream.feed(body.as_bytes())?;
    stream.finish()
}

/// Reads a CSV collection export as it arrives, chunk by chunk, with `csv_core`'s push parser:
/// only the rows read so far are kept, never the body. The header is read from the first
/// record, so a file in no known layout is refused at its first chunk.
pub struct CsvStream {
    reader: csv_core::Reader,
    /// The bytes of the record being read, as sent (a row's `text`).
    raw: Vec<u8>,
    /// The record's fields, one after another; `ends` where each stops.
    fields: Vec<u8>,
    filled: usize,
    ends: Vec<usize>,
    fields_read: usize,
    /// Line breaks before `raw`: the line it starts on, less one.
    lines_before: usize,
    header: Option<(CsvLayout, Columns)>,
    rows: Vec<ImportRow>,
    unreadable: Vec<UnreadableRow>,
    not_utf8: bool,
}

impl Default for CsvStream {
    fn default() -> Self {
        Self {
            // `csv_core::Reader::default()` leaves its DFA unbuilt; `new` builds it.
            reader: csv_core::Reader::new(),
            raw: Vec::new(),
            fields: Vec::new(),
            filled: 0,
            ends: Vec::new(),
            fields_read: 0,
            lines_before: 0,
            header: None,
            rows: Vec::new(),
            unreadable: Vec::new(),
            not_utf8: false,
        }
    }
}

impl CsvStream {
    /// Reads the records `chunk` completes; `Err` when it completes a header in no known layout.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), Violations> {
        self.read(chunk, false)
    }

    /// `csv_core` takes an empty input for the end of the data: it is given one only at the end.
    fn read(&mut self, mut input: &[u8], at_end: bool) -> Result<(), Violations> {
        while at_end || !input.is_empty() {
            if self.filled == self.fields.len() {
                self.fields.resize(self.fields.len().max(256) * 2, 0);
            }
            if self.fields_read == self.ends.len() {
                self.ends.resize(self.ends.len().max(16) * 2, 0);
            }
            let (result, read, written, ended) = self.reader.read_record(
                input,
                &mut self.fields[self.filled..],
                &mut self.ends[self.fields_read..],
            );
            self.raw.extend_from_slice(&input[..read]);
            input = &input[read..];
            self.filled += written;
            self.fields_read += ended;
            match result {
                csv_core::ReadRecordResult::Record => self.record()?,
                csv_core::ReadRecordResult::OutputFull
                | csv_core::ReadRecordResult::OutputEndsFull
                | csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::End => break,
            }
        }
        Ok(())
    }

    /// Reads the last record, and answers what the body held.
    pub fn finish(mut self) -> Result<ParsedImport, Violations> {
        self.read(&[], true)?;
        if self.not_utf8 {
            return Err(Violations(vec![FieldViolation::new(
                "body",
                "encoding",
                "must be UTF-8",
            )]));
        }
        let Some((layout, _)) = self.header else {
            return Err(layout_error(UNKNOWN_HEADER));
        };
        Ok(ParsedImport {
            layout,
            rows: self.rows,
            unreadable: self.unreadable,
        })
    }

    /// The record just read: the header, or a row.
    fn record(&mut self) -> Result<(), Violations> {
        let raw = std::mem::take(&mut self.raw);
        let breaks = |bytes: &[u8]| bytes.iter().filter(|byte| **byte == b'\n').count();
        let blank = raw
            .iter()
            .take_while(|byte| matches!(byte, b'\r' | b'\n'))
            .count();
        let line = self.lines_before + breaks(&raw[..blank]) + 1;
        self.lines_before += breaks(&raw);
        let fields_read = std::mem::take(&mut self.fields_read);
        self.filled = 0;
        let mut fields = Vec::with_capacity(fields_read);
        let mut start = 0;
        for &end in &self.ends[..fields_read] {
            let Ok(field) = std::str::from_utf8(&self.fields[start..end]) else {
                self.not_utf8 = true;
                return Ok(());
            };
            fields.push(field);
            start = end;
        }
        let Some((_, columns)) = &self.header else {
            self.header = Some(Columns::of(&fields)?);
            return Ok(());
        };
        if fields.iter().all(|field| field.trim().is_empty()) {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&raw[blank..]).trim_end().to_owned();
        match read_row(columns, &fields, line, text) {
            Ok(row) => self.rows.push(row),
            Err(unreadable) => self.unreadable.push(unreadable),
        }
        Ok(())
    }
}

fn read_row(
    columns: &Columns,
    record: &[&str],
    line: usize,
    text: String,
) -> Result<ImportRow, UnreadableRow> {
    let field = |at: Option<usize>| {
        at.and_then(|at| record.get(at).copied())
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
