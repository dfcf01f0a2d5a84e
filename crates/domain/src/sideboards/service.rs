//! Sideboard guide use cases: who may see and change a guide, the primary-deck rule, and what
//! each write stores.

use std::sync::Arc;

use crate::catalog::Game;
use crate::decks::ports::DeckRepository;
use crate::decks::{Deck, DeckId, Page};
use crate::events::{EventRecord, EventType, Origin};
use crate::identity::{Principal, UserId};
use crate::likes::{LikeError, liker};
use crate::system::SystemPorts;
use crate::validation::{FieldViolation, Violations};

use super::changes::{GuideChanges, MatchupChanges, NewGuideInput, deck_id};
use super::events;
use super::model::{GuideDetail, GuideId, Matchup, MatchupId, SideboardGuide};
use super::ports::{
    GuideReviser, GuideRevision, MatchupReviser, NewGuide, NewMatchup, ReviseGuideError,
    ReviseMatchupError, SideboardGuideRepository,
};
use super::query::{GuideListRequest, GuideQuery};

/// Why a guide operation did not happen. Each maps to one answer of the contract.
#[derive(Debug, thiserror::Error)]
pub enum GuideError {
    /// A field is invalid, a referenced deck is unknown, or the primary deck was to be
    /// detached (400 with `details.fields`).
    #[error(transparent)]
    Invalid(#[from] Violations),
    /// No such guide, deck attachment or matchup, or one the caller may not see or change.
    #[error("not found")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl From<ReviseGuideError> for GuideError {
    fn from(error: ReviseGuideError) -> Self {
        match error {
            ReviseGuideError::NotFound => Self::NotFound,
            ReviseGuideError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

impl From<ReviseMatchupError> for GuideError {
    fn from(error: ReviseMatchupError) -> Self {
        match error {
            ReviseMatchupError::NotFound => Self::NotFound,
            ReviseMatchupError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

fn unknown_deck(message: &str) -> GuideError {
    Violations(vec![FieldViolation::new("deck_id", "unknown", message)]).into()
}

#[derive(Clone)]
pub struct SideboardGuideService {
    guides: Arc<dyn SideboardGuideRepository>,
    decks: Arc<dyn DeckRepository>,
    system: SystemPorts,
}

impl SideboardGuideService {
    pub fn new(
        guides: Arc<dyn SideboardGuideRepository>,
        decks: Arc<dyn DeckRepository>,
        system: SystemPorts,
    ) -> Self {
        Self {
            guides,
            decks,
            system,
        }
    }

    /// Creates a guide owned by the caller (a partner-only caller: its `created_by` user) on
    /// one of the owner's decks of `game`, with its first matchups.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn create(
        &self,
        principal: &Principal,
        game: &Game,
        input: NewGuideInput,
    ) -> Result<GuideDetail, GuideError> {
        let owner = principal.acting_user().ok_or(GuideError::NotFound)?;
        let checked = input.check()?;
        let primary = DeckId(checked.deck_id);
        self.deck_in(game, primary, |deck| deck.is_owned_by(Some(owner)))
            .await?
            .ok_or_else(|| unknown_deck("no deck of yours in this game has this id"))?;
        let now = self.system.clock.now();
        let id = GuideId(self.system.ids.new_id());
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let new = NewGuide {
            id,
            game: game.slug.clone(),
            owner,
            content: checked.content,
            primary_deck: primary,
            matchups: checked
                .matchups
                .into_iter()
                .map(|content| NewMatchup {
                    id: MatchupId(self.system.ids.new_id()),
                    content,
                })
                .collect(),
            created_at: now,
            event: events::created(&origin, &game.slug, id, primary, now),
        };
        let detail = self.guides.insert(&new).await?;
        Ok(detail.seen_by(Some(owner)))
    }

    /// The detail of a guide of `game` the caller may see, with the decks it may see.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id))]
    pub async fn get(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
    ) -> Result<GuideDetail, GuideError> {
        let viewer = principal.acting_user();
        match self.guides.detail(id).await? {
            Some(detail)
                if detail.guide.game == game.slug && detail.guide.is_visible_to(viewer) =>
            {
                Ok(detail.seen_by(viewer))
            }
            _ => Err(GuideError::NotFound),
        }
    }

    /// Likes (`liked`) or unlikes a guide the caller may see, as the user of its credentials.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id))]
    pub async fn set_like(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        liked: bool,
    ) -> Result<(), LikeError> {
        let user = liker(principal)?;
        let at = self.system.clock.now();
        if self
            .guides
            .set_like(id, &game.slug, user, liked, at)
            .await?
        {
            Ok(())
        } else {
            Err(LikeError::NotFound)
        }
    }

    /// A page of the guides of `game` the caller may see: public ones and its own; never
    /// archived ones.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn list(
        &self,
        principal: &Principal,
        game: &Game,
        request: GuideListRequest,
    ) -> Result<Page<SideboardGuide>, GuideError> {
        let viewer = principal.acting_user().ok_or(GuideError::NotFound)?;
        self.page(game, viewer, request).await
    }

    /// A page of the caller's own guides of `game`, every visibility, never archived ones.
    /// The endpoint admits only lanes with a user; the author filter is the caller.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn mine(
        &self,
        principal: &Principal,
        game: &Game,
        mut request: GuideListRequest,
    ) -> Result<Page<SideboardGuide>, GuideError> {
        let me = principal.acting_user().ok_or(GuideError::NotFound)?;
        request.filters.author = Some(me);
        self.page(game, me, request).await
    }

    async fn page(
        &self,
        game: &Game,
        viewer: UserId,
        request: GuideListRequest,
    ) -> Result<Page<SideboardGuide>, GuideError> {
        let mut page = self
            .guides
            .list(&GuideQuery {
                game: game.slug.clone(),
                viewer,
                filters: request.filters,
                sort: request.sort,
                order: request.order,
                page: request.page,
                with_summary: request.with_summary,
            })
            .await?;
        page.items = page
            .items
            .into_iter()
            .map(|guide| guide.seen_by(Some(viewer)))
            .collect();
        Ok(page)
    }

    /// Applies a PATCH (owner only); archiving takes the guide out of lists and its decks'
    /// `hasSideboardGuide` with it.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id))]
    pub async fn update(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        changes: GuideChanges,
    ) -> Result<GuideDetail, GuideError> {
        let checked = changes.check_patch()?;
        let owner = self.owned(principal, game, id).await?;
        let now = self.system.clock.now();
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let reviser: GuideReviser = Box::new(move |guide: &SideboardGuide| {
            let is_archived = checked.is_archived.unwrap_or(guide.is_archived);
            GuideRevision {
                content: checked.apply(guide.content.clone()),
                is_archived,
                at: now,
                origin,
            }
        });
        Ok(self.guides.revise(id, reviser).await?.seen_by(Some(owner)))
    }

    /// Attaches a deck of `game` the caller may read (owner of the guide only). Attaching a
    /// deck twice changes nothing.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id))]
    pub async fn attach(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        deck: &str,
    ) -> Result<(), GuideError> {
        let deck = deck_id("deck_id", deck).map_err(Violations::from)?;
        let owner = self.owned(principal, game, id).await?;
        self.deck_in(game, DeckId(deck), |deck| deck.is_visible_to(Some(owner)))
            .await?
            .ok_or_else(|| unknown_deck("no deck you can read in this game has this id"))?;
        let event = self.guide_deck_event(principal, game, id, DeckId(deck), true);
        self.guides.attach(id, DeckId(deck), &event).await?;
        Ok(())
    }

    /// Detaches a deck (owner only). The primary deck stays: 400. A deck not attached: 404.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id, deck = %deck))]
    pub async fn detach(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        deck: DeckId,
    ) -> Result<(), GuideError> {
        let writer = principal.acting_user();
        let guide = self
            .find_in(game, id, |guide| guide.is_owned_by(writer))
            .await?;
        if guide.primary_deck == deck {
            return Err(Violations(vec![FieldViolation::new(
                "deck_id",
                "primary",
                "the primary deck cannot be detached",
            )])
            .into());
        }
        let event = self.guide_deck_event(principal, game, id, deck, false);
        if self.guides.detach(id, deck, &event).await? {
            Ok(())
        } else {
            Err(GuideError::NotFound)
        }
    }

    /// Adds a matchup (owner only).
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id))]
    pub async fn add_matchup(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        changes: MatchupChanges,
    ) -> Result<Matchup, GuideError> {
        let content = changes.check_new()?;
        self.owned(principal, game, id).await?;
        let matchup = NewMatchup {
            id: MatchupId(self.system.ids.new_id()),
            content,
        };
        let event = self.matchup_event(
            principal,
            game,
            id,
            matchup.id,
            EventType::GuideMatchupCreated,
        );
        Ok(self.guides.add_matchup(id, &matchup, &event).await?)
    }

    /// Applies a matchup PATCH (owner only).
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id, matchup = %matchup))]
    pub async fn update_matchup(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        matchup: MatchupId,
        changes: MatchupChanges,
    ) -> Result<Matchup, GuideError> {
        let checked = changes.check_patch()?;
        self.owned(principal, game, id).await?;
        let reviser: MatchupReviser = Box::new(move |content| checked.apply(content.clone()));
        let event =
            self.matchup_event(principal, game, id, matchup, EventType::GuideMatchupUpdated);
        Ok(self
            .guides
            .revise_matchup(id, matchup, reviser, &event)
            .await?)
    }

    /// Deletes a matchup (owner only).
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %id, matchup = %matchup))]
    pub async fn delete_matchup(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        matchup: MatchupId,
    ) -> Result<(), GuideError> {
        self.owned(principal, game, id).await?;
        let event =
            self.matchup_event(principal, game, id, matchup, EventType::GuideMatchupDeleted);
        if self.guides.delete_matchup(id, matchup, &event).await? {
            Ok(())
        } else {
            Err(GuideError::NotFound)
        }
    }

    /// The event of `principal` attaching (`attached`) or detaching `deck`, now.
    fn guide_deck_event(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        deck: DeckId,
        attached: bool,
    ) -> EventRecord {
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let now = self.system.clock.now();
        events::deck_membership(&origin, &game.slug, id, deck, attached, now)
    }

    /// The event of `principal` changing a matchup in the way `event_type` says, now.
    fn matchup_event(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
        matchup: MatchupId,
        event_type: EventType,
    ) -> EventRecord {
        let origin = Origin::of(principal, self.system.ids.as_ref());
        let now = self.system.clock.now();
        events::matchup(&origin, event_type, &game.slug, id, matchup, now)
    }

    /// The owner of guide `id` of `game` when it is the caller; anything else is "not found".
    async fn owned(
        &self,
        principal: &Principal,
        game: &Game,
        id: GuideId,
    ) -> Result<UserId, GuideError> {
        let writer = principal.acting_user();
        let guide = self
            .find_in(game, id, |guide| guide.is_owned_by(writer))
            .await?;
        Ok(guide.author.id)
    }

    /// Guide `id` of `game` when `may_access` allows it; anything else is "not found", so
    /// nobody learns of guides they may not touch.
    async fn find_in(
        &self,
        game: &Game,
        id: GuideId,
        may_access: impl Fn(&SideboardGuide) -> bool,
    ) -> Result<SideboardGuide, GuideError> {
        match self.guides.find(id).await? {
            Some(guide) if guide.game == game.slug && may_access(&guide) => Ok(guide),
            _ => Err(GuideError::NotFound),
        }
    }

    /// Deck `id` of `game` when `may_use` allows it.
    async fn deck_in(
        &self,
        game: &Game,
        id: DeckId,
        may_use: impl Fn(&Deck) -> bool,
    ) -> Result<Option<Deck>, GuideError> {
        Ok(self
            .decks
            .find(id)
            .await?
            .filter(|deck| deck.facts.game == game.slug && may_use(deck)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mockall::predicate::{eq, function};
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::decks::ports::MockDeckRepository;
    use crate::decks::{Author, Visibility, test_decks};
    use crate::identity::{GameScopes, Lane, PartnerRef, Scopes, Tier, Username};
    use crate::sideboards::model::{AttachedDeck, GuideContent, PrimaryDeckSummary};
    use crate::sideboards::ports::MockSideboardGuideRepository;
    use crate::system::{FixedClock, MockIdGenerator, MockRandom};

    const NOW: time::OffsetDateTime = datetime!(2026-11-22 10:00 UTC);

    fn alice() -> UserId {
        UserId(Uuid::from_u128(1))
    }

    fn bob() -> UserId {
        UserId(Uuid::from_u128(2))
    }

    fn mtg() -> Game {
        Game {
            slug: "mtg".into(),
            name: "Magic".into(),
            sections: vec![],
            colors: vec![],
        }
    }

    fn user(id: UserId) -> Principal {
        Principal {
            lane: Lane::PersonalAccessToken,
            user: Some(crate::identity::PrincipalUser {
                id,
                username: Username::parse("someone").unwrap(),
                premium: false,
            }),
            partner: None,
            scopes: Scopes::none(),
        }
    }

    /// A partner-only caller whose partner was created by `created_by`.
    fn partner_of(created_by: UserId) -> Principal {
        Principal {
            lane: Lane::PartnerApiKey,
            user: None,
            partner: Some(PartnerRef {
                slug: "acme".into(),
                created_by,
                game_scopes: GameScopes::All,
                tier: Tier::partner(),
            }),
            scopes: Scopes::none(),
        }
    }

    fn deck(id: u128, owner: UserId, visibility: Visibility) -> Deck {
        let content = test_decks::content(&format!("deck {id}"), visibility, vec![]);
        test_decks::deck(DeckId(Uuid::from_u128(id)), owner, "owner", content, NOW)
    }

    fn guide(owner: UserId, visibility: Visibility) -> SideboardGuide {
        SideboardGuide {
            id: GuideId(Uuid::from_u128(100)),
            game: "mtg".into(),
            author: Author {
                id: owner,
                username: Username::parse("owner").unwrap(),
            },
            content: GuideContent {
                name: "Plan".into(),
                description: String::new(),
                notes: String::new(),
                visibility,
                tags: vec![],
                format: None,
                thumbnail: None,
                youtube_url: None,
                premium: false,
            },
            primary_deck: DeckId(Uuid::from_u128(10)),
            primary_deck_visibility: Visibility::Private,
            primary_summary: Some(PrimaryDeckSummary {
                featured_cards: vec![],
                colors: vec!["R".into()],
            }),
            matchup_count: 0,
            pageviews: 0,
            likes: 0,
            is_archived: false,
            created_at: NOW,
            updated_at: NOW,
        }
    }

    fn attached(id: u128, owner: UserId, visibility: Visibility, is_primary: bool) -> AttachedDeck {
        AttachedDeck {
            id: DeckId(Uuid::from_u128(id)),
            name: format!("deck {id}"),
            owner,
            visibility,
            is_primary,
        }
    }

    fn service(
        guides: MockSideboardGuideRepository,
        decks: MockDeckRepository,
    ) -> SideboardGuideService {
        let mut ids = MockIdGenerator::new();
        let mut next = 1000u128;
        ids.expect_new_id().returning(move || {
            next += 1;
            Uuid::from_u128(next)
        });
        SideboardGuideService::new(
            Arc::new(guides),
            Arc::new(decks),
            SystemPorts {
                clock: Arc::new(FixedClock::at(NOW)),
                ids: Arc::new(ids),
                random: Arc::new(MockRandom::new()),
                passwords: Arc::new(crate::system::InlinePasswordVerifier),
            },
        )
    }

    fn codes(error: GuideError) -> Vec<(String, &'static str)> {
        match error {
            GuideError::Invalid(violations) => violations.codes(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    fn create_input(deck: u128) -> NewGuideInput {
        NewGuideInput {
            deck_id: Some(Uuid::from_u128(deck).to_string()),
            fields: GuideChanges {
                name: Some("Plan".into()),
                ..GuideChanges::default()
            },
            matchups: vec![],
        }
    }

    #[test]
    fn a_partner_only_create_is_owned_by_the_partners_created_by_user() {
        let mut decks = MockDeckRepository::new();
        decks
            .expect_find()
            .returning(|_| Ok(Some(deck(10, alice(), Visibility::Private))));
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_insert()
            .withf(|new| {
                new.owner == alice()
                    && new.primary_deck == DeckId(Uuid::from_u128(10))
                    && new.created_at == NOW
                    && new.content.visibility == Visibility::Private
            })
            .times(1)
            .returning(|_| {
                Ok(GuideDetail {
                    guide: guide(alice(), Visibility::Private),
                    decks: vec![],
                    matchups: vec![],
                })
            });
        let created = futures_executor::block_on(service(guides, decks).create(
            &partner_of(alice()),
            &mtg(),
            create_input(10),
        ));
        assert!(created.is_ok());
    }

    #[test]
    fn the_primary_deck_must_be_the_callers_own_deck_of_this_game() {
        for stored in [
            Some(deck(10, bob(), Visibility::Public)),
            Some({
                let mut elsewhere = deck(10, alice(), Visibility::Public);
                elsewhere.facts.game = "lorcana".into();
                elsewhere
            }),
            None,
        ] {
            let mut decks = MockDeckRepository::new();
            decks.expect_find().return_once(move |_| Ok(stored));
            let guides = MockSideboardGuideRepository::new();
            let error = futures_executor::block_on(service(guides, decks).create(
                &user(alice()),
                &mtg(),
                create_input(10),
            ))
            .unwrap_err();
            assert_eq!(codes(error), [("deck_id".to_owned(), "unknown")]);
        }
    }

    #[test]
    fn hidden_guides_are_not_found_and_hidden_decks_are_left_out() {
        let detail = || GuideDetail {
            guide: guide(alice(), Visibility::Public),
            decks: vec![
                attached(10, alice(), Visibility::Private, true),
                attached(11, bob(), Visibility::Public, false),
                attached(12, alice(), Visibility::Unlisted, false),
            ],
            matchups: vec![],
        };
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_detail()
            .returning(move |_| Ok(Some(detail())));
        let service = service(guides, MockDeckRepository::new());
        let as_bob = futures_executor::block_on(service.get(
            &user(bob()),
            &mtg(),
            GuideId(Uuid::from_u128(100)),
        ))
        .unwrap();
        let ids: Vec<u128> = as_bob
            .decks
            .iter()
            .map(|deck| deck.id.0.as_u128())
            .collect();
        assert_eq!(ids, [11]);
        // The private primary deck's cards and colours stay hidden from others.
        assert_eq!(
            as_bob.guide.primary_summary,
            Some(PrimaryDeckSummary::default())
        );
        let as_alice = futures_executor::block_on(service.get(
            &user(alice()),
            &mtg(),
            GuideId(Uuid::from_u128(100)),
        ))
        .unwrap();
        assert_eq!(as_alice.decks.len(), 3);
        assert_eq!(
            as_alice.guide.primary_summary.unwrap().colors,
            ["R".to_owned()]
        );

        let mut private = MockSideboardGuideRepository::new();
        private.expect_detail().returning(|_| {
            Ok(Some(GuideDetail {
                guide: guide(alice(), Visibility::Unlisted),
                decks: vec![],
                matchups: vec![],
            }))
        });
        let service = super::tests::service(private, MockDeckRepository::new());
        let hidden = futures_executor::block_on(service.get(
            &user(bob()),
            &mtg(),
            GuideId(Uuid::from_u128(100)),
        ));
        assert!(matches!(hidden, Err(GuideError::NotFound)));
    }

    #[test]
    fn only_the_owner_may_patch_and_nothing_is_written_otherwise() {
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_find()
            .returning(|_| Ok(Some(guide(alice(), Visibility::Public))));
        guides.expect_revise().never();
        let changes = GuideChanges {
            is_archived: Some(true),
            ..GuideChanges::default()
        };
        let result = futures_executor::block_on(service(guides, MockDeckRepository::new()).update(
            &user(bob()),
            &mtg(),
            GuideId(Uuid::from_u128(100)),
            changes,
        ));
        assert!(matches!(result, Err(GuideError::NotFound)));
    }

    #[test]
    fn a_patch_keeps_unsent_fields_and_archives_at_the_clocks_time() {
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_find()
            .returning(|_| Ok(Some(guide(alice(), Visibility::Public))));
        guides.expect_revise().times(1).returning(|_, reviser| {
            let mut current = guide(alice(), Visibility::Public);
            current.content.notes = "kept".into();
            let revision = reviser(&current);
            assert_eq!(revision.at, NOW);
            assert!(revision.is_archived);
            assert_eq!(revision.content.notes, "kept");
            assert_eq!(revision.content.name, "Renamed");
            Ok(GuideDetail {
                guide: guide(alice(), Visibility::Public),
                decks: vec![],
                matchups: vec![],
            })
        });
        let changes = GuideChanges {
            name: Some("Renamed".into()),
            is_archived: Some(true),
            ..GuideChanges::default()
        };
        let result = futures_executor::block_on(service(guides, MockDeckRepository::new()).update(
            &user(alice()),
            &mtg(),
            GuideId(Uuid::from_u128(100)),
            changes,
        ));
        assert!(result.is_ok());
    }

    #[test]
    fn invalid_patches_are_refused_before_any_lookup() {
        let mut guides = MockSideboardGuideRepository::new();
        guides.expect_find().never();
        let changes = GuideChanges {
            name: Some(String::new()),
            tags: Some(vec![String::new()]),
            ..GuideChanges::default()
        };
        let error = futures_executor::block_on(service(guides, MockDeckRepository::new()).update(
            &user(alice()),
            &mtg(),
            GuideId(Uuid::from_u128(100)),
            changes,
        ))
        .unwrap_err();
        assert_eq!(
            codes(error),
            [
                ("name".to_owned(), "length"),
                ("tags[0]".to_owned(), "length")
            ]
        );
    }

    #[test]
    fn the_primary_deck_cannot_be_detached_and_a_stranger_deck_is_not_found() {
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_find()
            .returning(|_| Ok(Some(guide(alice(), Visibility::Public))));
        guides
            .expect_detach()
            .with(
                eq(GuideId(Uuid::from_u128(100))),
                eq(DeckId(Uuid::from_u128(11))),
                function(|event: &EventRecord| {
                    event.occurred_at == NOW && event.event_type == EventType::GuideDeckDetached
                }),
            )
            .times(1)
            .returning(|_, _, _| Ok(false));
        let service = service(guides, MockDeckRepository::new());
        let id = GuideId(Uuid::from_u128(100));
        let primary = futures_executor::block_on(service.detach(
            &user(alice()),
            &mtg(),
            id,
            DeckId(Uuid::from_u128(10)),
        ))
        .unwrap_err();
        assert_eq!(codes(primary), [("deck_id".to_owned(), "primary")]);
        let missing = futures_executor::block_on(service.detach(
            &user(alice()),
            &mtg(),
            id,
            DeckId(Uuid::from_u128(11)),
        ));
        assert!(matches!(missing, Err(GuideError::NotFound)));
    }

    #[test]
    fn attach_takes_any_deck_the_owner_can_read() {
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_find()
            .returning(|_| Ok(Some(guide(alice(), Visibility::Public))));
        guides
            .expect_attach()
            .with(
                eq(GuideId(Uuid::from_u128(100))),
                eq(DeckId(Uuid::from_u128(20))),
                function(|event: &EventRecord| {
                    event.occurred_at == NOW && event.event_type == EventType::GuideDeckAttached
                }),
            )
            .times(1)
            .returning(|_, _, _| Ok(true));
        let mut decks = MockDeckRepository::new();
        decks.expect_find().returning(|id| {
            Ok(Some(match id.0.as_u128() {
                20 => deck(20, bob(), Visibility::Public),
                _ => deck(21, bob(), Visibility::Private),
            }))
        });
        let service = service(guides, decks);
        let id = GuideId(Uuid::from_u128(100));
        let public = Uuid::from_u128(20).to_string();
        assert!(
            futures_executor::block_on(service.attach(&user(alice()), &mtg(), id, &public)).is_ok()
        );
        let private = Uuid::from_u128(21).to_string();
        let error =
            futures_executor::block_on(service.attach(&user(alice()), &mtg(), id, &private))
                .unwrap_err();
        assert_eq!(codes(error), [("deck_id".to_owned(), "unknown")]);
        let error = futures_executor::block_on(service.attach(&user(alice()), &mtg(), id, "nope"))
            .unwrap_err();
        assert_eq!(codes(error), [("deck_id".to_owned(), "invalid")]);
    }

    #[test]
    fn matchups_of_another_users_guide_are_not_found() {
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_find()
            .returning(|_| Ok(Some(guide(alice(), Visibility::Public))));
        guides.expect_add_matchup().never();
        guides.expect_delete_matchup().never();
        let service = service(guides, MockDeckRepository::new());
        let id = GuideId(Uuid::from_u128(100));
        let changes = MatchupChanges {
            opponent_deck_name: Some("Burn".into()),
            ..MatchupChanges::default()
        };
        let added =
            futures_executor::block_on(service.add_matchup(&user(bob()), &mtg(), id, changes));
        assert!(matches!(added, Err(GuideError::NotFound)));
        let deleted = futures_executor::block_on(service.delete_matchup(
            &user(bob()),
            &mtg(),
            id,
            MatchupId(Uuid::from_u128(7)),
        ));
        assert!(matches!(deleted, Err(GuideError::NotFound)));
    }

    #[test]
    fn the_list_is_the_callers_view_and_mine_filters_on_the_caller() {
        let mut guides = MockSideboardGuideRepository::new();
        guides
            .expect_list()
            .withf(|query| query.viewer == bob() && query.filters.author == Some(bob()))
            .times(1)
            .returning(|_| {
                Ok(Page {
                    items: vec![guide(alice(), Visibility::Public)],
                    total: 1,
                    total_exact: true,
                })
            });
        let request = GuideListRequest {
            filters: crate::sideboards::GuideFilters::default(),
            sort: crate::sideboards::GuideSort::default(),
            order: crate::decks::SortOrder::default(),
            page: crate::decks::PageRequest { page: 1, limit: 20 },
            with_summary: true,
        };
        let page = futures_executor::block_on(service(guides, MockDeckRepository::new()).mine(
            &user(bob()),
            &mtg(),
            request,
        ))
        .unwrap();
        // The stub's guide belongs to alice with a private primary deck: its summary is hidden.
        assert_eq!(
            page.items[0].primary_summary,
            Some(PrimaryDeckSummary::default())
        );
    }
}
