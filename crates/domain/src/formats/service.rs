//! The format check use cases: a stored deck (read with the deck detail's visibility rules) or
//! an inline list (resolved like an export payload, nothing stored), both answered by
//! [`super::check`] over facts the catalog store holds in process.

use std::collections::HashMap;
use std::sync::Arc;

use time::OffsetDateTime;
use uuid::Uuid;

use super::check::{CheckLine, Problem, check};
use super::{FormatRules, Legality};
use crate::catalog::ports::CatalogRepository;
use crate::catalog::{CardIdentifier, CatalogService, Format, Game};
use crate::decks::export::{MAX_TEXT_ENTRIES, PayloadContent, readable_sections};
use crate::decks::{CardLineInput, DeckId, DeckService, FindDeckError, check_entries, text};
use crate::identity::Principal;
use crate::system::SystemPorts;
use crate::validation::{FieldViolation, Violations};

/// The answer of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub format: Format,
    pub as_of: OffsetDateTime,
    pub problems: Vec<Problem>,
}

impl CheckReport {
    pub fn legal(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Why a check was not made. Each maps to one answer of the contract.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    /// No format of this game has this slug or id.
    #[error("no format {0:?} in this game")]
    UnknownFormat(String),
    /// The deck has no format and the request named none.
    #[error("the deck has no format; name one with `format`")]
    NoFormat,
    /// The format carries no deck rules to check against.
    #[error("the format {} ({}) has no deck rules to check against", .0.name, .0.slug)]
    NoRules(Format),
    /// No such deck, or one the caller may not see.
    #[error("no such deck")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl From<FindDeckError> for CheckError {
    fn from(error: FindDeckError) -> Self {
        match error {
            FindDeckError::NotFound => Self::NotFound,
            FindDeckError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

/// A legality an operator records (`deckhand admin format legality`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegalityRecord {
    pub format: Format,
    pub card_id: Uuid,
    pub card_name: String,
    pub status: Legality,
    pub from: OffsetDateTime,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordLegalityError {
    #[error("no format {0:?} in this game")]
    UnknownFormat(String),
    #[error("no card named {0:?} in this game")]
    UnknownCard(String),
    #[error("{0:?} names more than one card")]
    Ambiguous(String),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Clone)]
pub struct FormatService {
    catalog: CatalogService,
    repository: Arc<dyn CatalogRepository>,
    decks: DeckService,
    system: SystemPorts,
}

impl FormatService {
    pub fn new(
        catalog: CatalogService,
        repository: Arc<dyn CatalogRepository>,
        decks: DeckService,
        system: SystemPorts,
    ) -> Self {
        Self {
            catalog,
            repository,
            decks,
            system,
        }
    }

    /// The format named by slug or id, with its rules; errors name what was asked for.
    async fn format_with_rules(
        &self,
        game: &Game,
        wanted: &str,
    ) -> Result<(Format, FormatRules), CheckError> {
        let format = self
            .catalog
            .format(game, wanted)
            .await?
            .ok_or_else(|| CheckError::UnknownFormat(wanted.to_owned()))?;
        match format.rules.clone() {
            Some(rules) => Ok((format, rules)),
            None => Err(CheckError::NoRules(format)),
        }
    }

    /// Checks a stored deck the caller may see (the deck detail's rules), in `format` or else
    /// the deck's own.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn check_deck(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        format: Option<&str>,
        as_of: Option<OffsetDateTime>,
    ) -> Result<CheckReport, CheckError> {
        let deck = self.decks.get(principal, game, id).await?;
        let wanted = match (format, deck.content.format_id) {
            (Some(format), _) => format.to_owned(),
            (None, Some(id)) => id.to_string(),
            (None, None) => return Err(CheckError::NoFormat),
        };
        let (format, rules) = self.format_with_rules(game, &wanted).await?;
        let lines: Vec<CheckLine> = deck
            .content
            .cards
            .iter()
            .map(|card| CheckLine {
                section: card.section.clone(),
                quantity: card.quantity,
                card_id: Some(card.card.card_id),
                name: card.card.name.clone(),
                place: String::new(),
            })
            .collect();
        self.report(game, format, &rules, &lines, as_of).await
    }

    /// Checks an inline list (card entries or deck-list text); nothing is stored.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn check_list(
        &self,
        game: &Game,
        format: &str,
        content: PayloadContent,
        as_of: Option<OffsetDateTime>,
    ) -> Result<CheckReport, CheckError> {
        let entries = entries(game, content)?;
        let (format, rules) = self.format_with_rules(game, format).await?;
        let identifiers: Vec<CardIdentifier> = entries
            .iter()
            .map(|(_, card)| card.identifier.clone())
            .collect();
        let resolution = self.catalog.resolve(game, &identifiers, None).await?;
        let mut resolved: HashMap<usize, (Uuid, String)> = HashMap::new();
        for item in resolution.resolved {
            resolved.insert(item.index, (item.printing.card_id, item.printing.name));
        }
        let lines: Vec<CheckLine> = entries
            .into_iter()
            .enumerate()
            .map(|(index, (place, card))| {
                let (card_id, name) = match resolved.remove(&index) {
                    Some((id, name)) => (Some(id), name),
                    None => (None, asked_for(&card.identifier)),
                };
                CheckLine {
                    section: card.section,
                    quantity: card.quantity,
                    card_id,
                    name,
                    place,
                }
            })
            .collect();
        self.report(game, format, &rules, &lines, as_of).await
    }

    async fn report(
        &self,
        game: &Game,
        format: Format,
        rules: &FormatRules,
        lines: &[CheckLine],
        as_of: Option<OffsetDateTime>,
    ) -> Result<CheckReport, CheckError> {
        let as_of = as_of.unwrap_or_else(|| self.system.clock.now());
        let mut ids: Vec<Uuid> = lines.iter().filter_map(|line| line.card_id).collect();
        ids.sort_unstable();
        ids.dedup();
        let facts = if ids.is_empty() {
            HashMap::new()
        } else {
            self.repository
                .card_facts(&game.slug, &ids)
                .await?
                .into_iter()
                .map(|facts| (facts.card_id, facts))
                .collect()
        };
        let problems = check(game, &format, rules, lines, &facts, as_of);
        Ok(CheckReport {
            format,
            as_of,
            problems,
        })
    }

    /// Records an operator's legality change of the card named `card` in `format`, from
    /// `from` (default now).
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn record_legality(
        &self,
        game: &Game,
        format: &str,
        card: &str,
        status: Legality,
        from: Option<OffsetDateTime>,
    ) -> Result<LegalityRecord, RecordLegalityError> {
        let format = self
            .catalog
            .format(game, format)
            .await?
            .ok_or_else(|| RecordLegalityError::UnknownFormat(format.to_owned()))?;
        let key = crate::catalog::name_key(card);
        let named = self
            .repository
            .cards_named(&game.slug, std::slice::from_ref(&key))
            .await?;
        // A full name wins over a front face's.
        let exact: Vec<_> = named.iter().filter(|found| found.name_key == key).collect();
        let found = match (exact.as_slice(), named.as_slice()) {
            ([one], _) => *one,
            ([], [one]) => one,
            ([], []) => return Err(RecordLegalityError::UnknownCard(card.to_owned())),
            _ => return Err(RecordLegalityError::Ambiguous(card.to_owned())),
        };
        let facts = self
            .repository
            .card_facts(&game.slug, &[found.card_id])
            .await?;
        let card_name = facts
            .first()
            .map_or_else(|| card.to_owned(), |facts| facts.name.clone());
        let from = from.unwrap_or_else(|| self.system.clock.now());
        self.repository
            .record_legality(&game.slug, found.card_id, &format.slug, status, from)
            .await?;
        Ok(LegalityRecord {
            format,
            card_id: found.card_id,
            card_name,
            status,
            from,
        })
    }
}

/// What an unresolved entry asked for, for its message.
fn asked_for(identifier: &CardIdentifier) -> String {
    [
        &identifier.name,
        &identifier.variant_id,
        &identifier.card_id,
        &identifier.catalog_a_id,
        &identifier.catalog_b_id,
        &identifier.catalog_c_id,
    ]
    .into_iter()
    .flatten()
    .next()
    .cloned()
    .or_else(|| {
        identifier
            .set
            .as_ref()
            .zip(identifier.collector_number.as_ref())
            .map(|(set, number)| format!("{set} {number}"))
    })
    .unwrap_or_default()
}

/// The entries of an inline list with where each came from, bounded like an export payload;
/// unparsable lines of a text are left out (the list says what it can).
fn entries(
    game: &Game,
    content: PayloadContent,
) -> Result<Vec<(String, CardLineInput)>, Violations> {
    let mut v = Violations::default();
    let entries = match content {
        PayloadContent::Cards(cards) => {
            check_entries(game, "cards", &cards, &mut v);
            cards
                .into_iter()
                .enumerate()
                .map(|(index, card)| (format!("cards[{index}]"), card))
                .collect()
        }
        PayloadContent::Text(list) => {
            let parsed = text::parse(&list, &readable_sections(game));
            if parsed.entries.len() > MAX_TEXT_ENTRIES {
                v.push(FieldViolation::new(
                    "text",
                    "too_many",
                    format!("at most {MAX_TEXT_ENTRIES} card lines"),
                ));
            }
            parsed
                .entries
                .into_iter()
                .map(|entry| (format!("line {}", entry.line), entry.into_card_line()))
                .collect()
        }
    };
    v.into_result(entries)
}
