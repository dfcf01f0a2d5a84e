//! Decks in memory, with the same promises as the PostgreSQL adapter: the provenance triple is
//! unique per owner, saves of one deck serialise (the store's mutex), views dedupe atomically.

use std::collections::{BTreeMap, HashMap, HashSet};

use async_trait::async_trait;
use deckhand_domain::decks::card_search::{CardStatsQuery, CardUsage, counted_copies};
use deckhand_domain::decks::events as deck_events;
use deckhand_domain::decks::ports::{
    DeckRepository, InsertDeckError, NewDeck, ReviseDeckError, Reviser, ViewCount,
};
use deckhand_domain::decks::trending::{self, UNVIEWED};
use deckhand_domain::decks::{
    Author, Deck, DeckGuide, DeckId, DeckListing, DeckOverview, DeckQuery, DeckReader, DeckVersion,
    ForkOrigin, Page, Provenance, SourceAccess,
};
use deckhand_domain::events::EventRecord;
use deckhand_domain::identity::UserId;
use deckhand_domain::readable::Readable;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::list;
use crate::{State, Store};

#[derive(Debug, Default)]
pub(crate) struct Tables {
    decks: HashMap<DeckId, Stored>,
    guides: HashMap<DeckId, DeckGuide>,
    views: HashMap<(DeckId, [u8; 32]), OffsetDateTime>,
    likes: HashSet<(DeckId, UserId)>,
}

#[derive(Debug)]
struct Stored {
    deck: Deck,
    versions: Vec<DeckVersion>,
    trending: f64,
}

/// The key the provenance uniqueness applies to, when an external id is given.
fn provenance_key(
    owner: UserId,
    provenance: &Provenance,
) -> Option<(UserId, String, String, String)> {
    provenance.source_external_id.as_ref().map(|external_id| {
        (
            owner,
            provenance.source_provider.clone(),
            external_id.clone(),
            provenance
                .source_external_version
                .clone()
                .unwrap_or_default(),
        )
    })
}

impl Tables {
    /// A stored deck (its author's username as of the insert), for the joins of the sideboard
    /// guide store.
    pub(crate) fn deck(&self, id: DeckId) -> Option<&Deck> {
        self.decks.get(&id).map(|stored| &stored.deck)
    }

    /// Only `sideboards::refresh_has_sideboard_guide` calls this: it decides the flag.
    pub(crate) fn set_has_sideboard_guide(&mut self, id: DeckId, value: bool) {
        if let Some(stored) = self.decks.get_mut(&id) {
            stored.deck.facts.has_sideboard_guide = value;
        }
    }

    /// What the read rule needs to know of deck `id` now, as a fork of it reads it.
    fn source_access(&self, id: DeckId) -> Option<SourceAccess> {
        self.decks.get(&id).map(|stored| SourceAccess {
            visibility: stored.deck.content.visibility,
            owner: stored.deck.facts.author.id,
            is_archived: stored.deck.is_archived,
        })
    }

    fn provenance_taken(
        &self,
        owner: UserId,
        provenance: &Provenance,
        except: Option<DeckId>,
    ) -> bool {
        let Some(key) = provenance_key(owner, provenance) else {
            return false;
        };
        self.decks.values().any(|stored| {
            Some(stored.deck.facts.id) != except
                && provenance_key(stored.deck.facts.author.id, &stored.deck.provenance).as_ref()
                    == Some(&key)
        })
    }
}

/// The deck with its author's current username and its fork source as it is now, as a join
/// would give them.
fn read(state: &State, stored: &Stored) -> anyhow::Result<Deck> {
    let mut deck = stored.deck.clone();
    as_of_now(
        state,
        deck.facts.id,
        &mut deck.facts.author,
        deck.facts.fork.as_mut(),
    )?;
    Ok(deck)
}

/// What a list shows of a stored deck, copied without its cards.
fn read_listing(state: &State, stored: &Stored) -> anyhow::Result<DeckListing> {
    let mut listing = stored.deck.listing();
    as_of_now(
        state,
        listing.facts.id,
        &mut listing.facts.author,
        listing.facts.fork.as_mut(),
    )?;
    Ok(listing)
}

/// What a detail shows of a stored deck when its cards are not expanded, copied without them.
fn read_overview(state: &State, stored: &Stored) -> anyhow::Result<DeckOverview> {
    let mut overview = stored.deck.overview();
    let listing = &mut overview.listing;
    as_of_now(
        state,
        listing.facts.id,
        &mut listing.facts.author,
        listing.facts.fork.as_mut(),
    )?;
    Ok(overview)
}

/// Fills in what a stored deck shows but other tables own: its owner's current username and
/// what the reader may know of the deck it was forked from.
fn as_of_now(
    state: &State,
    id: DeckId,
    author: &mut Author,
    fork: Option<&mut ForkOrigin>,
) -> anyhow::Result<()> {
    author.username = state
        .identity
        .username_of(author.id)
        .ok_or_else(|| anyhow::anyhow!("deck {id} has no owner"))?;
    if let Some(fork) = fork {
        fork.access = state.decks.source_access(fork.source.deck_id);
    }
    Ok(())
}

pub(crate) struct MemoryDecks(pub(crate) Store);

#[async_trait]
impl DeckRepository for MemoryDecks {
    #[tracing::instrument(level = "debug", skip_all, fields(deck = %new.id))]
    async fn insert(&self, new: &NewDeck) -> Result<Deck, InsertDeckError> {
        let mut state = self.0.lock();
        let username = state
            .identity
            .username_of(new.owner)
            .ok_or_else(|| anyhow::anyhow!("no user {} to own a deck", new.owner))?;
        if state
            .decks
            .provenance_taken(new.owner, &new.provenance, None)
        {
            return Err(InsertDeckError::DuplicateProvenance);
        }
        if state.decks.decks.contains_key(&new.id) {
            return Err(anyhow::anyhow!("deck {} already exists", new.id).into());
        }
        if let Some(forked_from) = new.forked_from {
            state
                .decks
                .decks
                .get_mut(&forked_from.deck_id)
                .ok_or_else(|| anyhow::anyhow!("no deck {} to fork", forked_from.deck_id))?
                .deck
                .facts
                .forks += 1;
        }
        let source = new
            .forked_from
            .and_then(|forked_from| state.decks.source_access(forked_from.deck_id));
        let deck = new.as_inserted(username, source);
        let first = new.first_version();
        state.decks.decks.insert(
            new.id,
            Stored {
                deck: deck.clone(),
                versions: vec![first],
                trending: UNVIEWED,
            },
        );
        state.events.record(&new.event);
        Ok(deck)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %id))]
    async fn find(&self, id: DeckId) -> anyhow::Result<Option<Deck>> {
        let state = self.0.lock();
        state
            .decks
            .decks
            .get(&id)
            .map(|stored| read(&state, stored))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn find_overview(&self, id: DeckId) -> anyhow::Result<Option<DeckOverview>> {
        let state = self.0.lock();
        state
            .decks
            .decks
            .get(&id)
            .map(|stored| read_overview(&state, stored))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %id))]
    async fn revise(&self, id: DeckId, reviser: Reviser) -> Result<Deck, ReviseDeckError> {
        let mut state = self.0.lock();
        let current = match state.decks.decks.get(&id) {
            Some(stored) => read(&state, stored)?,
            None => return Err(ReviseDeckError::NotFound),
        };
        let revision = reviser(&current).map_err(ReviseDeckError::Refused)?;
        let event = deck_events::saved(&current, &revision);
        if state
            .decks
            .provenance_taken(current.facts.author.id, &revision.provenance, Some(id))
        {
            return Err(ReviseDeckError::DuplicateProvenance);
        }
        let stored = state
            .decks
            .decks
            .get_mut(&id)
            .ok_or(ReviseDeckError::NotFound)?;
        let deck = &mut stored.deck;
        deck.content = revision.content.clone();
        deck.facts.summary = revision.summary.clone();
        deck.provenance = revision.provenance;
        deck.is_archived = revision.is_archived;
        deck.version += 1;
        deck.facts.updated_at = revision.at;
        stored.versions.push(DeckVersion {
            version_number: deck.version,
            history_type: revision.history_type,
            content: revision.content,
            summary: revision.summary,
            edited_at: revision.at,
        });
        let mut saved = stored.deck.clone();
        saved.facts.author = current.facts.author;
        saved.facts.fork = current.facts.fork;
        state.events.record(&event);
        Ok(saved)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %id))]
    async fn versions(&self, id: DeckId) -> anyhow::Result<Vec<DeckVersion>> {
        let state = self.0.lock();
        Ok(state
            .decks
            .decks
            .get(&id)
            .map(|stored| stored.versions.clone())
            .unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %id))]
    async fn version(&self, id: DeckId, number: i32) -> anyhow::Result<Option<DeckVersion>> {
        let state = self.0.lock();
        Ok(state.decks.decks.get(&id).and_then(|stored| {
            stored
                .versions
                .iter()
                .find(|version| version.version_number == number)
                .cloned()
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, query: &DeckQuery) -> anyhow::Result<Page<DeckListing>> {
        let state = self.0.lock();
        let game = state.catalog.game(&query.game);
        let holds_cards = |deck: &Deck| {
            !query.filters.filters_cards()
                || game.is_some_and(|game| {
                    query
                        .filters
                        .admits_cards(&counted_copies(game, &deck.content.cards))
                })
        };
        let found: Vec<&Stored> = state
            .decks
            .decks
            .values()
            .filter(|stored| query.admits(&stored.deck) && holds_cards(&stored.deck))
            .collect();
        list::page(
            found,
            query.order,
            query.page,
            |a, b| {
                query
                    .sort
                    .compare((&a.deck, a.trending), (&b.deck, b.trending))
            },
            |stored| read_listing(&state, stored),
        )
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = %query.game))]
    async fn card_usage(&self, query: &CardStatsQuery) -> anyhow::Result<CardUsage> {
        let as_of = OffsetDateTime::now_utc();
        let state = self.0.lock();
        let Some(game) = state.catalog.game(&query.game) else {
            return Ok(CardUsage::gather(query.card, [], as_of));
        };
        // The decks anyone may find in a list: public and not archived.
        let readable = Readable::listed(None);
        let decks: Vec<BTreeMap<Uuid, u32>> = state
            .decks
            .decks
            .values()
            .map(|stored| &stored.deck)
            .filter(|deck| deck.facts.game == query.game && deck.is_readable(readable))
            .filter(|deck| {
                query
                    .format
                    .is_none_or(|format| deck.content.format_id == Some(format))
            })
            .map(|deck| counted_copies(game, &deck.content.cards))
            .collect();
        Ok(CardUsage::gather(query.card, &decks, as_of))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %id))]
    async fn count_view(
        &self,
        id: DeckId,
        reader: &DeckReader,
        visitor: &[u8; 32],
        now: OffsetDateTime,
        window: Duration,
        trending_weight: f64,
    ) -> anyhow::Result<Option<ViewCount>> {
        let mut state = self.0.lock();
        let tables = &mut state.decks;
        let Some(stored) = tables.decks.get_mut(&id).filter(|stored| {
            stored.deck.facts.game == reader.game && stored.deck.is_visible_to(reader.viewer)
        }) else {
            return Ok(None);
        };
        let last = tables.views.get(&(id, *visitor)).copied();
        let counts = last.is_none_or(|last| last <= now - window);
        if counts {
            tables.views.insert((id, *visitor), now);
            stored.deck.facts.pageviews += 1;
            stored.trending = trending::add_view(stored.trending, trending_weight);
        }
        Ok(Some(ViewCount {
            pageviews: stored.deck.facts.pageviews,
            incremented: counts,
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn set_like(
        &self,
        id: DeckId,
        reader: &DeckReader,
        user: UserId,
        liked: bool,
        _at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        let tables = &mut state.decks;
        let Some(stored) = tables.decks.get_mut(&id).filter(|stored| {
            stored.deck.facts.game == reader.game && stored.deck.is_visible_to(reader.viewer)
        }) else {
            return Ok(false);
        };
        crate::set_like(
            &mut tables.likes,
            (id, user),
            liked,
            &mut stored.deck.facts.likes,
        );
        Ok(true)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %deck))]
    async fn guide(&self, deck: DeckId) -> anyhow::Result<Option<DeckGuide>> {
        Ok(self.0.lock().decks.guides.get(&deck).cloned())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %guide.deck_id))]
    async fn put_guide(
        &self,
        guide: &DeckGuide,
        event: &EventRecord,
    ) -> anyhow::Result<(DeckGuide, bool)> {
        let mut state = self.0.lock();
        let tables = &mut state.decks;
        let stored = tables
            .decks
            .get_mut(&guide.deck_id)
            .ok_or_else(|| anyhow::anyhow!("no deck {} for a guide", guide.deck_id))?;
        stored.deck.facts.has_guide = true;
        let (kept, created) = match tables.guides.get(&guide.deck_id) {
            Some(existing) => (
                DeckGuide {
                    id: existing.id,
                    created_at: existing.created_at,
                    ..guide.clone()
                },
                false,
            ),
            None => (guide.clone(), true),
        };
        tables.guides.insert(guide.deck_id, kept.clone());
        state.events.record(event);
        Ok((kept, created))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(deck = %deck))]
    async fn delete_guide(&self, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        let tables = &mut state.decks;
        let deleted = tables.guides.remove(&deck).is_some();
        if let Some(stored) = tables.decks.get_mut(&deck) {
            stored.deck.facts.has_guide &= !deleted;
        }
        if deleted {
            state.events.record(event);
        }
        Ok(deleted)
    }
}

pub(crate) fn prune_views(state: &mut crate::State, before: OffsetDateTime, limit: u32) -> u64 {
    crate::prune_map(&mut state.decks.views, limit, |counted_at| {
        *counted_at <= before
    })
}
