use std::collections::BTreeSet;

use super::{Scope, Scopes, User, UserId, Username};

/// The way a request authenticated, one per accepted combination of credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Anonymous,
    PersonalAccessToken,
    PartnerSignature,
    PartnerSignatureWithPat,
    PartnerApiKey,
    OAuthBearer,
    OAuthDpop,
}

/// The games a partner may act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameScopes {
    All,
    Only(BTreeSet<String>),
}

impl GameScopes {
    pub fn allows(&self, game: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(games) => games.contains(game),
        }
    }

    /// The game scopes as the probe reports them: `["*"]` or the sorted slugs.
    pub fn names(&self) -> Vec<String> {
        match self {
            Self::All => vec!["*".to_owned()],
            Self::Only(games) => games.iter().cloned().collect(),
        }
    }
}

/// The partner a request comes through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartnerRef {
    pub slug: String,
    pub created_by: UserId,
    pub game_scopes: GameScopes,
    pub tier: Tier,
}

/// A rate-limit tier name: `anonymous`, `user`, `partner`, or a partner's own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tier(pub String);

impl Tier {
    pub fn anonymous() -> Self {
        Self("anonymous".into())
    }
    pub fn user() -> Self {
        Self("user".into())
    }
    pub fn partner() -> Self {
        Self("partner".into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The user a request acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrincipalUser {
    pub id: UserId,
    pub username: Username,
    pub premium: bool,
}

impl From<&User> for PrincipalUser {
    fn from(user: &User) -> Self {
        Self {
            id: user.id,
            username: user.username.clone(),
            premium: user.premium,
        }
    }
}

/// Who a request acts as, with what rights. Built only by the authenticator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub lane: Lane,
    pub user: Option<PrincipalUser>,
    pub partner: Option<PartnerRef>,
    pub scopes: Scopes,
}

/// What an endpoint demands of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessRule {
    /// Anyone, with or without credentials (games, formats, probes, health).
    Open,
    /// Anonymous callers pass (and see public data only); authenticated ones need the scope.
    AnonymousOr(Scope),
    /// An authenticated caller holding the scope.
    Authenticated(Scope),
    /// Any authenticated caller; its scopes decide what it sees (the events feed).
    SignedIn,
    /// A caller with a user identity (a partner acting alone has none: 401) holding every one
    /// of the scopes; lacking any, the 403 names them all (a user's own collection).
    UserWith(&'static [Scope]),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessDenied {
    #[error("this endpoint needs credentials")]
    AuthenticationRequired,
    #[error("these credentials are not accepted by this endpoint")]
    LaneNotAccepted,
    #[error("the credentials lack a required scope")]
    InsufficientScope {
        required: Vec<String>,
        granted: Vec<String>,
    },
}

impl Principal {
    pub fn anonymous() -> Self {
        Self {
            lane: Lane::Anonymous,
            user: None,
            partner: None,
            scopes: Scopes::none(),
        }
    }

    pub fn personal_access_token(user: &User, scopes: Scopes) -> Self {
        Self {
            lane: Lane::PersonalAccessToken,
            user: Some(user.into()),
            partner: None,
            scopes,
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.lane == Lane::Anonymous
    }

    /// The opaque principal string used for rate limiting and audit.
    pub fn caller(&self) -> String {
        match (&self.partner, &self.user) {
            (Some(partner), Some(user)) => format!("partner:{}+user:{}", partner.slug, user.id),
            (Some(partner), None) => format!("partner:{}", partner.slug),
            (None, Some(user)) => format!("user:{}", user.id),
            (None, None) => "anonymous".to_owned(),
        }
    }

    pub fn tier(&self) -> Tier {
        match (&self.partner, &self.user) {
            (Some(partner), _) => partner.tier.clone(),
            (None, Some(_)) => Tier::user(),
            (None, None) => Tier::anonymous(),
        }
    }

    /// The user that writes act as: the user, else the partner's `created_by` user.
    pub fn acting_user(&self) -> Option<UserId> {
        self.user
            .as_ref()
            .map(|user| user.id)
            .or_else(|| self.partner.as_ref().map(|partner| partner.created_by))
    }

    /// Checks `rule` for an endpoint of `game` (`None` for endpoints outside any game).
    /// Order: credentials, then the partner's game scopes, then the scope.
    pub fn authorize(&self, rule: AccessRule, game: Option<&str>) -> Result<(), AccessDenied> {
        let required: &[Scope] = match rule {
            AccessRule::Open => return Ok(()),
            AccessRule::AnonymousOr(_) if self.is_anonymous() => return Ok(()),
            AccessRule::Authenticated(_) | AccessRule::SignedIn if self.is_anonymous() => {
                return Err(AccessDenied::AuthenticationRequired);
            }
            AccessRule::UserWith(_) if self.user.is_none() => {
                return Err(AccessDenied::AuthenticationRequired);
            }
            AccessRule::AnonymousOr(ref scope) | AccessRule::Authenticated(ref scope) => {
                std::slice::from_ref(scope)
            }
            AccessRule::UserWith(scopes) => scopes,
            AccessRule::SignedIn => &[],
        };
        if let (Some(partner), Some(game)) = (&self.partner, game)
            && !partner.game_scopes.allows(game)
        {
            return Err(AccessDenied::InsufficientScope {
                required: vec![format!("game:{game}")],
                granted: partner
                    .game_scopes
                    .names()
                    .into_iter()
                    .map(|name| format!("game:{name}"))
                    .collect(),
            });
        }
        if required.iter().all(|scope| self.scopes.contains(*scope)) {
            return Ok(());
        }
        let mut names: Vec<String> = required
            .iter()
            .map(|scope| scope.as_str().to_owned())
            .collect();
        names.sort();
        Err(AccessDenied::InsufficientScope {
            required: names,
            granted: self.scopes.names(),
        })
    }

    /// Rejects lanes an endpoint does not take (the probes are particular about theirs).
    pub fn require_lane(&self, accepted: &[Lane]) -> Result<(), AccessDenied> {
        if accepted.contains(&self.lane) {
            Ok(())
        } else if self.is_anonymous() {
            Err(AccessDenied::AuthenticationRequired)
        } else {
            Err(AccessDenied::LaneNotAccepted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;
    use uuid::Uuid;

    fn user() -> User {
        User {
            id: UserId(Uuid::from_u128(7)),
            username: Username::parse("alice").unwrap(),
            active: true,
            premium: false,
            password_hash: None,
            created_at: datetime!(2026-01-01 0:00 UTC),
        }
    }

    fn pat_principal(scopes: &str) -> Principal {
        Principal::personal_access_token(&user(), Scopes::parse_list(scopes).unwrap())
    }

    fn partner(games: GameScopes) -> PartnerRef {
        PartnerRef {
            slug: "acme".into(),
            created_by: UserId(Uuid::from_u128(9)),
            game_scopes: games,
            tier: Tier::partner(),
        }
    }

    #[test]
    fn caller_strings_follow_the_contract() {
        let id = Uuid::from_u128(7);
        assert_eq!(Principal::anonymous().caller(), "anonymous");
        assert_eq!(pat_principal("").caller(), format!("user:{id}"));
        let mut both = pat_principal("");
        both.partner = Some(partner(GameScopes::All));
        assert_eq!(both.caller(), format!("partner:acme+user:{id}"));
        both.user = None;
        assert_eq!(both.caller(), "partner:acme");
        assert_eq!(both.acting_user(), Some(UserId(Uuid::from_u128(9))));
    }

    #[test]
    fn anonymous_callers_pass_public_reads_but_not_writes() {
        let anonymous = Principal::anonymous();
        assert_eq!(
            anonymous.authorize(AccessRule::AnonymousOr(Scope::DecksRead), Some("mtg")),
            Ok(())
        );
        assert_eq!(
            anonymous.authorize(AccessRule::Authenticated(Scope::DecksWrite), Some("mtg")),
            Err(AccessDenied::AuthenticationRequired)
        );
        assert_eq!(anonymous.tier(), Tier::anonymous());
    }

    #[test]
    fn write_scope_does_not_grant_read() {
        let writer = pat_principal("decks:write");
        assert_eq!(
            writer.authorize(AccessRule::AnonymousOr(Scope::DecksRead), Some("mtg")),
            Err(AccessDenied::InsufficientScope {
                required: vec!["decks:read".into()],
                granted: vec!["decks:write".into()],
            })
        );
    }

    #[test]
    fn partner_game_scopes_are_checked_before_scopes() {
        let mut principal = pat_principal("");
        principal.partner = Some(partner(GameScopes::Only(["lorcana".to_owned()].into())));
        assert_eq!(
            principal.authorize(AccessRule::AnonymousOr(Scope::DecksRead), Some("mtg")),
            Err(AccessDenied::InsufficientScope {
                required: vec!["game:mtg".into()],
                granted: vec!["game:lorcana".into()],
            })
        );
    }

    #[test]
    fn a_collection_needs_a_user_and_names_every_scope_it_lacks() {
        const NEEDS: AccessRule = AccessRule::UserWith(&[Scope::DecksRead, Scope::CollectionRead]);
        assert_eq!(
            Principal::anonymous().authorize(NEEDS, Some("mtg")),
            Err(AccessDenied::AuthenticationRequired)
        );
        let mut partner_alone = pat_principal("collection:read decks:read");
        partner_alone.user = None;
        partner_alone.partner = Some(partner(GameScopes::All));
        assert_eq!(
            partner_alone.authorize(NEEDS, Some("mtg")),
            Err(AccessDenied::AuthenticationRequired)
        );
        assert_eq!(
            pat_principal("decks:read").authorize(NEEDS, Some("mtg")),
            Err(AccessDenied::InsufficientScope {
                required: vec!["collection:read".into(), "decks:read".into()],
                granted: vec!["decks:read".into()],
            })
        );
        assert_eq!(
            pat_principal("collection:read decks:read").authorize(NEEDS, Some("mtg")),
            Ok(())
        );
    }

    #[test]
    fn lanes_are_restricted_per_endpoint() {
        let accepted = [
            Lane::PersonalAccessToken,
            Lane::OAuthBearer,
            Lane::OAuthDpop,
        ];
        assert_eq!(pat_principal("").require_lane(&accepted), Ok(()));
        assert_eq!(
            Principal::anonymous().require_lane(&accepted),
            Err(AccessDenied::AuthenticationRequired)
        );
        let mut partner_only = Principal::anonymous();
        partner_only.lane = Lane::PartnerApiKey;
        assert_eq!(
            partner_only.require_lane(&accepted),
            Err(AccessDenied::LaneNotAccepted)
        );
    }
}
