//! Sideboard guides in memory, with the PostgreSQL adapter's promises: writes of one guide
//! serialise (the store's mutex), and `refresh_has_sideboard_guide` is the one writer of a
//! deck's `has_sideboard_guide`.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use deckhand_domain::decks::{DeckId, Page};
use deckhand_domain::events::EventRecord;
use deckhand_domain::identity::UserId;
use deckhand_domain::sideboards::events as guide_events;
use deckhand_domain::sideboards::ports::{
    GuideReviser, MatchupReviser, NewGuide, NewMatchup, ReviseGuideError, ReviseMatchupError,
    SideboardGuideRepository,
};
use deckhand_domain::sideboards::{
    AttachedDeck, GuideDetail, GuideId, GuideQuery, Matchup, MatchupId, PrimaryDeckSummary,
    SideboardGuide,
};
use time::OffsetDateTime;

use crate::list;
use crate::{State, Store};

#[derive(Debug, Default)]
pub(crate) struct Tables {
    guides: HashMap<GuideId, Stored>,
    likes: HashSet<(GuideId, UserId)>,
}

#[derive(Debug)]
struct Stored {
    /// The guide row: `author.username` as of the insert, summary and count unset.
    guide: SideboardGuide,
    /// In attach order; the primary deck first.
    decks: Vec<DeckId>,
    matchups: Vec<Matchup>,
}

/// The one place a deck's `has_sideboard_guide` is written in memory: whether a non-archived
/// guide has it attached.
fn refresh_has_sideboard_guide(state: &mut State, decks: &[DeckId]) {
    for deck in decks {
        let attached = state
            .sideboards
            .guides
            .values()
            .any(|stored| !stored.guide.is_archived && stored.decks.contains(deck));
        state.decks.set_has_sideboard_guide(*deck, attached);
    }
}

/// The guide as a read joins it: the author's current username, the primary deck's current
/// visibility and (when asked) summary, the matchup count.
fn read(state: &State, stored: &Stored, with_summary: bool) -> anyhow::Result<SideboardGuide> {
    let mut guide = stored.guide.clone();
    guide.author.username = state
        .identity
        .username_of(guide.author.id)
        .ok_or_else(|| anyhow::anyhow!("guide {} has no owner", guide.id))?;
    let primary = state
        .decks
        .deck(guide.primary_deck)
        .ok_or_else(|| anyhow::anyhow!("guide {} has no primary deck", guide.id))?;
    guide.primary_deck_visibility = primary.content.visibility;
    guide.primary_summary = with_summary.then(|| PrimaryDeckSummary {
        featured_cards: primary.facts.summary.featured_cards.clone(),
        colors: primary.facts.summary.colors.clone(),
    });
    guide.matchup_count = u32::try_from(stored.matchups.len()).unwrap_or(u32::MAX);
    Ok(guide)
}

fn detail(state: &State, stored: &Stored) -> anyhow::Result<GuideDetail> {
    let guide = read(state, stored, true)?;
    let decks = stored
        .decks
        .iter()
        .map(|id| {
            let deck = state
                .decks
                .deck(*id)
                .ok_or_else(|| anyhow::anyhow!("guide {} has a missing deck {id}", guide.id))?;
            Ok(AttachedDeck {
                id: *id,
                name: deck.content.name.clone(),
                owner: deck.facts.author.id,
                visibility: deck.content.visibility,
                is_primary: *id == guide.primary_deck,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let mut matchups = stored.matchups.clone();
    matchups.sort_by(|a, b| {
        (a.content.sort_order, a.created_at, a.id).cmp(&(b.content.sort_order, b.created_at, b.id))
    });
    Ok(GuideDetail {
        guide,
        decks,
        matchups,
    })
}

pub(crate) struct MemorySideboardGuides(pub(crate) Store);

impl Tables {
    pub(crate) fn guide(&self, id: GuideId) -> Option<&SideboardGuide> {
        self.guides.get(&id).map(|stored| &stored.guide)
    }
}

impl MemorySideboardGuides {
    /// Runs `change` on a guide, marks it edited at the event's time and records `event`;
    /// `None` when there is no guide.
    fn edit<T>(
        state: &mut State,
        id: GuideId,
        event: &EventRecord,
        change: impl FnOnce(&mut Stored) -> T,
    ) -> Option<T> {
        let stored = state.sideboards.guides.get_mut(&id)?;
        let outcome = change(stored);
        stored.guide.updated_at = event.occurred_at;
        state.events.record(event);
        Some(outcome)
    }
}

#[async_trait]
impl SideboardGuideRepository for MemorySideboardGuides {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, new: &NewGuide) -> anyhow::Result<GuideDetail> {
        let mut state = self.0.lock();
        let username = state
            .identity
            .username_of(new.owner)
            .ok_or_else(|| anyhow::anyhow!("no user {} to own a guide", new.owner))?;
        let primary = state
            .decks
            .deck(new.primary_deck)
            .ok_or_else(|| anyhow::anyhow!("no deck {} for a guide", new.primary_deck))?;
        if state.sideboards.guides.contains_key(&new.id) {
            anyhow::bail!("guide {} already exists", new.id);
        }
        let guide = SideboardGuide {
            id: new.id,
            game: new.game.clone(),
            author: deckhand_domain::decks::Author {
                id: new.owner,
                username,
            },
            content: new.content.clone(),
            primary_deck: new.primary_deck,
            primary_deck_visibility: primary.content.visibility,
            primary_summary: None,
            matchup_count: 0,
            pageviews: 0,
            likes: 0,
            is_archived: false,
            created_at: new.created_at,
            updated_at: new.created_at,
        };
        let matchups = new
            .matchups
            .iter()
            .map(|matchup| Matchup {
                id: matchup.id,
                guide_id: new.id,
                content: matchup.content.clone(),
                created_at: new.created_at,
            })
            .collect();
        state.sideboards.guides.insert(
            new.id,
            Stored {
                guide,
                decks: vec![new.primary_deck],
                matchups,
            },
        );
        refresh_has_sideboard_guide(&mut state, &[new.primary_deck]);
        state.events.record(&new.event);
        let stored = &state.sideboards.guides[&new.id];
        detail(&state, stored)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find(&self, id: GuideId) -> anyhow::Result<Option<SideboardGuide>> {
        let state = self.0.lock();
        state
            .sideboards
            .guides
            .get(&id)
            .map(|stored| read(&state, stored, false))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn detail(&self, id: GuideId) -> anyhow::Result<Option<GuideDetail>> {
        let state = self.0.lock();
        state
            .sideboards
            .guides
            .get(&id)
            .map(|stored| detail(&state, stored))
            .transpose()
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id))]
    async fn revise(
        &self,
        id: GuideId,
        reviser: GuideReviser,
    ) -> Result<GuideDetail, ReviseGuideError> {
        let mut state = self.0.lock();
        let current = match state.sideboards.guides.get(&id) {
            Some(stored) => read(&state, stored, false)?,
            None => return Err(ReviseGuideError::NotFound),
        };
        let revision = reviser(&current);
        state
            .events
            .record(&guide_events::saved(&current, &revision));
        let stored = state
            .sideboards
            .guides
            .get_mut(&id)
            .ok_or(ReviseGuideError::NotFound)?;
        stored.guide.content = revision.content;
        stored.guide.is_archived = revision.is_archived;
        stored.guide.updated_at = revision.at;
        if revision.is_archived != current.is_archived {
            let attached = stored.decks.clone();
            refresh_has_sideboard_guide(&mut state, &attached);
        }
        Ok(detail(&state, &state.sideboards.guides[&id])?)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, query: &GuideQuery) -> anyhow::Result<Page<SideboardGuide>> {
        let state = self.0.lock();
        let found: Vec<&Stored> = state
            .sideboards
            .guides
            .values()
            .filter(|stored| query.admits(&stored.guide, &stored.decks, &stored.matchups))
            .collect();
        list::page(
            found,
            query.order,
            query.page,
            |a, b| query.sort.compare(&a.guide, &b.guide),
            |stored| {
                // Lists never show the long texts (as the PostgreSQL adapter leaves them out).
                let mut guide = read(&state, stored, query.with_summary)?;
                guide.content.description.clear();
                guide.content.notes.clear();
                Ok(guide)
            },
        )
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, deck = %deck))]
    async fn attach(&self, id: GuideId, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        if state.decks.deck(deck).is_none() {
            anyhow::bail!("no deck {deck} to attach");
        }
        let stored = state
            .sideboards
            .guides
            .get(&id)
            .ok_or_else(|| anyhow::anyhow!("no guide {id} to attach to"))?;
        if stored.decks.contains(&deck) {
            return Ok(false);
        }
        Self::edit(&mut state, id, event, |stored| stored.decks.push(deck));
        refresh_has_sideboard_guide(&mut state, &[deck]);
        Ok(true)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, deck = %deck))]
    async fn detach(&self, id: GuideId, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        let detachable = state.sideboards.guides.get(&id).is_some_and(|stored| {
            stored.guide.primary_deck != deck && stored.decks.contains(&deck)
        });
        if !detachable {
            return Ok(false);
        }
        Self::edit(&mut state, id, event, |stored| {
            stored.decks.retain(|attached| *attached != deck);
        });
        refresh_has_sideboard_guide(&mut state, &[deck]);
        Ok(true)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id))]
    async fn add_matchup(
        &self,
        id: GuideId,
        matchup: &NewMatchup,
        event: &EventRecord,
    ) -> anyhow::Result<Matchup> {
        let mut state = self.0.lock();
        let added = Matchup {
            id: matchup.id,
            guide_id: id,
            content: matchup.content.clone(),
            created_at: event.occurred_at,
        };
        Self::edit(&mut state, id, event, |stored| {
            stored.matchups.push(added.clone())
        })
        .ok_or_else(|| anyhow::anyhow!("no guide {id} for a matchup"))?;
        Ok(added)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, matchup = %matchup))]
    async fn revise_matchup(
        &self,
        id: GuideId,
        matchup: MatchupId,
        reviser: MatchupReviser,
        event: &EventRecord,
    ) -> Result<Matchup, ReviseMatchupError> {
        let mut state = self.0.lock();
        let exists = state
            .sideboards
            .guides
            .get(&id)
            .is_some_and(|stored| stored.matchups.iter().any(|m| m.id == matchup));
        if !exists {
            return Err(ReviseMatchupError::NotFound);
        }
        Self::edit(&mut state, id, event, |stored| {
            stored
                .matchups
                .iter_mut()
                .find(|m| m.id == matchup)
                .map(|stored| {
                    stored.content = reviser(&stored.content);
                    stored.clone()
                })
        })
        .flatten()
        .ok_or(ReviseMatchupError::NotFound)
    }

    #[tracing::instrument(level = "debug", skip(self))]
    async fn set_like(
        &self,
        id: GuideId,
        game: &str,
        user: UserId,
        liked: bool,
        _at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        let tables = &mut state.sideboards;
        let Some(stored) = tables
            .guides
            .get_mut(&id)
            .filter(|stored| stored.guide.game == game && stored.guide.is_visible_to(Some(user)))
        else {
            return Ok(false);
        };
        crate::set_like(
            &mut tables.likes,
            (id, user),
            liked,
            &mut stored.guide.likes,
        );
        Ok(true)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(guide = %id, matchup = %matchup))]
    async fn delete_matchup(
        &self,
        id: GuideId,
        matchup: MatchupId,
        event: &EventRecord,
    ) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        let exists = state
            .sideboards
            .guides
            .get(&id)
            .is_some_and(|stored| stored.matchups.iter().any(|m| m.id == matchup));
        if exists {
            Self::edit(&mut state, id, event, |stored| {
                stored.matchups.retain(|m| m.id != matchup);
            });
        }
        Ok(exists)
    }
}
