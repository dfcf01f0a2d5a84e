//! Domain values for tests, valid and unique unless a test says otherwise.

use deckhand_domain::events::{Actor, EventId, EventRecord, EventType, Origin};
use std::collections::BTreeMap;

use deckhand_auth::TokenHash;
use deckhand_domain::catalog::{CatalogEntry, Preference, Printing};
use deckhand_domain::decks::ports::{Reviser, Revision};
use deckhand_domain::decks::{Deck, DeckContent, DeckId, HistoryType, Visibility};
use deckhand_domain::identity::{
    ApiKey, ApiKeyId, GameScopes, Partner, PartnerSlug, PatId, PersonalAccessToken, Scope, Scopes,
    Tier, User, UserId, Username,
};
use deckhand_domain::sideboards::ports::{GuideReviser, GuideRevision, NewGuide, NewMatchup};
use deckhand_domain::sideboards::{
    CardOverride, Difficulty, GuideContent, GuideId, MatchupContent, MatchupId, OverrideType,
    SideboardGuide,
};
use deckhand_domain::time::truncate_to_micros;
use deckhand_domain::webhooks::{Endpoint, GameSelection, TypeSelection, WebhookId};
use time::OffsetDateTime;
use uuid::Uuid;

/// Now, as the domain's clock gives it: UTC, microsecond precision.
pub fn now() -> OffsetDateTime {
    truncate_to_micros(OffsetDateTime::now_utc())
}

/// # Panics
///
/// When `username` is not a valid username.
pub fn username(username: &str) -> Username {
    Username::parse(username).unwrap_or_else(|error| panic!("{username:?}: {error}"))
}

/// An active, non-premium user without a password.
pub fn user(name: &str) -> User {
    User {
        id: UserId(Uuid::now_v7()),
        username: username(name),
        active: true,
        premium: false,
        password_hash: None,
        created_at: now(),
    }
}

/// A usable token of `owner` with `decks:read`, whose hash matches no other token.
pub fn pat_for(owner: &User) -> PersonalAccessToken {
    PersonalAccessToken {
        id: PatId(Uuid::now_v7()),
        user_id: owner.id,
        name: None,
        token_hash: TokenHash::of(&Uuid::new_v4().to_string()),
        scopes: Scopes::from_iter([Scope::DecksRead]),
        created_at: now(),
        expires_at: None,
        revoked_at: None,
    }
}

/// An English, regular printing of card `card_id` named `name`, legal in `standard`, released
/// on 2020-01-01, with no catalog ids; tests change what they need.
pub fn printing(card_id: Uuid, name: &str, set: &str, number: &str) -> CatalogEntry {
    CatalogEntry {
        printing: Printing {
            variant_id: Uuid::new_v4(),
            card_id,
            name: name.to_owned(),
            set: set.to_owned(),
            collector_number: number.to_owned(),
            type_line: "Creature — Test".to_owned(),
            image_url: None,
            colors: vec!["G".to_owned()],
            catalog_a_id: None,
            catalog_b_id: None,
            catalog_c_id: None,
        },
        face_names: Vec::new(),
        lang: "en".to_owned(),
        released_at: Some(time::macros::date!(2020 - 01 - 01)),
        preference: Preference::Default,
        legalities: std::sync::Arc::new(BTreeMap::from([(
            "standard".to_owned(),
            "legal".to_owned(),
        )])),
        color_identity: vec!["G".to_owned()],
        text_rules: None,
    }
}

/// A public `mtg` deck of `owner` named `name`, with no cards.
pub fn deck(owner: &User, name: &str) -> deckhand_domain::decks::ports::NewDeck {
    use deckhand_domain::decks::{DeckContent, DeckId, DeckSummary, Provenance, Visibility};
    let id = DeckId(Uuid::now_v7());
    deckhand_domain::decks::ports::NewDeck {
        id,
        game: "mtg".into(),
        owner: owner.id,
        content: DeckContent {
            name: name.into(),
            notes: String::new(),
            visibility: Visibility::Public,
            format_id: None,
            youtube_url: None,
            thumbnail: None,
            legal: true,
            archetype: None,
            cards: Vec::new(),
            featured: None,
        },
        summary: DeckSummary::default(),
        provenance: Provenance::manual(),
        forked_from: None,
        created_at: now(),
        event: deckhand_domain::decks::events::created(&origin(), "mtg", id, None, now()),
    }
}

/// A change by an operator, with a new event id.
pub fn origin() -> Origin {
    Origin {
        event_id: EventId(Uuid::now_v7()),
        actor: Actor::operator(),
    }
}

/// The record of a change of `event_type` in `mtg` at `at`, for store tests that only need the
/// store to write what it is handed.
pub fn change(event_type: EventType, at: time::OffsetDateTime) -> EventRecord {
    origin().record(event_type, "mtg", None, at, serde_json::json!({}))
}

/// `deck` saved with `content` as `history_type` at `at`, the rest as it was.
pub fn revision_of(
    deck: &Deck,
    content: DeckContent,
    history_type: HistoryType,
    at: time::OffsetDateTime,
) -> Revision {
    Revision {
        content,
        summary: deck.facts.summary.clone(),
        provenance: deck.provenance.clone(),
        is_archived: deck.is_archived,
        history_type,
        at,
        origin: origin(),
    }
}

/// A save that renames the deck, as an update at `at`.
pub fn update_to(name: &str, at: time::OffsetDateTime) -> Reviser {
    let name = name.to_owned();
    Box::new(move |deck: &Deck| {
        let mut content = deck.content.clone();
        content.name.clone_from(&name);
        Ok(revision_of(deck, content, HistoryType::Update, at))
    })
}

/// An active partner of `owner` with `decks:read`, every game, the `partner` tier, and a
/// sealed secret of plausible shape (the stores never open it).
pub fn partner_for(owner: &User, slug: &str) -> Partner {
    Partner {
        slug: PartnerSlug::parse(slug).unwrap_or_else(|error| panic!("{slug:?}: {error}")),
        created_by: owner.id,
        scopes: Scopes::from_iter([Scope::DecksRead]),
        game_scopes: GameScopes::All,
        tier: Tier::partner(),
        sealed_secret: Uuid::new_v4().as_bytes().repeat(3),
        active: true,
        created_at: now(),
    }
}

/// A usable API key of `partner`, whose hash matches no other key.
pub fn api_key_for(partner: &Partner) -> ApiKey {
    ApiKey {
        id: ApiKeyId(Uuid::now_v7()),
        partner: partner.slug.clone(),
        key_hash: TokenHash::of(&Uuid::new_v4().to_string()),
        created_at: now(),
        revoked_at: None,
    }
}

/// SQL that fills an empty `mtg` catalog the size of the 2019 import: 20,000 cards with 45,000
/// printings (two or three a card, in 300 sets, of every preference, over a year of release
/// dates; every 50th undated), catalog ids on some, then `ANALYZE`. Card `n` is
/// `00000000-0000-0000-0001-<n>` named `Card n` (every 7th a split card `Card n // Back n`);
/// printing `n` is `00000000-0000-0000-0000-<n>` of card `n % 20000 + 1`, in set
/// `s<n % 300>` with number `n`, catalog ids `100000 + n` (unless n % 3 = 0), `200000 + n`
/// (even n) and `300000 + n` (n % 10 = 0).
pub const CATALOG_OF_2019_SIZE: &str = "
INSERT INTO catalog_cards (game, card_id, name, face_names, name_key, front_face_key)
SELECT 'mtg', ('00000000-0000-0000-0001-' || lpad(n::text, 12, '0'))::uuid,
    CASE WHEN n % 7 = 0 THEN 'Card ' || n || ' // Back ' || n ELSE 'Card ' || n END,
    CASE WHEN n % 7 = 0 THEN ARRAY['Card ' || n, 'Back ' || n] ELSE '{}' END,
    CASE WHEN n % 7 = 0 THEN 'card ' || n || ' // back ' || n ELSE 'card ' || n END,
    'card ' || n
FROM generate_series(1, 20000) AS n;
INSERT INTO catalog_printings (game, variant_id, card_id, name, set, collector_number,
    type_line, colors, catalog_a_id, catalog_b_id, catalog_c_id, lang, released_at,
    preference, legalities)
SELECT 'mtg', ('00000000-0000-0000-0000-' || lpad(n::text, 12, '0'))::uuid,
    ('00000000-0000-0000-0001-' || lpad((n % 20000 + 1)::text, 12, '0'))::uuid,
    'Card ' || (n % 20000 + 1), 's' || (n % 300), n::text, 'Creature', '{}',
    CASE WHEN n % 3 <> 0 THEN (100000 + n)::text END,
    CASE WHEN n % 2 = 0 THEN (200000 + n)::text END,
    CASE WHEN n % 10 = 0 THEN (300000 + n)::text END,
    'en', CASE WHEN n % 50 <> 0 THEN date '2019-01-01' + n % 365 END, (n % 3)::smallint,
    CASE WHEN n % 4 = 0 THEN '{\"modern\": \"legal\", \"legacy\": \"legal\"}'
        ELSE '{\"modern\": \"legal\"}' END::jsonb
FROM generate_series(1, 45000) AS n;
ANALYZE catalog_cards, catalog_printings;";

/// A public guide of `owner` in `mtg` on the deck `primary`, without matchups.
pub fn guide(owner: &User, primary: DeckId, name: &str) -> NewGuide {
    let id = GuideId(Uuid::now_v7());
    NewGuide {
        id,
        game: "mtg".into(),
        owner: owner.id,
        content: GuideContent {
            name: name.into(),
            description: String::new(),
            notes: String::new(),
            visibility: Visibility::Public,
            tags: Vec::new(),
            format: None,
            thumbnail: None,
            youtube_url: None,
            premium: false,
        },
        primary_deck: primary,
        matchups: Vec::new(),
        created_at: now(),
        event: deckhand_domain::sideboards::events::created(&origin(), "mtg", id, primary, now()),
    }
}

/// A hard matchup against `opponent` with one card brought in.
pub fn matchup(opponent: &str, archetype: Option<&str>, sort_order: i32) -> NewMatchup {
    NewMatchup {
        id: MatchupId(Uuid::now_v7()),
        content: MatchupContent {
            opponent_deck_name: opponent.into(),
            opponent_archetype: archetype.map(str::to_owned),
            difficulty: Difficulty::Hard,
            notes: String::new(),
            play_notes: "On the play: keep two-landers.".into(),
            draw_notes: String::new(),
            sort_order,
            thumbnail: None,
            is_featured: false,
            special_card_overrides: vec![CardOverride {
                special_card_type: OverrideType::In,
                card_id: "c-1".into(),
                card_name: "Flusterstorm".into(),
                quantity: 2,
                sort_order: 0,
            }],
        },
    }
}

/// Archives the guide (`is_archived`) or brings it back, at `at`.
pub fn guide_archived(is_archived: bool, at: time::OffsetDateTime) -> GuideReviser {
    Box::new(move |guide: &SideboardGuide| GuideRevision {
        content: guide.content.clone(),
        is_archived,
        at,
        origin: origin(),
    })
}

/// An enabled endpoint of `partner` at `url` for every event type and game, with a stand-in
/// sealed secret.
pub fn webhook_endpoint(partner: &Partner, url: &str) -> Endpoint {
    Endpoint {
        id: WebhookId(Uuid::now_v7()),
        partner: partner.slug.as_str().to_owned(),
        url: url.to_owned(),
        types: TypeSelection::all(),
        games: GameSelection(GameScopes::All),
        description: Some("contract".into()),
        enabled: true,
        disabled_reason: None,
        consecutive_failures: 0,
        sealed_secret: vec![7; 60],
        previous_secret: None,
        created_at: now(),
    }
}
