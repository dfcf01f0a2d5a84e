//! Partners and their API keys as stored, and the facts of a request that a signature covers.

use std::collections::BTreeSet;

use deckhand_auth::TokenHash;
use serde::Serialize;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{GameScopes, PartnerRef, Scopes, Tier, UserId};
use crate::validation::is_game_slug;

/// A partner's slug: 2 to 40 of `[a-z0-9-]`, as sent in `X-Partner-Id`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct PartnerSlug(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a partner slug is 2 to 40 characters of a-z, 0-9 and '-'")]
pub struct InvalidPartnerSlug;

impl PartnerSlug {
    /// Case-sensitive on purpose: the slug is signed as sent, so `ACME` is not `acme`.
    pub fn parse(input: &str) -> Result<Self, InvalidPartnerSlug> {
        let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-';
        if (2..=40).contains(&input.len()) && input.bytes().all(allowed) {
            Ok(Self(input.to_owned()))
        } else {
            Err(InvalidPartnerSlug)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PartnerSlug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("game scopes are `*` alone or game slugs of 1 to 40 characters of a-z, 0-9 and '-'")]
pub struct InvalidGameScopes;

impl GameScopes {
    /// `*`, or game slugs separated by spaces or commas.
    pub fn parse_list(input: &str) -> Result<Self, InvalidGameScopes> {
        let parts: Vec<&str> = input
            .split([' ', ','])
            .filter(|part| !part.is_empty())
            .collect();
        if parts == ["*"] {
            return Ok(Self::All);
        }
        if parts.iter().all(|slug| is_game_slug(slug)) {
            Ok(Self::Only(
                parts
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<BTreeSet<_>>(),
            ))
        } else {
            Err(InvalidGameScopes)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tier is 1 to 32 characters of a-z, 0-9, '_' and '-'")]
pub struct InvalidTier;

impl Tier {
    pub fn parse(input: &str) -> Result<Self, InvalidTier> {
        let allowed =
            |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-';
        if (1..=32).contains(&input.len()) && input.bytes().all(allowed) {
            Ok(Self(input.to_owned()))
        } else {
            Err(InvalidTier)
        }
    }
}

/// A partner as stored. Its HMAC secret is sealed (see `deckhand_auth::seal`), never plain.
#[derive(Clone, PartialEq, Eq)]
pub struct Partner {
    pub slug: PartnerSlug,
    pub created_by: UserId,
    pub scopes: Scopes,
    pub game_scopes: GameScopes,
    pub tier: Tier,
    /// `nonce || ciphertext || tag` of the secret, with the slug as associated data.
    pub sealed_secret: Vec<u8>,
    pub active: bool,
    pub created_at: OffsetDateTime,
}

impl std::fmt::Debug for Partner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partner")
            .field("slug", &self.slug)
            .field("created_by", &self.created_by)
            .field("scopes", &self.scopes)
            .field("game_scopes", &self.game_scopes)
            .field("tier", &self.tier)
            .field("active", &self.active)
            .finish_non_exhaustive()
    }
}

impl Partner {
    pub fn reference(&self) -> PartnerRef {
        PartnerRef {
            slug: self.slug.as_str().to_owned(),
            created_by: self.created_by,
            game_scopes: self.game_scopes.clone(),
            tier: self.tier.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ApiKeyId(pub Uuid);

/// A partner API key as stored: its hash, never the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub partner: PartnerSlug,
    pub key_hash: TokenHash,
    pub created_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

/// What a partner signature covers, as the HTTP adapter received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFacts {
    pub method: String,
    /// The path exactly as sent, percent-encoding kept, without the query.
    pub path: String,
    /// The raw query exactly as sent, without `?`; empty when there is none.
    pub query: String,
    /// SHA-256 of the raw body bytes (of the empty string when there is none).
    pub body_sha256: [u8; 32],
    /// `DECKHAND_PUBLIC_URL` + the path: the URI a DPoP proof's `htu` must name.
    pub public_uri: String,
}

impl RequestFacts {
    /// A bodiless GET of `path`, for callers that sign nothing (tests, the CLI).
    pub fn get(path: &str) -> Self {
        Self {
            method: "GET".into(),
            path: path.into(),
            query: String::new(),
            body_sha256: deckhand_auth::sha256(b""),
            public_uri: format!("http://localhost{path}"),
        }
    }

    /// GET, HEAD and OPTIONS change nothing, so a signature may repeat on them within its
    /// window; on every other method it is single use.
    pub fn is_safe_method(&self) -> bool {
        matches!(
            self.method.to_ascii_uppercase().as_str(),
            "GET" | "HEAD" | "OPTIONS"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_bounded_and_lower_case() {
        assert!(PartnerSlug::parse("acme-2").is_ok());
        assert!(PartnerSlug::parse("a").is_err());
        assert!(PartnerSlug::parse(&"a".repeat(40)).is_ok());
        assert!(PartnerSlug::parse(&"a".repeat(41)).is_err());
        assert!(PartnerSlug::parse("Acme").is_err());
        assert!(PartnerSlug::parse("ac_me").is_err());
    }

    #[test]
    fn game_scopes_are_a_star_or_slugs() {
        assert_eq!(GameScopes::parse_list("*"), Ok(GameScopes::All));
        assert_eq!(
            GameScopes::parse_list("mtg, lorcana").unwrap().names(),
            ["lorcana", "mtg"]
        );
        assert!(GameScopes::parse_list("* mtg").is_err());
        assert!(GameScopes::parse_list("MTG").is_err());
    }

    #[test]
    fn tiers_are_plain_names() {
        assert_eq!(Tier::parse("gold").unwrap(), Tier("gold".into()));
        assert!(Tier::parse("").is_err());
        assert!(Tier::parse("Gold tier").is_err());
    }

    #[test]
    fn only_get_head_and_options_are_safe() {
        let mut facts = RequestFacts::get("/x");
        assert!(facts.is_safe_method());
        for method in ["POST", "PATCH", "PUT", "DELETE"] {
            facts.method = method.into();
            assert!(!facts.is_safe_method(), "{method}");
        }
    }

    #[test]
    fn debug_output_leaves_out_the_sealed_secret() {
        let partner = Partner {
            slug: PartnerSlug::parse("acme").unwrap(),
            created_by: UserId(Uuid::nil()),
            scopes: Scopes::none(),
            game_scopes: GameScopes::All,
            tier: Tier::partner(),
            sealed_secret: vec![0xee; 40],
            active: true,
            created_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert!(!format!("{partner:?}").contains("238"));
    }
}
