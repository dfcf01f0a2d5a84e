//! Registering OAuth clients for partners, listing and disabling them.

use std::collections::BTreeSet;

use deckhand_auth::{TokenHash, TokenKind, mint_token};

use super::OAuthService;
use crate::identity::{PartnerSlug, Scopes};
use crate::oauth::model::{ClientId, ClientKind, GrantType, OAuthClient, RedirectUri};
use crate::oauth::ports::InsertClientError;

pub struct NewClientRequest {
    pub partner: PartnerSlug,
    pub name: String,
    pub redirect_uris: Vec<RedirectUri>,
    pub scopes: Scopes,
    pub public: bool,
    /// `None`: both grant types.
    pub grant_types: Option<BTreeSet<GrantType>>,
}

#[derive(Debug, thiserror::Error)]
pub enum CreateClientError {
    #[error("no such partner")]
    UnknownPartner,
    #[error("a client name is 1 to 100 characters")]
    InvalidName,
    #[error("a client needs at least one redirect URI")]
    NoRedirectUri,
    #[error("a client needs at least one scope")]
    NoScopes,
    #[error("the partner does not hold {0}; a client may ask only for its partner's scopes")]
    ScopeBeyondPartner(String),
    #[error("a client needs at least one grant type")]
    NoGrantTypes,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl OAuthService {
    /// Registers a client and returns it with its one-time secret (`None` for public ones).
    // Spans record no arguments: they carry codes, tokens, secrets and passwords.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_client(
        &self,
        request: NewClientRequest,
    ) -> Result<(OAuthClient, Option<String>), CreateClientError> {
        let name = request.name.trim().to_owned();
        if !(1..=100).contains(&name.chars().count()) || name.chars().any(char::is_control) {
            return Err(CreateClientError::InvalidName);
        }
        if request.redirect_uris.is_empty() {
            return Err(CreateClientError::NoRedirectUri);
        }
        if request.scopes.is_empty() {
            return Err(CreateClientError::NoScopes);
        }
        let grant_types = request
            .grant_types
            .unwrap_or_else(|| GrantType::ALL.into_iter().collect());
        if grant_types.is_empty() {
            return Err(CreateClientError::NoGrantTypes);
        }
        let partner = self
            .partners
            .find_by_slug(&request.partner)
            .await?
            .ok_or(CreateClientError::UnknownPartner)?;
        if let Some(beyond) = request.scopes.iter().find(|s| !partner.scopes.contains(*s)) {
            return Err(CreateClientError::ScopeBeyondPartner(
                beyond.as_str().to_owned(),
            ));
        }
        let (kind, secret) = if request.public {
            (ClientKind::Public, None)
        } else {
            let secret = mint_token(TokenKind::ClientSecret, &self.system.random.bytes32()?);
            let kind = ClientKind::Confidential {
                secret_hash: TokenHash::of(&secret),
            };
            (kind, Some(secret))
        };
        let mut redirect_uris = request.redirect_uris;
        redirect_uris.dedup();
        let client = OAuthClient {
            id: ClientId(self.system.ids.new_id()),
            partner: request.partner,
            name,
            kind,
            redirect_uris,
            scopes: request.scopes,
            grant_types,
            created_at: self.system.clock.now(),
            disabled_at: None,
        };
        match self.repository.insert_client(&client).await {
            Ok(()) => Ok((client, secret)),
            Err(InsertClientError::UnknownPartner) => Err(CreateClientError::UnknownPartner),
            Err(InsertClientError::Unexpected(error)) => Err(error.into()),
        }
    }

    /// Every registered client, or those of `partner`, oldest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_clients(
        &self,
        partner: Option<PartnerSlug>,
    ) -> anyhow::Result<Vec<OAuthClient>> {
        self.repository.list_clients(partner).await
    }

    /// Disables a client: it authorizes nothing more and every token it was issued stops
    /// working at once (the lanes, introspection and the token endpoint judge the client on
    /// each use). `None` when there is no such client.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn disable_client(&self, id: ClientId) -> anyhow::Result<Option<OAuthClient>> {
        self.repository
            .disable_client(id, self.system.clock.now())
            .await
    }
}
