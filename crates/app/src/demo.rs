//! The demo data set: a user and a personal access token holding every scope, so that a fresh
//! `cargo run` can be tried at once.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use deckhand_domain::Services;
use deckhand_domain::identity::{NewPatRequest, Scope, UserLookup};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct DemoCredentials {
    pub user_id: String,
    pub username: String,
    pub password: String,
    pub personal_access_token: String,
}

pub const DEMO_USERNAME: &str = "demo";

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
    Ok(DemoCredentials {
        user_id: user.id.to_string(),
        username: user.username.as_str().to_owned(),
        password,
        personal_access_token: token,
    })
}

/// What `deckhand serve` prints on the in-memory store.
pub fn banner(credentials: &DemoCredentials, public_url: &str) -> String {
    format!(
        "\nDeckhand is running on the in-memory store: nothing persists across restarts.\n\
         Demo user:     {username} (id {id}, password {password})\n\
         Demo token:    {token}\n\n\
         Try it:\n  curl -s -H 'Authorization: Bearer {token}' {public_url}/api/public/v1/_probe/user\n",
        username = credentials.username,
        id = credentials.user_id,
        password = credentials.password,
        token = credentials.personal_access_token,
    )
}
