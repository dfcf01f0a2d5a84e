//! Deck use cases: who may see and change a deck, and what a save writes.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use crate::catalog::{CatalogService, Game, Printing};
use crate::events::Origin;
use crate::identity::{Principal, UserId};
use crate::likes::{LikeError, liker};
use crate::patch::Patch;
use crate::system::SystemPorts;
use crate::validation::{FieldViolation, Violations};

use super::card_line::{CardLineInput, QUANTITY_RANGE, check_section};
use super::changes::{CheckedChanges, DeckChanges, DeckPolicy, FeaturedInput};
use super::diff::{self, VersionDiff};
use super::errors::{
    ContentError, CreateDeckError, FindDeckError, ForkError, ListDecksError, PutGuideError,
    RollbackError, SaveDeckError,
};
use super::events;
use super::guide::{DeckGuide, GuideInput, GuideView};
use super::model::{
    CardSnapshot, Deck, DeckCard, DeckContent, DeckId, DeckListing, DeckOverview, DeckReader,
    DeckSummary, DeckVersion, FeaturedCard, FeaturedChoice, FeaturedSlot, ForkOrigin, ForkedFrom,
    HistoryType, Provenance, Visibility,
};
use super::ports::{DeckRepository, NewDeck, Reviser, Revision, RevisionRefused, ViewCount};
use super::query::{DeckFilters, DeckQuery, DeckSort, Page, PageRequest, SortOrder};
use super::trending;

/// What a fork asks for, as the client sent it: the name and visibility are bounded like a
/// create's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForkRequest {
    /// The fork's name; the source's by default.
    pub name: Option<String>,
    /// The fork's visibility; private by default.
    pub visibility: Option<Vec<String>>,
    /// The source's version to copy; its current one by default.
    pub version: Option<i32>,
}

/// A deck's history, oldest first, with where the deck was forked from (its first record's
/// `forked_from`).
#[derive(Debug, Clone, PartialEq)]
pub struct DeckHistory {
    pub fork: Option<ForkOrigin>,
    pub versions: Vec<DeckVersion>,
}

/// Who a view is counted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visitor {
    User(UserId),
    Ip(IpAddr),
}

/// The parameters of a list request, validated at the edge.
#[derive(Debug, Clone, PartialEq)]
pub struct ListRequest {
    pub filters: DeckFilters,
    pub sort: DeckSort,
    pub order: SortOrder,
    pub page: PageRequest,
    /// Whether the page shows its decks' summaries (`include=summary`).
    pub with_summary: bool,
}

#[derive(Clone)]
pub struct DeckService {
    decks: Arc<dyn DeckRepository>,
    catalog: CatalogService,
    system: SystemPorts,
    policy: DeckPolicy,
    /// Keys the visitor hashes of the pageview dedupe; the same on every instance.
    visitor_key: [u8; 32],
}

impl DeckService {
    pub fn new(
        decks: Arc<dyn DeckRepository>,
        catalog: CatalogService,
        system: SystemPorts,
        policy: DeckPolicy,
        visitor_key: [u8; 32],
    ) -> Self {
        Self {
            decks,
            catalog,
            system,
            policy,
            visitor_key,
        }
    }

    pub fn policy(&self) -> &DeckPolicy {
        &self.policy
    }

    /// Creates a deck owned by the caller (a partner-only caller: its `created_by` user).
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn create(
        &self,
        principal: &Principal,
        game: &Game,
        changes: DeckChanges,
    ) -> Result<Deck, CreateDeckError> {
        let owner = principal.acting_user().ok_or(CreateDeckError::NoUser)?;
        let mut checked = changes.check(&self.policy, true)?;
        self.check_format(game, &mut checked).await?;
        let (cards, featured) = self.resolve(game, &changes).await?;
        let now = self.system.clock.now();
        let content = DeckContent {
            name: checked.name.clone().unwrap_or_default(),
            notes: checked.notes.clone().unwrap_or_default(),
            visibility: checked.visibility.unwrap_or(Visibility::Private),
            format_id: checked.format.clone().into_value(),
            youtube_url: checked.youtube_url.clone().into_value(),
            thumbnail: checked.thumbnail.clone().into_value(),
            legal: checked.legal.unwrap_or(false),
            archetype: checked.archetype.clone().into_value(),
            cards: cards.unwrap_or_default(),
            featured: featured.into_value(),
        };
        let id = DeckId(self.system.ids.new_id());
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let new = NewDeck {
            id,
            game: game.slug.clone(),
            owner,
            summary: summarize(game, &content),
            content,
            provenance: apply_provenance(Provenance::manual(), &checked, now),
            forked_from: None,
            created_at: now,
            event: events::created(&origin, &game.slug, id, None, now),
        };
        Ok(self.decks.insert(&new).await?)
    }

    /// Copies a deck the caller may see, at its current version or `request.version`, into a
    /// new deck of the caller's user: the content but the visibility (private unless asked),
    /// and the name when one is given; no counters, provenance or archive state. The new deck
    /// names its source, and the source's `forks` counter moves in the same write.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn fork(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        request: ForkRequest,
    ) -> Result<Deck, ForkError> {
        let owner = principal
            .user
            .as_ref()
            .map(|user| user.id)
            .ok_or(ForkError::NoUser)?;
        let checked = DeckChanges {
            name: request.name,
            visibility: request.visibility,
            ..DeckChanges::default()
        }
        .check_bounds(&self.policy)?;
        let source = self.get(principal, game, id).await?;
        let (version, mut content) = match request.version {
            Some(number) => {
                let version = self.stored_version(id, number).await?;
                (version.version_number, version.content)
            }
            None => (source.version, source.content),
        };
        content.visibility = checked.visibility.unwrap_or(Visibility::Private);
        if let Some(name) = checked.name {
            content.name = name;
        }
        let fork = DeckId(self.system.ids.new_id());
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let forked_from = ForkedFrom {
            deck_id: id,
            version,
        };
        let now = self.system.clock.now();
        let new = NewDeck {
            id: fork,
            game: game.slug.clone(),
            owner,
            summary: summarize(game, &content),
            content,
            provenance: Provenance::manual(),
            forked_from: Some(forked_from),
            created_at: now,
            event: events::created(&origin, &game.slug, fork, Some(forked_from), now),
        };
        Ok(self.decks.insert(&new).await?)
    }

    /// A deck of `game` the caller may see.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn get(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
    ) -> Result<Deck, FindDeckError> {
        let viewer = principal.acting_user();
        self.find_in(game, id, |deck| deck.is_visible_to(viewer))
            .await
    }

    /// A deck of `game` the caller may see, without its card lines: what a detail shows
    /// unless it expands the cards. The same rules as [`Self::get`].
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn overview(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
    ) -> Result<DeckOverview, FindDeckError> {
        let viewer = principal.acting_user();
        match self.decks.find_overview(id).await? {
            Some(deck) if deck.listing.facts.game == game.slug && deck.is_visible_to(viewer) => {
                Ok(deck)
            }
            _ => Err(FindDeckError::NotFound),
        }
    }

    /// Applies a PATCH: owner only, one version and one history record per save.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn update(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        changes: DeckChanges,
        if_match: Option<i32>,
    ) -> Result<Deck, SaveDeckError> {
        let mut checked = changes.check(&self.policy, false)?;
        self.check_format(game, &mut checked).await?;
        let (cards, featured) = self.resolve(game, &changes).await?;
        let writer = principal.acting_user();
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let game = game.clone();
        let now = self.system.clock.now();
        let reviser: Reviser = Box::new(move |deck: &Deck| {
            ensure_writable(deck, &game, writer, if_match)?;
            let mut content = deck.content.clone();
            apply_content(&mut content, &checked, cards.clone(), featured.clone());
            Ok(Revision {
                summary: summarize(&game, &content),
                content,
                provenance: apply_provenance(deck.provenance.clone(), &checked, now),
                is_archived: checked.is_archived.unwrap_or(deck.is_archived),
                history_type: HistoryType::Update,
                at: now,
                origin: origin.clone(),
            })
        });
        Ok(self.decks.revise(id, reviser).await?)
    }

    /// The history, oldest first, of a deck the caller may see.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn versions(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
    ) -> Result<DeckHistory, FindDeckError> {
        let deck = self.get(principal, game, id).await?;
        Ok(DeckHistory {
            fork: deck.facts.fork,
            versions: self.decks.versions(id).await?,
        })
    }

    /// Version `number` of a deck the caller may see.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id, number))]
    pub async fn version(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        number: i32,
    ) -> Result<DeckVersion, FindDeckError> {
        self.get(principal, game, id).await?;
        self.stored_version(id, number).await
    }

    /// What changed from version `from` to version `to` of a deck the caller may see.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id, from, to))]
    pub async fn diff(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        from: i32,
        to: i32,
    ) -> Result<VersionDiff, FindDeckError> {
        self.get(principal, game, id).await?;
        let from = self.stored_version(id, from).await?;
        let to = self.stored_version(id, to).await?;
        Ok(diff::between(game, &from, &to))
    }

    /// What changed from deck `id` to deck `other`, each at its current version, when the
    /// caller may see both (else `NotFound`): the version diff's function and shape.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id, other = %other))]
    pub async fn compare(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        other: DeckId,
    ) -> Result<VersionDiff, FindDeckError> {
        let from = self.get(principal, game, id).await?;
        let to = self.get(principal, game, other).await?;
        Ok(diff::between(game, &from, &to))
    }

    /// Version `number`, or `NotFound` for a number outside 1..N. Versions are immutable once
    /// written, so reading one outside any lock is safe.
    async fn stored_version(&self, id: DeckId, number: i32) -> Result<DeckVersion, FindDeckError> {
        let version = match number {
            1.. => self.decks.version(id, number).await?,
            _ => None,
        };
        version.ok_or(FindDeckError::NotFound)
    }

    /// Restores the content of version `number` as a new version (forward-saving).
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id, version = number))]
    pub async fn rollback(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        number: i32,
        if_match: Option<i32>,
    ) -> Result<Deck, RollbackError> {
        let version = self.stored_version(id, number).await?;
        let writer = principal.acting_user();
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let game = game.clone();
        let now = self.system.clock.now();
        let reviser: Reviser = Box::new(move |deck: &Deck| {
            ensure_writable(deck, &game, writer, if_match)?;
            Ok(Revision {
                content: version.content.clone(),
                summary: version.summary.clone(),
                provenance: deck.provenance.clone(),
                is_archived: deck.is_archived,
                history_type: HistoryType::Rollback {
                    restored_from: number,
                },
                at: now,
                origin: origin.clone(),
            })
        });
        Ok(self.decks.revise(id, reviser).await?)
    }

    /// A page of the decks of `game` the caller may see; archived decks are left out. The
    /// forks of a deck are listed only to callers who may see that deck: a list must not tell
    /// which decks were forked from one hidden from its reader.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn list(
        &self,
        principal: &Principal,
        game: &Game,
        request: ListRequest,
    ) -> Result<Page<DeckListing>, ListDecksError> {
        self.check_card_filters(game, &request.filters).await?;
        if let Some(source) = request.filters.forked_from {
            match self.overview(principal, game, source).await {
                Ok(_) => {}
                Err(FindDeckError::Unexpected(error)) => return Err(error.into()),
                Err(_) => return Ok(Page::with_capped_total(Vec::new(), 0)),
            }
        }
        self.decks
            .list(&DeckQuery {
                game: game.slug.clone(),
                viewer: principal.acting_user(),
                filters: request.filters,
                sort: request.sort,
                order: request.order,
                page: request.page,
                with_summary: request.with_summary,
            })
            .await
            .map_err(Into::into)
    }

    /// Registers a view of a deck the caller may see: the store checks that and counts in one
    /// statement, without reading the deck.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn register_view(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        client_ip: IpAddr,
    ) -> Result<ViewCount, FindDeckError> {
        let reader = DeckReader {
            game: game.slug.clone(),
            viewer: principal.acting_user(),
        };
        let visitor = match principal.user.as_ref() {
            Some(user) => Visitor::User(user.id),
            None => Visitor::Ip(client_ip),
        };
        let now = self.system.clock.now();
        self.decks
            .count_view(
                id,
                &reader,
                &self.visitor_hash(visitor),
                now,
                self.policy.pageview_window,
                trending::view_weight(now),
            )
            .await?
            .ok_or(FindDeckError::NotFound)
    }

    /// Likes (`liked`) or unlikes a deck the caller may see, as the user of its credentials.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn set_like(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        liked: bool,
    ) -> Result<(), LikeError> {
        let user = liker(principal)?;
        let reader = DeckReader {
            game: game.slug.clone(),
            viewer: Some(user),
        };
        let at = self.system.clock.now();
        if self.decks.set_like(id, &reader, user, liked, at).await? {
            Ok(())
        } else {
            Err(LikeError::NotFound)
        }
    }

    /// The deck's strategy guide as the caller may read it: whole for the owner and premium
    /// users, a preview of a premium guide for everyone else; `None` when it has none.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn guide(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
    ) -> Result<Option<GuideView>, FindDeckError> {
        let deck = self.get(principal, game, id).await?;
        let has_content_access = deck.is_owned_by(principal.acting_user())
            || principal.user.as_ref().is_some_and(|user| user.premium);
        let guide = self.decks.guide(id).await?;
        Ok(guide.map(|guide| guide.view(has_content_access)))
    }

    /// Creates or replaces the deck's guide (owner only); true when it is new.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn put_guide(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
        input: GuideInput,
    ) -> Result<(DeckGuide, bool), PutGuideError> {
        let (content_type, content) = input.check()?;
        self.owned(principal, game, id).await?;
        let now = self.system.clock.now();
        let guide = DeckGuide {
            id: self.system.ids.new_id(),
            deck_id: id,
            content_type,
            content,
            is_premium: input.is_premium,
            created_at: now,
            updated_at: now,
        };
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let event = events::strategy_guide(&origin, &game.slug, id, false, now);
        Ok(self.decks.put_guide(&guide, &event).await?)
    }

    /// Deletes the deck's guide (owner only); `NotFound` when there is none.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %id))]
    pub async fn delete_guide(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
    ) -> Result<(), FindDeckError> {
        self.owned(principal, game, id).await?;
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let now = self.system.clock.now();
        let event = events::strategy_guide(&origin, &game.slug, id, true, now);
        if self.decks.delete_guide(id, &event).await? {
            Ok(())
        } else {
            Err(FindDeckError::NotFound)
        }
    }

    /// A deck of `game` the caller owns; anything else is "not found".
    async fn owned(
        &self,
        principal: &Principal,
        game: &Game,
        id: DeckId,
    ) -> Result<Deck, FindDeckError> {
        let writer = principal.acting_user();
        self.find_in(game, id, |deck| deck.is_owned_by(writer))
            .await
    }

    /// The deck `id` of `game` when `may_access` allows it; anything else is "not found", so
    /// nobody learns of decks they may not touch.
    async fn find_in(
        &self,
        game: &Game,
        id: DeckId,
        may_access: impl Fn(&Deck) -> bool,
    ) -> Result<Deck, FindDeckError> {
        match self.decks.find(id).await? {
            Some(deck) if deck.facts.game == game.slug && may_access(&deck) => Ok(deck),
            _ => Err(FindDeckError::NotFound),
        }
    }

    /// A keyed hash, so stored visitor keys reveal neither addresses nor user ids.
    fn visitor_hash(&self, visitor: Visitor) -> [u8; 32] {
        let text = match visitor {
            Visitor::User(id) => format!("user:{id}"),
            Visitor::Ip(ip) => format!("ip:{ip}"),
        };
        deckhand_auth::hmac_sha256(&self.visitor_key, text.as_bytes())
    }

    /// The format `checked` names, by slug or id as a check takes it, as its id.
    async fn check_format(
        &self,
        game: &Game,
        checked: &mut CheckedChanges,
    ) -> Result<(), ContentError> {
        checked.format = match &checked.format_reference {
            Patch::Set(reference) => match self.catalog.format(game, reference).await? {
                Some(format) => Patch::Set(format.id),
                None => {
                    let message = format!("{} has no format {reference}", game.slug);
                    return Err(Violations(vec![FieldViolation::new(
                        "format", "unknown", message,
                    )])
                    .into());
                }
            },
            Patch::Clear => Patch::Clear,
            Patch::Keep => Patch::Keep,
        };
        Ok(())
    }

    /// Resolves the card lines and featured cards that `changes` sets.
    #[allow(clippy::type_complexity)]
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    async fn resolve(
        &self,
        game: &Game,
        changes: &DeckChanges,
    ) -> Result<(Option<Vec<DeckCard>>, Patch<Vec<FeaturedChoice>>), ContentError> {
        let cards = match &changes.cards {
            Some(lines) => Some(self.resolve_lines(game, lines).await?),
            None => None,
        };
        let featured = match &changes.featured {
            Patch::Set(choices) => Patch::Set(self.resolve_featured(game, choices).await?),
            Patch::Clear => Patch::Clear,
            Patch::Keep => Patch::Keep,
        };
        Ok((cards, featured))
    }

    async fn resolve_lines(
        &self,
        game: &Game,
        lines: &[CardLineInput],
    ) -> Result<Vec<DeckCard>, ContentError> {
        let mut violations = Violations::default();
        for (index, line) in lines.iter().enumerate() {
            violations.check(check_section(
                game,
                format!("cards[{index}].section"),
                &line.section,
            ));
        }
        violations.into_result(())?;
        let identifiers: Vec<_> = lines.iter().map(|line| line.identifier.clone()).collect();
        let printings = self.resolve_all(game, &identifiers, "cards").await?;
        // The same section, printing and foil given twice is one line with the summed quantity.
        let mut merged: Vec<DeckCard> = Vec::new();
        for (line, printing) in lines.iter().zip(printings) {
            let snapshot = snapshot(printing);
            match merged.iter_mut().find(|card| {
                card.section == line.section
                    && card.foil == line.foil
                    && card.card.variant_id == snapshot.variant_id
            }) {
                Some(card) => card.quantity += line.quantity,
                None => merged.push(DeckCard {
                    section: line.section.clone(),
                    quantity: line.quantity,
                    foil: line.foil,
                    card: snapshot,
                }),
            }
        }
        if let Some(card) = merged
            .iter()
            .find(|card| !QUANTITY_RANGE.contains(&card.quantity))
        {
            let message = format!(
                "{} copies of {} in {} exceed {}",
                card.quantity,
                card.card.name,
                card.section,
                QUANTITY_RANGE.end()
            );
            return Err(Violations(vec![FieldViolation::new("cards", "range", message)]).into());
        }
        Ok(merged)
    }

    async fn resolve_featured(
        &self,
        game: &Game,
        choices: &[FeaturedInput],
    ) -> Result<Vec<FeaturedChoice>, ContentError> {
        let identifiers: Vec<_> = choices
            .iter()
            .map(|choice| choice.identifier.clone())
            .collect();
        let printings = self.resolve_all(game, &identifiers, "featured").await?;
        Ok(choices
            .iter()
            .zip(printings)
            .map(|(choice, printing)| FeaturedChoice {
                slot: choice.slot,
                foil: choice.foil,
                card: snapshot(printing),
            })
            .collect())
    }

    /// One printing per identifier, in order, or every unresolved one.
    async fn resolve_all(
        &self,
        game: &Game,
        identifiers: &[crate::catalog::CardIdentifier],
        field: &'static str,
    ) -> Result<Vec<Printing>, ContentError> {
        let resolution = self.catalog.resolve(game, identifiers, None).await?;
        if !resolution.unresolved.is_empty() {
            return Err(ContentError::Unresolved {
                field,
                items: resolution.unresolved,
            });
        }
        let mut resolved = resolution.resolved;
        resolved.sort_by_key(|item| item.index);
        Ok(resolved.into_iter().map(|item| item.printing).collect())
    }
}

/// Refuses a save by anyone but the owner (as "not found") or against another version.
fn ensure_writable(
    deck: &Deck,
    game: &Game,
    writer: Option<UserId>,
    if_match: Option<i32>,
) -> Result<(), RevisionRefused> {
    if deck.facts.game != game.slug || !deck.is_owned_by(writer) {
        return Err(RevisionRefused::NotFound);
    }
    match if_match {
        Some(expected) if expected != deck.version => Err(RevisionRefused::PreconditionFailed {
            current_version: deck.version,
        }),
        _ => Ok(()),
    }
}

fn apply_content(
    content: &mut DeckContent,
    checked: &CheckedChanges,
    cards: Option<Vec<DeckCard>>,
    featured: Patch<Vec<FeaturedChoice>>,
) {
    if let Some(name) = &checked.name {
        content.name = name.clone();
    }
    if let Some(notes) = &checked.notes {
        content.notes = notes.clone();
    }
    if let Some(visibility) = checked.visibility {
        content.visibility = visibility;
    }
    checked.format.apply_to(&mut content.format_id);
    checked.youtube_url.apply_to(&mut content.youtube_url);
    checked.thumbnail.apply_to(&mut content.thumbnail);
    if let Some(legal) = checked.legal {
        content.legal = legal;
    }
    checked.archetype.apply_to(&mut content.archetype);
    if let Some(cards) = cards {
        content.cards = cards;
    }
    featured.apply_to(&mut content.featured);
}

/// The provenance after `checked`; an external id given now stamps the import time.
fn apply_provenance(
    mut provenance: Provenance,
    checked: &CheckedChanges,
    now: time::OffsetDateTime,
) -> Provenance {
    if let Some(provider) = &checked.source_provider {
        provenance.source_provider = provider.clone();
    }
    checked
        .source_external_version
        .apply_to(&mut provenance.source_external_version);
    checked
        .source_external_url
        .apply_to(&mut provenance.source_external_url);
    match &checked.source_external_id {
        Patch::Keep => {}
        Patch::Clear => {
            provenance.source_external_id = None;
            provenance.source_imported_at = None;
        }
        Patch::Set(external_id) => {
            provenance.source_external_id = Some(external_id.clone());
            provenance.source_imported_at = Some(now);
        }
    }
    provenance
}

fn snapshot(printing: Printing) -> CardSnapshot {
    CardSnapshot {
        variant_id: printing.variant_id,
        card_id: printing.card_id,
        name: printing.name,
        set: printing.set,
        collector_number: printing.collector_number,
        type_line: printing.type_line,
        image_url: printing.image_url,
        colors: printing.colors,
    }
}

/// Section totals, colours and featured cards, as lists show them.
pub fn summarize(game: &Game, content: &DeckContent) -> DeckSummary {
    let mut section_counts = BTreeMap::new();
    for card in &content.cards {
        *section_counts.entry(card.section.clone()).or_insert(0) += card.quantity;
    }
    let counted = content
        .cards
        .iter()
        .filter(|card| {
            game.section(&card.section)
                .is_some_and(|section| section.counted)
        })
        .flat_map(|card| card.card.colors.iter().map(String::as_str));
    DeckSummary {
        section_counts,
        colors: game.order_colors(counted),
        featured_cards: featured_cards(game, content),
    }
}

/// The owner's choices, or else the cards of each section that fills a featured slot, in the
/// game's section order (`mtg`: the commander's, then the companion's; `fab`: the hero).
fn featured_cards(game: &Game, content: &DeckContent) -> Vec<FeaturedCard> {
    let choices: Vec<(FeaturedSlot, bool, &CardSnapshot)> = match &content.featured {
        Some(choices) => choices
            .iter()
            .map(|choice| (choice.slot, choice.foil, &choice.card))
            .collect(),
        None => {
            let mut derived = Vec::new();
            for section in &game.sections {
                let Some(slot) = section.featured_slot else {
                    continue;
                };
                let mut cards: Vec<&DeckCard> = content
                    .cards
                    .iter()
                    .filter(|card| card.section == section.key)
                    .collect();
                cards.sort_by(|a, b| a.card.name.cmp(&b.card.name));
                derived.extend(cards.into_iter().map(|card| (slot, card.foil, &card.card)));
            }
            derived
        }
    };
    let mut per_slot: BTreeMap<&str, u32> = BTreeMap::new();
    choices
        .into_iter()
        .enumerate()
        .map(|(position, (slot, foil, card))| {
            let within = per_slot.entry(slot.as_str()).or_insert(0);
            let featured = FeaturedCard {
                slot,
                slot_key: format!("{}:{within}", slot.as_str()),
                label: slot.label().to_owned(),
                sort_order: u32::try_from(position).unwrap_or(u32::MAX),
                foil,
                card: card.clone(),
            };
            *within += 1;
            featured
        })
        .collect()
}

mod card_stats;
#[cfg(test)]
mod tests;
