//! Helpers more than one area of the contract uses: list queries and their readers, OAuth
//! clients, grants and tokens set up in a store, idempotency claims.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::decks::{
    DeckFilters, DeckListing, DeckQuery, DeckReader, DeckSort, Page, PageRequest, SortOrder,
};
use deckhand_domain::idempotency::ports::{ClaimRequest, KeyClaim};
use deckhand_domain::idempotency::{self, Fingerprint, IdempotencyKey};
use deckhand_domain::identity::{Partner, Scope, Scopes, User, UserId};
use deckhand_domain::oauth::ports::{CodeRedemption, IssuedTokens};
use deckhand_domain::oauth::{
    AccessToken, AuthorizationCode, ClientId, ClientKind, Grant, GrantId, GrantType, OAuthClient,
    RedirectUri, RefreshToken,
};
use deckhand_domain::ports::Repositories;
use deckhand_domain::sideboards::{GuideFilters, GuideQuery, GuideSort};
use uuid::Uuid;

use crate::fixtures::{now, partner_for, user};

/// What a contract returns: `Ok` when the store kept its promise.
pub type Outcome = anyhow::Result<()>;

pub(super) fn list_query(viewer: Option<UserId>) -> DeckQuery {
    DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        viewer,
        filters: DeckFilters::default(),
        sort: DeckSort::CreatedAt,
        order: SortOrder::Asc,
        page: PageRequest::new(None, None)
            .map_err(|error| anyhow::anyhow!("{error:?}"))
            .unwrap_or(PageRequest { page: 1, limit: 20 }),
    }
}

pub(super) fn names(page: &Page<DeckListing>) -> Vec<String> {
    page.items.iter().map(|deck| deck.name.clone()).collect()
}

/// An anonymous reader of mtg decks: sees the public ones.
pub(super) fn anyone() -> DeckReader {
    DeckReader {
        game: "mtg".into(),
        viewer: None,
    }
}

pub(super) fn guide_query(viewer: UserId) -> GuideQuery {
    GuideQuery {
        game: "mtg".into(),
        viewer,
        filters: GuideFilters::default(),
        sort: GuideSort::CreatedAt,
        order: SortOrder::Asc,
        page: PageRequest { page: 1, limit: 20 },
        with_summary: false,
    }
}

pub(super) fn redirect_uri(uri: &str) -> RedirectUri {
    RedirectUri::parse(uri).unwrap_or_else(|error| panic!("{error}"))
}

/// A client of `partner` with every grant type and `decks:read decks:write`.
pub(super) fn oauth_client_for(partner: &Partner, public: bool) -> OAuthClient {
    OAuthClient {
        id: ClientId(Uuid::now_v7()),
        partner: partner.slug.clone(),
        name: "Deck Tracker <Pro>".into(),
        kind: if public {
            ClientKind::Public
        } else {
            ClientKind::Confidential {
                secret_hash: TokenHash::of(&Uuid::new_v4().to_string()),
            }
        },
        redirect_uris: vec![
            redirect_uri("https://app.example/cb"),
            redirect_uri("com.example.app:/oauth?x=1"),
        ],
        scopes: Scopes::from_iter([Scope::DecksRead, Scope::DecksWrite]),
        grant_types: GrantType::ALL.into_iter().collect(),
        created_at: now(),
        disabled_at: None,
    }
}

/// A user, a partner of theirs and a confidential client of it, stored.
pub(super) async fn oauth_setup(
    repos: &Repositories,
) -> anyhow::Result<(User, Partner, OAuthClient)> {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let acme = partner_for(&alice, "acme");
    repos.partners.insert(&acme).await?;
    let client = oauth_client_for(&acme, false);
    repos.oauth.insert_client(&client).await?;
    Ok((alice, acme, client))
}

pub(super) fn code_for(client: &OAuthClient, owner: &User) -> AuthorizationCode {
    AuthorizationCode {
        code_hash: TokenHash::of(&Uuid::new_v4().to_string()),
        client_id: client.id,
        user_id: owner.id,
        redirect_uri: "https://app.example/cb".into(),
        scopes: Scopes::from_iter([Scope::DecksRead]),
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        created_at: now(),
        expires_at: now() + time::Duration::minutes(10),
        redeemed_at: None,
        grant_id: None,
    }
}

pub(super) fn grant_for(client: &OAuthClient, owner: &User) -> Grant {
    Grant {
        id: GrantId(Uuid::now_v7()),
        client_id: client.id,
        user_id: owner.id,
        scopes: Scopes::from_iter([Scope::DecksRead, Scope::DecksWrite]),
        jkt: None,
        created_at: now(),
        revoked_at: None,
    }
}

pub(super) fn tokens_for(grant: &Grant) -> IssuedTokens {
    IssuedTokens {
        access: AccessToken {
            token_hash: TokenHash::of(&Uuid::new_v4().to_string()),
            grant_id: grant.id,
            scopes: Scopes::from_iter([Scope::DecksRead]),
            issued_at: now(),
            expires_at: now() + time::Duration::hours(1),
            revoked_at: None,
        },
        refresh: Some(RefreshToken {
            token_hash: TokenHash::of(&Uuid::new_v4().to_string()),
            grant_id: grant.id,
            issued_at: now(),
            expires_at: now() + time::Duration::days(30),
            rotated_at: None,
        }),
    }
}

/// A grant started by redeeming a fresh code, with its first tokens.
pub(super) async fn started_grant(
    repos: &Repositories,
    client: &OAuthClient,
    owner: &User,
) -> anyhow::Result<(Grant, IssuedTokens)> {
    start_grant(repos, client, owner, grant_for(client, owner)).await
}

/// [`started_grant`] of this grant.
pub(super) async fn start_grant(
    repos: &Repositories,
    client: &OAuthClient,
    owner: &User,
    grant: Grant,
) -> anyhow::Result<(Grant, IssuedTokens)> {
    let code = code_for(client, owner);
    repos.oauth.insert_code(&code).await?;
    let tokens = tokens_for(&grant);
    let redeemed = repos
        .oauth
        .redeem_code(&code.code_hash, now(), &grant, &tokens)
        .await?;
    anyhow::ensure!(redeemed == CodeRedemption::Redeemed, "{redeemed:?}");
    Ok((grant, tokens))
}

pub(super) fn refresh_of(tokens: &IssuedTokens) -> anyhow::Result<&RefreshToken> {
    tokens
        .refresh
        .as_ref()
        .context("tokens with a refresh token")
}

pub(super) fn key_claim(caller: &str, key: &str) -> KeyClaim {
    KeyClaim {
        caller: caller.into(),
        key: IdempotencyKey::parse(key.as_bytes()).unwrap_or_else(|_| unreachable!("a test key")),
        claim_id: Uuid::now_v7(),
    }
}

pub(super) fn claim_request(
    claim: &KeyClaim,
    body: &[u8],
    at: time::OffsetDateTime,
) -> ClaimRequest {
    ClaimRequest {
        claim: claim.clone(),
        fingerprint: Fingerprint::of("POST", "/games/mtg/decks", body),
        now: at,
        expires_at: at + idempotency::KEY_LIFETIME,
        abandoned_before: at - idempotency::ABANDONED_AFTER,
    }
}
