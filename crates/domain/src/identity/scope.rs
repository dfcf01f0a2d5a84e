use std::collections::BTreeSet;

/// The scope catalog. There is no hierarchy: `decks:write` does not imply `decks:read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    CollectionRead,
    CollectionWrite,
    DecksRead,
    DecksWrite,
    SideboardsRead,
    SideboardsWrite,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown scope {0:?}; known scopes are collection:read, collection:write, decks:read, decks:write, sideboards:read, sideboards:write"
)]
pub struct UnknownScope(pub String);

impl Scope {
    pub const ALL: [Scope; 6] = [
        Scope::CollectionRead,
        Scope::CollectionWrite,
        Scope::DecksRead,
        Scope::DecksWrite,
        Scope::SideboardsRead,
        Scope::SideboardsWrite,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::CollectionRead => "collection:read",
            Self::CollectionWrite => "collection:write",
            Self::DecksRead => "decks:read",
            Self::DecksWrite => "decks:write",
            Self::SideboardsRead => "sideboards:read",
            Self::SideboardsWrite => "sideboards:write",
        }
    }

    pub fn parse(input: &str) -> Result<Self, UnknownScope> {
        Self::ALL
            .into_iter()
            .find(|scope| scope.as_str() == input)
            .ok_or_else(|| UnknownScope(input.to_owned()))
    }
}

/// A set of scopes. Iteration and rendering are sorted by name (the enum's order is the
/// alphabetical order of the names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes(BTreeSet<Scope>);

impl Scopes {
    pub fn none() -> Self {
        Self::default()
    }

    /// A list separated by spaces and/or commas, as operators and OAuth clients write them.
    pub fn parse_list(input: &str) -> Result<Self, UnknownScope> {
        input
            .split([' ', ','])
            .filter(|part| !part.is_empty())
            .map(Scope::parse)
            .collect::<Result<BTreeSet<_>, _>>()
            .map(Self)
    }

    pub fn contains(&self, scope: Scope) -> bool {
        self.0.contains(&scope)
    }

    pub fn intersection(&self, other: &Scopes) -> Scopes {
        Self(self.0.intersection(&other.0).copied().collect())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn names(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|scope| scope.as_str().to_owned())
            .collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = Scope> + '_ {
        self.0.iter().copied()
    }
}

impl FromIterator<Scope> for Scopes {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_accept_spaces_and_commas_and_come_out_sorted() {
        let scopes = Scopes::parse_list("sideboards:read, decks:write decks:read").unwrap();
        assert_eq!(
            scopes.names(),
            ["decks:read", "decks:write", "sideboards:read"]
        );
        assert_eq!(Scopes::parse_list("").unwrap(), Scopes::none());
    }

    #[test]
    fn collection_scopes_sort_before_the_deck_scopes() {
        let scopes = Scopes::parse_list("decks:read collection:write,collection:read").unwrap();
        assert_eq!(
            scopes.names(),
            ["collection:read", "collection:write", "decks:read"]
        );
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Ok(scope));
        }
    }

    #[test]
    fn unknown_scopes_are_rejected_by_name() {
        assert_eq!(
            Scopes::parse_list("decks:read decks:admin"),
            Err(UnknownScope("decks:admin".into()))
        );
    }

    #[test]
    fn intersection_keeps_only_shared_scopes() {
        let a = Scopes::parse_list("decks:read decks:write").unwrap();
        let b = Scopes::parse_list("decks:write sideboards:read").unwrap();
        assert_eq!(a.intersection(&b).names(), ["decks:write"]);
    }
}
