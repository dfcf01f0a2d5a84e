//! The legality history that ships with the code (contract, "Format checks": "History is data
//! that ships"): every Banned and Restricted change announced for the `mtg` formats, as the
//! file `data/mtg/banned-and-restricted.tsv` lists them. Migration
//! `2026-11-28-000100_shipped_legality_history` loads the same rows into PostgreSQL (a test
//! holds the two to each other); the in-memory store reads them from here.
//!
//! Announcements name cards, not catalog ids, so their records are kept by name key and join a
//! card's imported and operator records when its facts are read ([`merge_announced`]).

use std::collections::BTreeMap;

use time::macros::format_description;
use time::{Date, OffsetDateTime};

use super::deck_rules::{Legality, LegalityChange};
use super::name_key;

/// The shipped file, as the repository holds it.
pub const MTG_ANNOUNCEMENTS_FILE: &str =
    include_str!("../../../../data/mtg/banned-and-restricted.tsv");

/// One change an announcement made: `card` goes from `before` to `after` in `format` on
/// `effective` (the start of that day, UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnouncedChange {
    pub effective: Date,
    pub format: String,
    pub card: String,
    pub before: Legality,
    pub after: Legality,
    pub announcement: String,
    pub url: String,
}

impl AnnouncedChange {
    pub fn from(&self) -> OffsetDateTime {
        self.effective.midnight().assume_utc()
    }

    /// The record this change adds to its card's history.
    pub fn record(&self) -> LegalityChange {
        LegalityChange {
            from: self.from(),
            status: self.after,
            before: Some(self.before),
        }
    }
}

/// Why a line of an announcements file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("line {line}: {reason}")]
pub struct AnnouncementLineError {
    pub line: usize,
    pub reason: String,
}

const COLUMNS: [&str; 7] = [
    "effective",
    "format",
    "card",
    "before",
    "after",
    "announcement",
    "url",
];

/// Every change of an announcements file (tab-separated, the header line first, `#` lines
/// are notes), in file order.
pub fn parse_announcements(text: &str) -> Result<Vec<AnnouncedChange>, AnnouncementLineError> {
    let mut changes = Vec::new();
    let mut header_seen = false;
    for (index, line) in text.lines().enumerate() {
        let line_number = index + 1;
        let error = |reason: String| AnnouncementLineError {
            line: line_number,
            reason,
        };
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if !header_seen {
            if fields != COLUMNS {
                return Err(error(format!("the header must be {}", COLUMNS.join(" "))));
            }
            header_seen = true;
            continue;
        }
        let [effective, format, card, before, after, announcement, url] = fields[..] else {
            return Err(error(format!("{} fields, not 7", fields.len())));
        };
        let effective = Date::parse(effective, format_description!("[year]-[month]-[day]"))
            .map_err(|_| error(format!("{effective:?} is not a date (YYYY-MM-DD)")))?;
        let status = |text: &str| {
            Legality::parse(text).ok_or_else(|| error(format!("{text:?} is not a legality")))
        };
        let (before, after) = (status(before)?, status(after)?);
        if before == after {
            return Err(error(format!(
                "{card}: before and after are both {after:?}"
            )));
        }
        if [format, card, announcement, url]
            .iter()
            .any(|field| field.trim().is_empty())
        {
            return Err(error("a field is empty".to_owned()));
        }
        changes.push(AnnouncedChange {
            effective,
            format: format.to_owned(),
            card: card.to_owned(),
            before,
            after,
            announcement: announcement.to_owned(),
            url: url.to_owned(),
        });
    }
    Ok(changes)
}

/// The shipped `mtg` history (the repository's file; its tests keep it valid).
pub fn mtg_announcements() -> Vec<AnnouncedChange> {
    parse_announcements(MTG_ANNOUNCEMENTS_FILE).unwrap_or_default()
}

/// The shipped changes of `game` by card name key, oldest first.
pub fn announcements_by_name(game: &str) -> BTreeMap<String, Vec<AnnouncedChange>> {
    let mut by_name: BTreeMap<String, Vec<AnnouncedChange>> = BTreeMap::new();
    if game == "mtg" {
        for change in mtg_announcements() {
            by_name
                .entry(name_key(&change.card))
                .or_default()
                .push(change);
        }
    }
    for changes in by_name.values_mut() {
        changes.sort_by(|a, b| (&a.format, a.effective).cmp(&(&b.format, b.effective)));
    }
    by_name
}

/// A card's whole history in each format: its imported and operator records (`recorded`,
/// oldest first per format) with the announced changes of its name. At the same time, an
/// announcement comes first and a record of the card's own last, so the record speaks.
pub fn merge_announced(
    recorded: &BTreeMap<String, Vec<LegalityChange>>,
    announced: &[AnnouncedChange],
) -> BTreeMap<String, Vec<LegalityChange>> {
    let mut merged = recorded.clone();
    for change in announced {
        let history = merged.entry(change.format.clone()).or_default();
        let record = change.record();
        let at = history.partition_point(|existing| existing.from < record.from);
        history.insert(at, record);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_parses_and_every_row_names_a_known_format() {
        let changes = parse_announcements(MTG_ANNOUNCEMENTS_FILE).unwrap();
        assert_eq!(changes.len(), 90);
        let formats = [
            "standard",
            "pioneer",
            "modern",
            "legacy",
            "vintage",
            "pauper",
            "commander",
        ];
        for change in &changes {
            assert!(formats.contains(&change.format.as_str()), "{change:?}");
            assert!(change.url.starts_with("http"), "{change:?}");
            let year = change.effective.year();
            assert!((2019..=2020).contains(&year), "{change:?}");
        }
    }

    #[test]
    fn a_card_changes_once_per_format_and_day_and_each_change_follows_the_last() {
        for (name, changes) in announcements_by_name("mtg") {
            for pair in changes.windows(2) {
                if pair[0].format == pair[1].format {
                    assert!(pair[0].effective < pair[1].effective, "{name}: {pair:?}");
                    assert_eq!(pair[0].after, pair[1].before, "{name}: {pair:?}");
                }
            }
        }
    }

    /// Every row through a card's history as a check reads it: the day before its date answers
    /// its "before", its day and the day after answer its "after".
    #[test]
    fn every_shipped_change_answers_before_and_after_its_day() {
        use crate::catalog::deck_rules::CardFacts;
        let mut checked = 0;
        for (name, changes) in announcements_by_name("mtg") {
            let facts = CardFacts {
                card_id: uuid::Uuid::nil(),
                name: name.clone(),
                type_line: String::new(),
                color_identity: Vec::new(),
                text: Default::default(),
                legalities: std::sync::Arc::new(merge_announced(&BTreeMap::new(), &changes)),
            };
            for change in &changes {
                let day = time::Duration::days(1);
                let before = facts.legality(&change.format, change.from() - day);
                let on = facts.legality(&change.format, change.from());
                let after = facts.legality(&change.format, change.from() + day);
                assert_eq!(before, Some(change.before), "{change:?}");
                assert_eq!(on, Some(change.after), "{change:?}");
                assert_eq!(after, Some(change.after), "{change:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 90);
    }

    /// The migration loads exactly the file's rows, in its order.
    #[test]
    fn the_migration_inserts_the_shipped_file() {
        let migration = include_str!(
            "../../../../migrations/2026-11-28-000100_shipped_legality_history/up.sql"
        );
        let inserted: Vec<Vec<String>> = migration
            .lines()
            .filter(|line| line.starts_with("    ('"))
            .map(sql_literals)
            .collect();
        let shipped: Vec<Vec<String>> = mtg_announcements()
            .into_iter()
            .map(|change| {
                vec![
                    change.effective.to_string(),
                    change.format,
                    change.card,
                    change.before.as_str().to_owned(),
                    change.after.as_str().to_owned(),
                    change.announcement,
                    change.url,
                ]
            })
            .collect();
        assert_eq!(inserted, shipped);
    }

    /// The quoted literals of one `VALUES` row (`''` is a quote).
    fn sql_literals(line: &str) -> Vec<String> {
        let mut literals = Vec::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\'' {
                continue;
            }
            let mut literal = String::new();
            while let Some(c) = chars.next() {
                if c == '\'' {
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                        literal.push('\'');
                    } else {
                        break;
                    }
                } else {
                    literal.push(c);
                }
            }
            literals.push(literal);
        }
        literals
    }

    #[test]
    fn a_bad_line_is_refused_with_its_number() {
        let text = "effective\tformat\tcard\tbefore\tafter\tannouncement\turl\n\
                    # a note\n\
                    2019-13-01\tmodern\tX\tlegal\tbanned\tA\thttps://a\n";
        assert_eq!(parse_announcements(text).unwrap_err().line, 3);
        let text = "effective\tformat\tcard\tbefore\tafter\tannouncement\turl\n\
                    2019-01-01\tmodern\tX\tlegal\tlegal\tA\thttps://a\n";
        assert_eq!(parse_announcements(text).unwrap_err().line, 2);
    }
}
