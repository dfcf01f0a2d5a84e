use std::sync::Arc;

use super::errors::{ImportError, NeedsError, PatchCollectionError};
use super::layouts::{ImportRow, ParsedImport};
use super::model::{
    CollectionCard, CollectionEntry, CollectionLine, CollectionQuery, CollectionTotals,
    CollectionWrite, MAX_CHANGES, WriteMode, merge_lines,
};
use super::needs::{Needs, counted_cards, needs};
use super::ports::{ApplyError, CollectionRepository};
use crate::catalog::{
    CardIdentifier, CatalogService, Game, Printing, Unresolved, UnresolvedReason,
};
use crate::decks::export::readable_sections;
use crate::decks::text::parse;
use crate::decks::{DeckId, DeckService, FindDeckError, Page};
use crate::events::Origin;
use crate::identity::{Principal, UserId};
use crate::system::SystemPorts;
use crate::validation::{FieldViolation, Violations};

/// A change's delta stays within this, either way.
const MAX_DELTA: i64 = 1_000_000;

/// How many identifiers one catalog resolution takes at a time: the store looks each kind up
/// with one array per batch.
const RESOLVE_BATCH: usize = 5000;

/// One change of a PATCH, before resolution: a signed delta of a card's printing and finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionChange {
    pub quantity: i64,
    pub foil: bool,
    pub identifier: CardIdentifier,
}

/// What an import body held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    /// A CSV collection export ([`super::CsvLayout`]), read as it arrived
    /// ([`super::CsvStream`]).
    Csv(ParsedImport),
    /// A deck list in the deck text format: every card line is owned copies.
    Text(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRequest {
    pub source: ImportSource,
    pub mode: WriteMode,
    /// Write the rows that resolved even when others did not.
    pub skip_unresolved: bool,
}

/// A row of an import that names no card: its line (the header is line 1), its text, and why
/// (`empty`, `not_found`, `ambiguous`, `invalid_count`, `malformed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowProblem {
    pub line: usize,
    pub text: String,
    pub reason: String,
}

/// What an import did: the totals after it, the rows written (0 when it wrote nothing), and
/// the rows that name no card, by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOutcome {
    pub totals: CollectionTotals,
    pub rows: u64,
    pub unresolved: Vec<RowProblem>,
}

/// Reads and writes users' collections, and tells what a deck needs from one.
#[derive(Clone)]
pub struct CollectionService {
    collections: Arc<dyn CollectionRepository>,
    catalog: CatalogService,
    decks: DeckService,
    system: SystemPorts,
}

impl CollectionService {
    pub fn new(
        collections: Arc<dyn CollectionRepository>,
        catalog: CatalogService,
        decks: DeckService,
        system: SystemPorts,
    ) -> Self {
        Self {
            collections,
            catalog,
            decks,
            system,
        }
    }

    /// One page of the caller's collection of the query's game.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %query.game))]
    pub async fn list(
        &self,
        query: &CollectionQuery,
    ) -> anyhow::Result<(Page<CollectionEntry>, CollectionTotals)> {
        let (page, totals) = futures_util::future::try_join(
            self.collections.list(query),
            self.collections.totals(query.owner, &query.game),
        )
        .await?;
        Ok((page, totals))
    }

    /// Every entry of the caller's collection, in the listing's order.
    pub async fn all(
        &self,
        principal: &Principal,
        game: &Game,
    ) -> anyhow::Result<Vec<CollectionEntry>> {
        self.collections.all(owner(principal)?, &game.slug).await
    }

    /// Applies signed deltas, all or nothing: any unresolved change or a quantity that would go
    /// below zero changes nothing.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, changes = changes.len()))]
    pub async fn patch(
        &self,
        principal: &Principal,
        game: &Game,
        changes: &[CollectionChange],
    ) -> Result<CollectionTotals, PatchCollectionError> {
        check_changes(changes)?;
        let identifiers: Vec<CardIdentifier> = changes
            .iter()
            .map(|change| change.identifier.clone())
            .collect();
        let (printings, unresolved) = self.resolve(game, &identifiers).await?;
        if !unresolved.is_empty() {
            return Err(PatchCollectionError::Unresolved(unresolved));
        }
        let lines = changes
            .iter()
            .zip(printings)
            .enumerate()
            .filter_map(|(index, (change, printing))| {
                Some(CollectionLine {
                    index,
                    card: CollectionCard::from(printing?),
                    foil: change.foil,
                    quantity: change.quantity,
                    trade_quantity: 0,
                    condition: None,
                    language: None,
                })
            })
            .collect();
        self.write(principal, game, WriteMode::Add, lines)
            .await
            .map_err(|error| match error {
                ApplyError::BelowZero { index } => Violations(vec![FieldViolation::new(
                    format!("changes[{index}]"),
                    "below_zero",
                    "this change would take the quantity held below 0",
                )])
                .into(),
                ApplyError::Unexpected(error) => error.into(),
            })
    }

    /// Imports a CSV export or a deck list: adds its counts, or makes them the whole collection.
    /// Rows that name no card are listed by line and nothing is written, unless the request
    /// asks to skip them.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn import(
        &self,
        principal: &Principal,
        game: &Game,
        request: ImportRequest,
    ) -> Result<ImportOutcome, ImportError> {
        let (rows, mut problems) = match request.source {
            ImportSource::Csv(parsed) => {
                let problems = parsed
                    .unreadable
                    .into_iter()
                    .map(|row| RowProblem {
                        line: row.line,
                        text: row.text,
                        reason: row.reason.to_owned(),
                    })
                    .collect();
                (parsed.rows, problems)
            }
            ImportSource::Text(body) => text_rows(game, &body),
        };
        let identifiers: Vec<CardIdentifier> =
            rows.iter().map(|row| row.identifier.clone()).collect();
        let (printings, unresolved) = self.resolve(game, &identifiers).await?;
        problems.extend(unresolved.iter().map(|item| {
            let row = &rows[item.index];
            RowProblem {
                line: row.line,
                text: row.text.clone(),
                reason: reason(item.reason).to_owned(),
            }
        }));
        problems.sort_by_key(|problem| problem.line);
        if !problems.is_empty() && !request.skip_unresolved {
            let totals = self
                .collections
                .totals(owner(principal)?, &game.slug)
                .await?;
            return Ok(ImportOutcome {
                totals,
                rows: 0,
                unresolved: problems,
            });
        }
        let lines: Vec<CollectionLine> = rows
            .into_iter()
            .zip(printings)
            .enumerate()
            .filter_map(|(index, (row, printing))| {
                Some(CollectionLine {
                    index,
                    card: CollectionCard::from(printing?),
                    foil: row.foil,
                    quantity: i64::from(row.quantity),
                    trade_quantity: i64::from(row.trade_quantity),
                    condition: row.condition,
                    language: row.language,
                })
            })
            .collect();
        let written = lines.len() as u64;
        let totals = self
            .write(principal, game, request.mode, lines)
            .await
            .map_err(|error| match error {
                // Imported counts are never negative, so no write goes below zero.
                ApplyError::BelowZero { index } => {
                    anyhow::anyhow!("import row {index} took a quantity below zero")
                }
                ApplyError::Unexpected(error) => error,
            })?;
        Ok(ImportOutcome {
            totals,
            rows: written,
            unresolved: problems,
        })
    }

    /// What deck `id` still needs from the caller's collection (the deck readable by them).
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn needs(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
    ) -> Result<(i32, Needs), NeedsError> {
        let deck = self
            .decks
            .get(principal, game, id)
            .await
            .map_err(|error| match error {
                FindDeckError::NotFound => NeedsError::NotFound,
                FindDeckError::Unexpected(error) => NeedsError::Unexpected(error),
            })?;
        let cards = counted_cards(game, &deck.content.cards);
        let owned = if cards.is_empty() {
            Default::default()
        } else {
            self.collections
                .owned(owner(principal)?, &game.slug, &cards)
                .await?
        };
        Ok((deck.version, needs(game, &deck.content.cards, &owned)))
    }

    async fn write(
        &self,
        principal: &Principal,
        game: &Game,
        mode: WriteMode,
        lines: Vec<CollectionLine>,
    ) -> Result<CollectionTotals, ApplyError> {
        let write = CollectionWrite {
            owner: owner(principal)?,
            game: game.slug.clone(),
            mode,
            lines: merge_lines(lines),
            origin: Origin::of(principal, self.system.ids.as_ref()),
            at: self.system.clock.now(),
        };
        self.collections.apply(&write).await
    }

    /// One printing per identifier (`None` where it did not resolve), and the unresolved
    /// ones with their positions in `identifiers`.
    async fn resolve(
        &self,
        game: &Game,
        identifiers: &[CardIdentifier],
    ) -> anyhow::Result<(Vec<Option<Printing>>, Vec<Unresolved>)> {
        let mut printings: Vec<Option<Printing>> = vec![None; identifiers.len()];
        let mut unresolved = Vec::new();
        for (batch, chunk) in identifiers.chunks(RESOLVE_BATCH).enumerate() {
            let offset = batch * RESOLVE_BATCH;
            let resolution = self.catalog.resolve(game, chunk, None).await?;
            for item in resolution.resolved {
                printings[offset + item.index] = Some(item.printing);
            }
            unresolved.extend(resolution.unresolved.into_iter().map(|mut item| {
                item.index += offset;
                item
            }));
        }
        unresolved.sort_by_key(|item| item.index);
        Ok((printings, unresolved))
    }
}

/// The user whose collection a request reaches: the access rule (`UserWith`) admits only
/// callers with one.
fn owner(principal: &Principal) -> anyhow::Result<UserId> {
    principal
        .user
        .as_ref()
        .map(|user| user.id)
        .ok_or_else(|| anyhow::anyhow!("a collection was reached without a user"))
}

fn check_changes(changes: &[CollectionChange]) -> Result<(), Violations> {
    let mut violations = Violations::default();
    if changes.is_empty() {
        violations.push(FieldViolation::new(
            "changes",
            "required",
            "at least one change",
        ));
    }
    if changes.len() > MAX_CHANGES {
        violations.push(FieldViolation::new(
            "changes",
            "too_many",
            format!("at most {MAX_CHANGES} changes"),
        ));
    }
    for (index, change) in changes.iter().enumerate() {
        if !(-MAX_DELTA..=MAX_DELTA).contains(&change.quantity) {
            violations.push(FieldViolation::new(
                format!("changes[{index}].quantity"),
                "range",
                format!("must be -{MAX_DELTA} to {MAX_DELTA}"),
            ));
        }
    }
    violations.into_result(())
}

/// The card lines of a deck list as import rows (every section counts: they are all owned
/// copies), and its unreadable lines.
fn text_rows(game: &Game, body: &str) -> (Vec<ImportRow>, Vec<RowProblem>) {
    let parsed = parse(body, &readable_sections(game));
    let line_text = |line: usize| {
        body.lines()
            .nth(line.saturating_sub(1))
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let problems = parsed
        .warnings
        .iter()
        .map(|warning| RowProblem {
            line: warning.line,
            text: line_text(warning.line),
            reason: "malformed".to_owned(),
        })
        .collect();
    let rows = parsed
        .entries
        .into_iter()
        .map(|entry| ImportRow {
            line: entry.line,
            text: line_text(entry.line),
            quantity: entry.quantity,
            trade_quantity: 0,
            foil: entry.foil,
            identifier: CardIdentifier {
                name: Some(entry.name),
                set: entry.set.map(|set| set.to_lowercase()),
                collector_number: entry.collector_number,
                ..CardIdentifier::default()
            },
            condition: None,
            language: None,
        })
        .collect();
    (rows, problems)
}

fn reason(reason: UnresolvedReason) -> &'static str {
    match reason {
        UnresolvedReason::Empty => "empty",
        UnresolvedReason::NotFound => "not_found",
        UnresolvedReason::Ambiguous => "ambiguous",
        UnresolvedReason::NotLegalInFormat => "not_legal_in_format",
    }
}
