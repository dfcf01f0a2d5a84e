//! Who may read what, stated once as values: the visibility levels an owner sets, and the read
//! rule ([`Readable`]) that decides, for one viewer, which decks and guides they may read.
//!
//! Every store applies this rule and no other: the memory store calls [`Readable::admits`], the
//! PostgreSQL adapter translates the same value into SQL in one module (`postgres::rules`).
//! Scopes are checked before any of this, at the edge (`Principal::authorize`), so a caller
//! without a read scope never reaches a store.

use serde::{Deserialize, Serialize};

use crate::identity::UserId;
use crate::validation::FieldViolation;

/// Who may see a deck or a guide. Through this API `unlisted` and `private` are both owner-only;
/// `unlisted` is kept distinct for clients that share links by other means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    Public,
    Unlisted,
    Private,
}

impl Visibility {
    pub const ALL: [Self; 3] = [Self::Public, Self::Unlisted, Self::Private];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Unlisted => "unlisted",
            Self::Private => "private",
        }
    }

    /// The wire form is an array holding exactly one level, matched case-insensitively.
    pub fn parse_levels(field: &str, levels: &[String]) -> Result<Self, FieldViolation> {
        let invalid = |message: &str| FieldViolation::new(field, "invalid", message);
        match levels {
            [level] => match level.to_ascii_lowercase().as_str() {
                "public" => Ok(Self::Public),
                "unlisted" => Ok(Self::Unlisted),
                "private" => Ok(Self::Private),
                _ => Err(invalid("must be one of public, unlisted, private")),
            },
            [] => Err(invalid(
                "must hold exactly one of public, unlisted, private",
            )),
            _ => Err(invalid("must hold exactly one level, not several")),
        }
    }

    pub fn from_stored(value: &str) -> Option<Self> {
        Self::parse_levels("visibility", &[value.to_owned()]).ok()
    }
}

/// How an item is reached: by its id, where archived items stay readable, or through a list,
/// which leaves archived items out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reach {
    ById,
    Listed,
}

/// The read rule for one viewer (`None`: anonymous): public items are readable by everyone,
/// unlisted and private ones by their owner only, archived ones by id only. Decks, sideboard
/// guides, the decks attached to a guide, likes and counted views all read through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Readable {
    pub viewer: Option<UserId>,
    pub reach: Reach,
}

impl Readable {
    /// What `viewer` may read by id.
    pub const fn by_id(viewer: Option<UserId>) -> Self {
        Self {
            viewer,
            reach: Reach::ById,
        }
    }

    /// What `viewer` may find in a list.
    pub const fn listed(viewer: Option<UserId>) -> Self {
        Self {
            viewer,
            reach: Reach::Listed,
        }
    }

    /// Whether an item of `owner` at `visibility`, archived or not, is readable under this rule.
    pub fn admits(self, visibility: Visibility, owner: UserId, is_archived: bool) -> bool {
        let visible = visibility == Visibility::Public || self.viewer == Some(owner);
        let reachable = self.reach == Reach::ById || !is_archived;
        visible && reachable
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    #[test]
    fn public_items_are_read_by_all_and_the_others_by_their_owner_only() {
        let (owner, other) = (UserId(Uuid::from_u128(1)), UserId(Uuid::from_u128(2)));
        for viewer in [None, Some(owner), Some(other)] {
            for visibility in Visibility::ALL {
                let expected = visibility == Visibility::Public || viewer == Some(owner);
                assert_eq!(
                    Readable::by_id(viewer).admits(visibility, owner, false),
                    expected,
                    "{viewer:?} reading a {visibility:?} item"
                );
            }
        }
    }

    #[test]
    fn archived_items_are_read_by_id_and_never_listed() {
        let owner = UserId(Uuid::from_u128(1));
        assert!(Readable::by_id(Some(owner)).admits(Visibility::Private, owner, true));
        assert!(Readable::by_id(None).admits(Visibility::Public, owner, true));
        assert!(!Readable::listed(Some(owner)).admits(Visibility::Public, owner, true));
        assert!(Readable::listed(None).admits(Visibility::Public, owner, false));
    }
}
