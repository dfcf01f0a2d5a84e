//! The demo data set: a user and a personal access token holding every scope, and a partner of
//! that user (every scope, every game) with an API key, so that a fresh `cargo run` can be
//! tried at once.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use deckhand_domain::Services;
use deckhand_domain::identity::{
    GameScopes, NewPartnerRequest, NewPatRequest, PartnerSlug, Scope, UserLookup,
};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct DemoCredentials {
    pub user_id: String,
    pub username: String,
    pub password: String,
    pub personal_access_token: String,
    pub partner: String,
    pub partner_secret: String,
    pub partner_api_key: String,
}

pub const DEMO_USERNAME: &str = "demo";
pub const DEMO_PARTNER: &str = "demo-partner";

pub async fn seed(services: &Services) -> anyhow::Result<DemoCredentials> {
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
    Ok(DemoCredentials {
        user_id: user.id.to_string(),
        username: user.username.as_str().to_owned(),
        password,
        personal_access_token: token,
        partner: partner.slug.as_str().to_owned(),
        partner_secret,
        partner_api_key,
    })
}

/// What `deckhand serve` prints on the in-memory store.
pub fn banner(credentials: &DemoCredentials, public_url: &str) -> String {
    format!(
        "\nDeckhand is running on the in-memory store: nothing persists across restarts.\n\
         Demo user:     {username} (id {id}, password {password})\n\
         Demo token:    {token}\n\
         Demo partner:  {partner} (secret {secret})\n\
         Demo API key:  {api_key}\n\n\
         Try it:\n  curl -s -H 'Authorization: Bearer {token}' {public_url}/api/public/v1/_probe/user\n  \
         curl -s -H 'X-Api-Key: {api_key}' {public_url}/api/public/v1/_probe/partner\n  \
         deckhand admin sign --partner {partner} --secret {secret} --path /api/public/v1/_probe/partner --base-url {public_url}\n",
        partner = credentials.partner,
        secret = credentials.partner_secret,
        api_key = credentials.partner_api_key,
        username = credentials.username,
        id = credentials.user_id,
        password = credentials.password,
        token = credentials.personal_access_token,
    )
}
