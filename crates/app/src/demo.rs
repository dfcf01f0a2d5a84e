//! The demo data set: the bundled catalog, a user and a personal access token holding every
//! scope, a partner of that user (every scope, every game) with an API key, and two decks over
//! real cards (one public with a guide, one private) and a public sideboard guide with two
//! matchups on the public deck, and a public Flesh and Blood deck (Dorinthea Ironsong, legal in
//! Classic Constructed), so that a fresh `cargo run` can be tried at once.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use deckhand_domain::catalog::{CardIdentifier, format_id};
use deckhand_domain::decks::{CardLineInput, DeckChanges, ForkRequest, GuideInput};
use deckhand_domain::identity::{
    GameScopes, NewPartnerRequest, NewPatRequest, PartnerSlug, Principal, Scope, Scopes, User,
    UserLookup,
};
use deckhand_domain::oauth::{NewClientRequest, RedirectUri};
use deckhand_domain::sideboards::{GuideChanges, MatchupChanges, NewGuideInput, OverrideInput};
use deckhand_domain::{Patch, Services};
use serde::Serialize;

#[derive(Clone, Serialize)]
pub struct DemoCredentials {
    pub user_id: String,
    pub username: String,
    pub password: String,
    pub personal_access_token: String,
    pub partner: String,
    pub partner_secret: String,
    pub partner_api_key: String,
    /// A confidential OAuth client of the demo partner, redirecting to [`DEMO_REDIRECT_URI`].
    pub oauth_client_id: String,
    pub oauth_client_secret: String,
    /// The public demo deck.
    pub public_deck_id: String,
    /// The private demo deck: only the demo user sees it.
    pub private_deck_id: String,
    /// A public fork of the public demo deck, with a changed mana base.
    pub fork_deck_id: String,
    /// The public sideboard guide on the public deck.
    pub sideboard_guide_id: String,
    /// The public `fab` deck: Dorinthea Ironsong in Classic Constructed.
    pub fab_deck_id: String,
}

impl std::fmt::Debug for DemoCredentials {
    // Printed for the operator as JSON on purpose; Debug (logs, panics) leaves the secrets out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoCredentials")
            .field("user_id", &self.user_id)
            .field("username", &self.username)
            .field("partner", &self.partner)
            .field("oauth_client_id", &self.oauth_client_id)
            .field("public_deck_id", &self.public_deck_id)
            .field("private_deck_id", &self.private_deck_id)
            .field("fork_deck_id", &self.fork_deck_id)
            .field("sideboard_guide_id", &self.sideboard_guide_id)
            .field("fab_deck_id", &self.fab_deck_id)
            .finish_non_exhaustive()
    }
}

pub const DEMO_USERNAME: &str = "demo";
pub const DEMO_PARTNER: &str = "demo-partner";
/// Where the demo OAuth client is sent back to: nothing listens there, the browser's address
/// bar shows the code (see docs/oauth.md).
pub const DEMO_REDIRECT_URI: &str = "http://localhost:9000/callback";

pub async fn seed(services: &Services) -> anyhow::Result<DemoCredentials> {
    crate::catalog::load_bundled(services).await?;
    // 12 random bytes: 16 URL-safe characters, easy to copy from the banner.
    let password = URL_SAFE_NO_PAD.encode(&services.system.random.bytes32()?[..12]);
    let user = services
        .identity
        .create_user(DEMO_USERNAME, Some(&password), true)
        .await?;
    let (_, token) = services
        .identity
        .create_pat(NewPatRequest {
            user: UserLookup::Id(user.id),
            scopes: Scope::ALL.into_iter().collect(),
            name: Some("demo".into()),
            expires_in_days: None,
        })
        .await?;
    let (partner, partner_secret) = services
        .identity
        .create_partner(NewPartnerRequest {
            slug: PartnerSlug::parse(DEMO_PARTNER)?,
            owner: UserLookup::Id(user.id),
            scopes: Scope::ALL.into_iter().collect(),
            game_scopes: GameScopes::All,
            tier: None,
        })
        .await?;
    let (_, partner_api_key) = services.identity.create_api_key(&partner.slug).await?;
    let (client, client_secret) = services
        .oauth
        .create_client(NewClientRequest {
            partner: partner.slug.clone(),
            name: "Deckhand Demo App".into(),
            redirect_uris: vec![RedirectUri::parse(DEMO_REDIRECT_URI)?],
            scopes: Scope::ALL.into_iter().collect(),
            public: false,
            grant_types: None,
        })
        .await?;
    let (public_deck_id, private_deck_id, fork_deck_id) = seed_decks(services, &user).await?;
    let sideboard_guide_id = seed_sideboard_guide(services, &user, &public_deck_id).await?;
    let fab_deck_id = seed_fab_deck(services, &user).await?;
    Ok(DemoCredentials {
        user_id: user.id.to_string(),
        username: user.username.as_str().to_owned(),
        password,
        personal_access_token: token,
        partner: partner.slug.as_str().to_owned(),
        partner_secret,
        partner_api_key,
        oauth_client_id: client.id.to_string(),
        oauth_client_secret: client_secret.unwrap_or_default(),
        public_deck_id,
        private_deck_id,
        fork_deck_id,
        sideboard_guide_id,
        fab_deck_id,
    })
}

fn line(section: &str, quantity: u32, name: &str) -> CardLineInput {
    CardLineInput {
        section: section.into(),
        quantity,
        foil: false,
        identifier: CardIdentifier {
            name: Some(name.into()),
            ..CardIdentifier::default()
        },
    }
}

/// The public demo deck's cards, with `islands` Islands and `plains` Plains.
fn chromium_cards(islands: u32, plains: u32) -> Vec<CardLineInput> {
    vec![
        line("commander", 1, "Chromium, the Mutable"),
        line("mainboard", 1, "Dimir Spybug"),
        line("mainboard", 1, "Horizon Scholar"),
        line("mainboard", 1, "Tolarian Scholar"),
        line("mainboard", 1, "Liliana, Untouched by Death"),
        line("mainboard", 1, "Find // Finality"),
        line("mainboard", islands, "Island"),
        line("mainboard", 10, "Swamp"),
        line("mainboard", plains, "Plains"),
        line("sideboard", 1, "Guild Summit"),
        line("maybeboard", 1, "Nicol Bolas, the Ravager"),
    ]
}

/// Three `mtg` decks of `owner`; returns (public id, private id, id of the public one's fork).
async fn seed_decks(services: &Services, owner: &User) -> anyhow::Result<(String, String, String)> {
    let game = services.catalog.game("mtg").await?;
    let principal =
        Principal::personal_access_token(owner, Scope::ALL.into_iter().collect::<Scopes>());
    let public = services
        .decks
        .create(
            &principal,
            &game,
            DeckChanges {
                name: Some("Chromium Control".into()),
                notes: Some(
                    "A three-colour commander deck built from the bundled demo catalog.".into(),
                ),
                visibility: Some(vec!["public".into()]),
                legal: Some(true),
                archetype: Patch::Set("Control".into()),
                cards: Some(chromium_cards(10, 9)),
                ..DeckChanges::default()
            },
        )
        .await?;
    services
        .decks
        .put_guide(
            &principal,
            &game,
            public.facts.id,
            GuideInput {
                content_type: "markdown".into(),
                content: "# Game plan\n\nKeep two lands and a scholar. Counter the first threat; \
                          cast Chromium at the end of the opponent's turn."
                    .into(),
                is_premium: false,
            },
        )
        .await?;
    let private = services
        .decks
        .create(
            &principal,
            &game,
            DeckChanges {
                name: Some("Boros Knights (draft)".into()),
                visibility: Some(vec!["private".into()]),
                cards: Some(vec![
                    line("mainboard", 4, "Truefire Captain"),
                    line("mainboard", 4, "Fearless Halberdier"),
                    line("mainboard", 4, "Shield Mare"),
                    line("mainboard", 12, "Mountain"),
                ]),
                ..DeckChanges::default()
            },
        )
        .await?;
    // A fork of the public deck with more Islands: `forked_from` on it, `forks` 1 on the
    // source, and something for `compare` to show.
    let fork = services
        .decks
        .fork(
            &principal,
            &game,
            public.facts.id,
            ForkRequest {
                name: Some("Chromium Control (more Islands)".into()),
                visibility: Some(vec!["public".into()]),
                version: None,
            },
        )
        .await?;
    services
        .decks
        .update(
            &principal,
            &game,
            fork.facts.id,
            DeckChanges {
                cards: Some(chromium_cards(12, 7)),
                ..DeckChanges::default()
            },
            None,
        )
        .await?;
    Ok((
        public.facts.id.to_string(),
        private.facts.id.to_string(),
        fork.facts.id.to_string(),
    ))
}

/// A `fab` card by its printed name and pitch (1 red, 2 yellow, 3 blue).
fn pitched(section: &str, quantity: u32, name: &str, pitch: u8) -> CardLineInput {
    let mut line = line(section, quantity, name);
    line.identifier.pitch = Some(pitch.to_string());
    line
}

/// Dorinthea Ironsong's Welcome to Rathe Warrior deck: her hero card, her sword and two pieces
/// of equipment in the arena, and 69 cards (23 cards, three copies each) in the deck, every one
/// legal in Classic Constructed and for her.
pub fn dorinthea_cards() -> Vec<CardLineInput> {
    let mut cards = vec![
        line("hero", 1, "Dorinthea Ironsong"),
        line("arena", 1, "Dawnblade"),
        line("arena", 1, "Braveforge Bracers"),
        line("arena", 1, "Refraction Bolters"),
    ];
    let deck: [(&str, &[u8]); 9] = [
        ("Biting Blade", &[1, 2, 3]),
        ("Driving Blade", &[1, 2, 3]),
        ("Ironsong Response", &[1, 2, 3]),
        ("Overpower", &[1, 2]),
        ("Sharpen Steel", &[1, 2, 3]),
        ("Steelblade Shunt", &[1, 2, 3]),
        ("Stroke of Foresight", &[1, 3]),
        ("Warrior's Valor", &[1, 2]),
        ("Sink Below", &[1, 3]),
    ];
    for (name, pitches) in deck {
        cards.extend(pitches.iter().map(|&pitch| pitched("deck", 3, name, pitch)));
    }
    cards
}

/// The public `fab` demo deck; returns its id.
async fn seed_fab_deck(services: &Services, owner: &User) -> anyhow::Result<String> {
    let game = services.catalog.game("fab").await?;
    let principal =
        Principal::personal_access_token(owner, Scope::ALL.into_iter().collect::<Scopes>());
    let deck = services
        .decks
        .create(
            &principal,
            &game,
            DeckChanges {
                name: Some("Dorinthea Ironsong".into()),
                notes: Some(
                    "A Classic Constructed Warrior deck from Welcome to Rathe, built from the \
                     bundled fab catalog."
                        .into(),
                ),
                visibility: Some(vec!["public".into()]),
                format: Patch::Set(format_id("fab", "cc").to_string()),
                legal: Some(true),
                archetype: Patch::Set("Aggro".into()),
                cards: Some(dorinthea_cards()),
                ..DeckChanges::default()
            },
        )
        .await?;
    Ok(deck.facts.id.to_string())
}

fn swap(special_card_type: &str, card_name: &str, quantity: i64) -> OverrideInput {
    OverrideInput {
        special_card_type: special_card_type.into(),
        card_id: card_name.to_lowercase().replace(' ', "-"),
        card_name: card_name.into(),
        quantity: Some(quantity),
        sort_order: None,
    }
}

fn matchup(
    opponent: &str,
    archetype: &str,
    difficulty: &str,
    plan: &str,
    swaps: Vec<OverrideInput>,
) -> MatchupChanges {
    MatchupChanges {
        opponent_deck_name: Some(opponent.into()),
        opponent_archetype: Patch::Set(archetype.into()),
        difficulty: Some(difficulty.into()),
        notes: Some(plan.into()),
        special_card_overrides: Some(swaps),
        ..MatchupChanges::default()
    }
}

/// A public sideboard guide with two matchups on the public demo deck; returns its id.
async fn seed_sideboard_guide(
    services: &Services,
    owner: &User,
    deck_id: &str,
) -> anyhow::Result<String> {
    let game = services.catalog.game("mtg").await?;
    let principal =
        Principal::personal_access_token(owner, Scope::ALL.into_iter().collect::<Scopes>());
    let input = NewGuideInput {
        deck_id: Some(deck_id.to_owned()),
        fields: GuideChanges {
            name: Some("Chromium Control: sideboard plan".into()),
            description: Some("What comes in and out in the two most common matchups.".into()),
            visibility: Some(vec!["public".into()]),
            tags: Some(vec!["commander".into(), "control".into()]),
            format: Patch::Set("Commander".into()),
            ..GuideChanges::default()
        },
        matchups: vec![
            matchup(
                "Mono-Red Burn",
                "Aggro",
                "HARD",
                "Trade early, keep life high; Chromium blocks well.",
                vec![
                    swap("in", "Guild Summit", 1),
                    swap("out", "Tolarian Scholar", 1),
                ],
            ),
            matchup(
                "Azorius Control",
                "Control",
                "EASY",
                "Hold counters for their wraths; win on the end step.",
                vec![swap("out", "Find // Finality", 1)],
            ),
        ],
    };
    let guide = services
        .sideboard_guides
        .create(&principal, &game, input)
        .await?;
    Ok(guide.guide.id.to_string())
}

/// What `deckhand serve` prints on the in-memory store.
pub fn banner(credentials: &DemoCredentials, public_url: &str) -> String {
    format!(
        "\nDeckhand is running on the in-memory store: nothing persists across restarts.\n\
         Demo user:     {username} (id {id}, password {password})\n\
         Demo token:    {token}\n\
         Demo partner:  {partner} (secret {secret})\n\
         Demo API key:  {api_key}\n\
         OAuth client:  {client_id} (secret {client_secret}, redirect {redirect}; see docs/oauth.md)\n\
         Demo decks:    public {deck}, private {private}, fork {fork} (of the public one)\n\
         Demo sideboard guide: {guide}\n\
         Demo fab deck: {fab_deck} (Dorinthea Ironsong, Classic Constructed)\n\n\
         Try it:\n  curl -s -H 'Authorization: Bearer {token}' {public_url}/api/public/v1/_probe/user\n  \
         curl -s -H 'X-Api-Key: {api_key}' {public_url}/api/public/v1/_probe/partner\n  \
         curl -s '{public_url}/api/public/v1/games/mtg/decks?include=summary'\n  \
         curl -s '{public_url}/api/public/v1/games/mtg/decks/{deck}?expand=cards'\n  \
         curl -s '{public_url}/api/public/v1/games/mtg/decks/{deck}/compare/{fork}?format=text'\n  \
         curl -s -H 'Authorization: Bearer {token}' {public_url}/api/public/v1/games/mtg/sideboard-guides/{guide}\n  \
         deckhand admin sign --partner {partner} --secret {secret} --path /api/public/v1/_probe/partner --base-url {public_url}\n",
        deck = credentials.public_deck_id,
        fork = credentials.fork_deck_id,
        private = credentials.private_deck_id,
        guide = credentials.sideboard_guide_id,
        fab_deck = credentials.fab_deck_id,
        partner = credentials.partner,
        secret = credentials.partner_secret,
        api_key = credentials.partner_api_key,
        client_id = credentials.oauth_client_id,
        client_secret = credentials.oauth_client_secret,
        redirect = DEMO_REDIRECT_URI,
        username = credentials.username,
        id = credentials.user_id,
        password = credentials.password,
        token = credentials.personal_access_token,
    )
}
