//! Export of decks as deck-list text (the contract's "Export"): a stored deck the
//! caller may see, or an inline payload of card entries or pasted text resolved against the
//! catalog. The text format itself lives in [`super::text`]; this module decides what goes into
//! it and which warnings a payload earns. User-facing rules: `docs/deck-text-format.md`.

use std::sync::Arc;

use time::OffsetDateTime;

use crate::catalog::{CardIdentifier, CatalogService, Game, Resolution, UnresolvedReason};
use crate::identity::Principal;
use crate::validation::{FieldViolation, Violations, bounded_text};

use super::card_line::{CardLineInput, check_entries};
use super::errors::{ExportPayloadError, FindDeckError};
use super::model::{DeckContent, DeckId};
use super::service::DeckService;
use super::text::{self, DeckList, ListLine, ParseWarning, PrintingRef, SectionSpec};

/// The one section key that is never exported: a maybeboard holds cards being considered, not
/// cards of the deck. Keyed rather than derived from `counted`, so a game may one day have an
/// uncounted section that still belongs in an export (tokens, attractions).
pub const NOT_EXPORTED_SECTION: &str = "maybeboard";

/// At most this many card lines of a pasted text are resolved: one catalog resolution's bound.
pub const MAX_TEXT_ENTRIES: usize = crate::catalog::MAX_IDENTIFIERS;

/// The sections an export writes, in game order: every section but the maybeboard.
pub fn exported_sections(game: &Game) -> Vec<SectionSpec> {
    game.sections
        .iter()
        .filter(|section| section.key != NOT_EXPORTED_SECTION)
        .map(|section| SectionSpec {
            key: section.key.clone(),
            label: section.label.clone(),
        })
        .collect()
}

/// Every section of the game, for reading text: a `Maybeboard` header in pasted text is then
/// understood (and its cards left out) instead of being warned about as unknown.
pub fn readable_sections(game: &Game) -> Vec<SectionSpec> {
    game.sections
        .iter()
        .map(|section| SectionSpec {
            key: section.key.clone(),
            label: section.label.clone(),
        })
        .collect()
}

/// A stored deck's content as a list: its cards with their catalog printings, maybeboard
/// left out.
pub fn deck_list(game: &Game, content: &DeckContent) -> DeckList {
    DeckList {
        sections: exported_sections(game)
            .into_iter()
            .map(|section| {
                let lines = content
                    .cards
                    .iter()
                    .filter(|card| card.section == section.key)
                    .map(|card| card.card.printed_line(card.quantity, card.foil))
                    .collect();
                (section, lines)
            })
            .collect(),
    }
}

/// What identifies one render of a stored deck. Every save changes `updated_at` and `version`;
/// the version is kept too so two saves within one clock tick still differ.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExportKey {
    pub deck: DeckId,
    pub updated_at: OffsetDateTime,
    pub version: i32,
}

/// Where renders of stored decks are kept between requests. An adapter owns it (bounded, with
/// a time to live); a miss is always safe, since the render is recomputed.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ExportCache: Send + Sync {
    fn get(&self, key: &ExportKey) -> Option<Arc<str>>;
    fn insert(&self, key: ExportKey, text: Arc<str>);
}

/// An inline deck to export, as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportPayload {
    /// Accepted and bounded like a deck name, but not written: the text format has no name line.
    pub name: Option<String>,
    pub content: PayloadContent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadContent {
    /// Deck card entries, as a deck write takes them.
    Cards(Vec<CardLineInput>),
    /// A deck list in any form [`text::parse`] reads.
    Text(String),
}

/// The text of a payload and one warning per entry or line that was skipped or not resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PayloadExport {
    pub text: String,
    pub warnings: Vec<String>,
}

/// The export use cases.
#[derive(Clone)]
pub struct ExportService {
    decks: DeckService,
    catalog: CatalogService,
}

impl ExportService {
    pub fn new(decks: DeckService, catalog: CatalogService) -> Self {
        Self { decks, catalog }
    }

    /// The text of a stored deck the caller may see. Visibility is decided on the deck as it is
    /// now, before the cache is consulted, so a cached render never reaches a caller who may not
    /// see the deck.
    ///
    /// With `version`, the text of that past version instead (`NotFound` outside 1..N); a
    /// version never changes once written, so its key is its number.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn deck(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        version: Option<i32>,
        cache: &dyn ExportCache,
    ) -> Result<Arc<str>, FindDeckError> {
        let (key, content) = match version {
            None => {
                let deck = self.decks.get(principal, game, id).await?;
                let key = ExportKey {
                    deck: deck.facts.id,
                    updated_at: deck.facts.updated_at,
                    version: deck.version,
                };
                (key, deck.content)
            }
            Some(number) => {
                let past = self.decks.version(principal, game, id, number).await?;
                let key = ExportKey {
                    deck: id,
                    updated_at: past.edited_at,
                    version: past.version_number,
                };
                (key, past.content)
            }
        };
        if let Some(text) = cache.get(&key) {
            return Ok(text);
        }
        let text: Arc<str> = text::render(&deck_list(game, &content)).into();
        cache.insert(key, Arc::clone(&text));
        Ok(text)
    }

    /// The text of an inline payload, resolved against the catalog in one call. Never cached:
    /// the payload is its own key and is rarely sent twice.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn payload(
        &self,
        game: &Game,
        payload: ExportPayload,
    ) -> Result<PayloadExport, ExportPayloadError> {
        check_payload(game, &payload)?;
        match payload.content {
            PayloadContent::Cards(cards) => self.export_cards(game, cards).await,
            PayloadContent::Text(text) => self.export_text(game, &text).await,
        }
    }

    async fn export_cards(
        &self,
        game: &Game,
        cards: Vec<CardLineInput>,
    ) -> Result<PayloadExport, ExportPayloadError> {
        // Maybeboard entries are valid but not exported, so they are not resolved either.
        let entries: Vec<(usize, CardLineInput)> = cards
            .into_iter()
            .enumerate()
            .filter(|(_, card)| card.section != NOT_EXPORTED_SECTION)
            .collect();
        let identifiers: Vec<CardIdentifier> = entries
            .iter()
            .map(|(_, card)| card.identifier.clone())
            .collect();
        let resolution = self.catalog.resolve(game, &identifiers, None).await?;
        let outcomes = outcomes(resolution, entries.len());
        let mut lines = Vec::with_capacity(entries.len());
        let mut warnings = Vec::new();
        for ((index, card), outcome) in entries.into_iter().zip(outcomes) {
            let place = format!("cards[{index}]");
            if let Some(line) = list_line(&card, outcome, &place, &mut warnings) {
                lines.push((card.section, line));
            }
        }
        Ok(PayloadExport {
            text: text::render(&group(game, lines)),
            warnings,
        })
    }

    async fn export_text(
        &self,
        game: &Game,
        text: &str,
    ) -> Result<PayloadExport, ExportPayloadError> {
        let parsed = text::parse(text, &readable_sections(game));
        let entries: Vec<_> = parsed
            .entries
            .into_iter()
            .filter(|entry| entry.section != NOT_EXPORTED_SECTION)
            .collect();
        if entries.len() > MAX_TEXT_ENTRIES {
            return Err(Violations(vec![FieldViolation::new(
                "deck_payload.text",
                "too_many",
                format!("at most {MAX_TEXT_ENTRIES} card lines"),
            )])
            .into());
        }
        let cards: Vec<(usize, CardLineInput)> = entries
            .into_iter()
            .map(|entry| (entry.line, entry.into_card_line()))
            .collect();
        let identifiers: Vec<CardIdentifier> = cards
            .iter()
            .map(|(_, card)| card.identifier.clone())
            .collect();
        let resolution = self.catalog.resolve(game, &identifiers, None).await?;
        let outcomes = outcomes(resolution, cards.len());
        let mut warnings: Vec<ParseWarning> = parsed.warnings;
        let mut lines = Vec::with_capacity(cards.len());
        for ((line, card), outcome) in cards.into_iter().zip(outcomes) {
            let mut messages = Vec::new();
            if let Some(list_line) = list_line(&card, outcome, "", &mut messages) {
                lines.push((card.section, list_line));
            }
            warnings.extend(
                messages
                    .into_iter()
                    .map(|message| ParseWarning { line, message }),
            );
        }
        // Parse and resolution warnings interleave in the order of the text.
        warnings.sort_by_key(|warning| warning.line);
        Ok(PayloadExport {
            text: text::render(&group(game, lines)),
            warnings: warnings.iter().map(ToString::to_string).collect(),
        })
    }
}

/// The bounds a deck write puts on its cards, plus the payload's own: a name like a deck's.
fn check_payload(game: &Game, payload: &ExportPayload) -> Result<(), Violations> {
    let mut v = Violations::default();
    if let Some(name) = &payload.name {
        v.check(bounded_text("deck_payload.name", name, 0, 255));
    }
    if let PayloadContent::Cards(cards) = &payload.content {
        check_entries(game, "deck_payload.cards", cards, &mut v);
    }
    v.into_result(())
}

/// How one entry fared in the resolution.
enum Outcome {
    Resolved(Box<crate::catalog::Printing>),
    Unresolved(UnresolvedReason),
}

/// The outcome of each of `count` identifiers, in request order.
fn outcomes(resolution: Resolution, count: usize) -> Vec<Outcome> {
    let mut outcomes: Vec<Outcome> = (0..count)
        .map(|_| Outcome::Unresolved(UnresolvedReason::NotFound))
        .collect();
    for resolved in resolution.resolved {
        if let Some(slot) = outcomes.get_mut(resolved.index) {
            *slot = Outcome::Resolved(Box::new(resolved.printing));
        }
    }
    for unresolved in resolution.unresolved {
        if let Some(slot) = outcomes.get_mut(unresolved.index) {
            *slot = Outcome::Unresolved(unresolved.reason);
        }
    }
    outcomes
}

/// The line an entry exports as: its catalog printing when resolved, its name alone when not,
/// nothing when it has no name either. Each unresolved entry adds one warning, prefixed with
/// `place` when given.
fn list_line(
    card: &CardLineInput,
    outcome: Outcome,
    place: &str,
    warnings: &mut Vec<String>,
) -> Option<ListLine> {
    let reason = match outcome {
        Outcome::Resolved(printing) => {
            return Some(ListLine {
                quantity: card.quantity,
                name: printing.name,
                printing: Some(PrintingRef {
                    set: printing.set,
                    collector_number: printing.collector_number,
                }),
                foil: card.foil,
            });
        }
        Outcome::Unresolved(reason) => reason,
    };
    let identifier = &card.identifier;
    let name = identifier
        .name
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty());
    let message = match (name, reason) {
        (Some(name), UnresolvedReason::Ambiguous) => {
            format!("{} matches more than one card", text::quote(name))
        }
        (Some(name), _) => match present(&identifier.set) {
            Some(set) => format!(
                "no card named {} in set {}",
                text::quote(name),
                text::quote(&set.to_uppercase())
            ),
            None => format!("no card named {}", text::quote(name)),
        },
        (None, UnresolvedReason::Empty) => "no card identifier given; left out".to_owned(),
        (None, UnresolvedReason::Ambiguous) => {
            format!(
                "{} matches more than one card; left out",
                describe(identifier)
            )
        }
        (None, _) => format!("no card matches {}; left out", describe(identifier)),
    };
    warnings.push(if place.is_empty() {
        message
    } else {
        format!("{place}: {message}")
    });
    name.map(|name| ListLine {
        quantity: card.quantity,
        name: name.to_owned(),
        printing: None,
        foil: card.foil,
    })
}

fn present(field: &Option<String>) -> Option<&str> {
    field
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

/// The identifier fields a client gave, as they are named on the wire.
fn describe(identifier: &CardIdentifier) -> String {
    let fields = [
        ("variantId", &identifier.variant_id),
        ("catalog_a_id", &identifier.catalog_a_id),
        ("catalog_b_id", &identifier.catalog_b_id),
        ("catalog_c_id", &identifier.catalog_c_id),
        ("set", &identifier.set),
        ("collector_number", &identifier.collector_number),
        ("cardId", &identifier.card_id),
    ];
    let described: Vec<String> = fields
        .into_iter()
        .filter_map(|(field, value)| present(value).map(|value| (field, value)))
        .map(|(field, value)| format!("{field} {}", text::quote(value)))
        .collect();
    described.join(", ")
}

/// Lines grouped into the exported sections, in game order; others are dropped.
fn group(game: &Game, lines: Vec<(String, ListLine)>) -> DeckList {
    let mut list = DeckList {
        sections: exported_sections(game)
            .into_iter()
            .map(|section| (section, Vec::new()))
            .collect(),
    };
    for (key, line) in lines {
        if let Some((_, section_lines)) = list
            .sections
            .iter_mut()
            .find(|(section, _)| section.key == key)
        {
            section_lines.push(line);
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decks::model::{CardSnapshot, Deck, DeckCard, Visibility};
    use crate::decks::test_decks::{self, mtg};
    use crate::identity::UserId;

    fn card(section: &str, quantity: u32, name: &str, set: &str, number: &str) -> DeckCard {
        DeckCard {
            section: section.into(),
            quantity,
            foil: false,
            card: CardSnapshot {
                variant_id: uuid::Uuid::nil(),
                card_id: uuid::Uuid::nil(),
                name: name.into(),
                set: set.into(),
                collector_number: number.into(),
                type_line: String::new(),
                image_url: None,
                colors: vec![],
            },
        }
    }

    fn deck(cards: Vec<DeckCard>) -> Deck {
        let content = test_decks::content("d", Visibility::Public, cards);
        let nobody = UserId(uuid::Uuid::nil());
        let epoch = OffsetDateTime::UNIX_EPOCH;
        test_decks::deck(DeckId(uuid::Uuid::nil()), nobody, "alice", content, epoch)
    }

    fn service(stored: Deck) -> ExportService {
        use crate::catalog::ports::MockCatalogRepository;
        use crate::decks::DeckPolicy;
        use crate::decks::ports::MockDeckRepository;
        use crate::system::{MockClock, MockIdGenerator, MockRandom, SystemPorts};

        let mut decks = MockDeckRepository::new();
        decks
            .expect_find()
            .returning(move |_| Ok(Some(stored.clone())));
        let catalog = CatalogService::new(std::sync::Arc::new(MockCatalogRepository::new()));
        let system = SystemPorts {
            clock: std::sync::Arc::new(MockClock::new()),
            ids: std::sync::Arc::new(MockIdGenerator::new()),
            random: std::sync::Arc::new(MockRandom::new()),
            passwords: std::sync::Arc::new(crate::system::InlinePasswordVerifier),
        };
        let decks = DeckService::new(
            std::sync::Arc::new(decks),
            catalog.clone(),
            system,
            DeckPolicy::default(),
            [0; 32],
        );
        ExportService::new(decks, catalog)
    }

    fn export_deck(
        service: &ExportService,
        cache: &MockExportCache,
    ) -> Result<Arc<str>, FindDeckError> {
        futures_executor::block_on(service.deck(
            &Principal::anonymous(),
            &mtg(),
            DeckId(uuid::Uuid::nil()),
            None,
            cache,
        ))
    }

    #[test]
    fn a_hidden_deck_is_refused_before_the_cache_is_asked() {
        let mut hidden = deck(vec![card("mainboard", 1, "Opt", "dom", "60")]);
        hidden.content.visibility = Visibility::Private;
        // No expectations: any call to the cache fails the test.
        let cache = MockExportCache::new();
        assert!(matches!(
            export_deck(&service(hidden), &cache),
            Err(FindDeckError::NotFound)
        ));
    }

    #[test]
    fn a_visible_deck_is_served_from_the_cache_under_its_key_or_rendered_into_it() {
        let mut stored = deck(vec![card("mainboard", 1, "Opt", "dom", "60")]);
        stored.version = 3;
        let key = ExportKey {
            deck: stored.facts.id,
            updated_at: stored.facts.updated_at,
            version: 3,
        };

        let mut hit = MockExportCache::new();
        let wanted = key.clone();
        hit.expect_get()
            .withf(move |asked| *asked == wanted)
            .times(1)
            .returning(|_| Some("cached".into()));
        assert_eq!(
            &*export_deck(&service(stored.clone()), &hit).unwrap(),
            "cached"
        );

        let mut miss = MockExportCache::new();
        miss.expect_get().times(1).returning(|_| None);
        miss.expect_insert()
            .withf(move |asked, text| *asked == key && &**text == "Deck\n1 Opt (DOM) 60\n")
            .times(1)
            .return_const(());
        assert_eq!(
            &*export_deck(&service(stored), &miss).unwrap(),
            "Deck\n1 Opt (DOM) 60\n"
        );
    }

    #[test]
    fn every_section_but_the_maybeboard_is_exported_in_game_order() {
        let keys: Vec<String> = exported_sections(&mtg())
            .into_iter()
            .map(|s| s.key)
            .collect();
        assert_eq!(keys, ["commander", "companion", "mainboard", "sideboard"]);
    }

    #[test]
    fn a_stored_deck_renders_with_printings_and_without_its_maybeboard() {
        let list = deck_list(
            &mtg(),
            &deck(vec![
                card("mainboard", 4, "Island", "dom", "255"),
                card("maybeboard", 1, "Opt", "dom", "60"),
                card("commander", 1, "Chromium, the Mutable", "m19", "214"),
            ])
            .content,
        );
        assert_eq!(
            text::render(&list),
            "Commander\n1 Chromium, the Mutable (M19) 214\n\nDeck\n4 Island (DOM) 255\n"
        );
    }

    fn input(name: Option<&str>) -> CardLineInput {
        CardLineInput {
            section: "mainboard".into(),
            quantity: 2,
            foil: true,
            identifier: CardIdentifier {
                name: name.map(str::to_owned),
                ..CardIdentifier::default()
            },
        }
    }

    #[test]
    fn an_unresolved_entry_with_a_name_exports_by_name_with_a_warning() {
        let mut warnings = Vec::new();
        let line = list_line(
            &input(Some(" Lightnig Bolt ")),
            Outcome::Unresolved(UnresolvedReason::NotFound),
            "cards[3]",
            &mut warnings,
        );
        assert_eq!(
            line,
            Some(ListLine {
                quantity: 2,
                name: "Lightnig Bolt".into(),
                printing: None,
                foil: true
            })
        );
        assert_eq!(warnings, [r#"cards[3]: no card named "Lightnig Bolt""#]);
    }

    #[test]
    fn an_unresolved_entry_without_a_name_is_left_out_with_a_warning() {
        let mut warnings = Vec::new();
        let mut nameless = input(None);
        nameless.identifier.variant_id = Some("abc".into());
        assert_eq!(
            list_line(
                &nameless,
                Outcome::Unresolved(UnresolvedReason::NotFound),
                "cards[0]",
                &mut warnings
            ),
            None
        );
        assert_eq!(
            list_line(
                &input(None),
                Outcome::Unresolved(UnresolvedReason::Empty),
                "cards[1]",
                &mut warnings
            ),
            None
        );
        assert_eq!(
            warnings,
            [
                r#"cards[0]: no card matches variantId "abc"; left out"#,
                "cards[1]: no card identifier given; left out"
            ]
        );
    }

    #[test]
    fn payload_bounds_are_those_of_a_deck_write() {
        let mut bad = input(Some("Opt"));
        bad.section = "tokens".into();
        bad.quantity = 0;
        let payload = ExportPayload {
            name: Some("n".repeat(256)),
            content: PayloadContent::Cards(vec![input(Some("Opt")), bad]),
        };
        let fields: Vec<String> = check_payload(&mtg(), &payload)
            .unwrap_err()
            .0
            .into_iter()
            .map(|v| v.field)
            .collect();
        assert_eq!(
            fields,
            [
                "deck_payload.name",
                "deck_payload.cards[1].section",
                "deck_payload.cards[1].quantity"
            ]
        );
    }
}
