//! Why a deck operation did not happen: one enum per operation, each holding only the cases
//! that operation can meet, so a signature tells the truth (a read cannot "fail" with a
//! duplicate provenance). Each variant maps to one answer of the contract (`ApiError` in the
//! http crate); the shared cases convert into the enums that contain them.

use crate::catalog::Unresolved;
use crate::validation::Violations;

use super::ports::{InsertDeckError, ReviseDeckError, RevisionRefused};

/// A deck the caller may see (or, for owner-only operations, owns) was not there: the read
/// operations (`get`, `overview`, `versions`, `version`, `diff`, `compare`, `guide`,
/// `register_view`, an export of a stored deck) and `delete_guide`.
#[derive(Debug, thiserror::Error)]
pub enum FindDeckError {
    /// No such deck, or one the caller may not see or change.
    #[error("no such deck")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why `create` did not create a deck.
#[derive(Debug, thiserror::Error)]
pub enum CreateDeckError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    /// Some cards (or featured cards) match nothing in the catalog.
    #[error("{} card(s) could not be resolved", .items.len())]
    Unresolved {
        field: &'static str,
        items: Vec<Unresolved>,
    },
    #[error("the owner already has a deck with this provenance")]
    DuplicateProvenance,
    /// The caller has no user to own the deck: an anonymous caller (the access rules keep
    /// them away; the service does not rely on it).
    #[error("the credentials carry no user")]
    NoUser,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why `fork` did not fork a deck.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    /// No such source deck or version, or one the caller may not see.
    #[error("no such deck")]
    NotFound,
    /// A fork is a user's deck, and the credentials carry none: a partner acting alone.
    #[error("the credentials carry no user")]
    NoUser,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why `update` (a PATCH) saved nothing.
#[derive(Debug, thiserror::Error)]
pub enum SaveDeckError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    /// Some cards (or featured cards) match nothing in the catalog.
    #[error("{} card(s) could not be resolved", .items.len())]
    Unresolved {
        field: &'static str,
        items: Vec<Unresolved>,
    },
    /// No such deck, or one the caller does not own.
    #[error("no such deck")]
    NotFound,
    #[error("the deck is at version {current_version}")]
    PreconditionFailed { current_version: i32 },
    #[error("the owner already has a deck with this provenance")]
    DuplicateProvenance,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why `rollback` restored nothing.
#[derive(Debug, thiserror::Error)]
pub enum RollbackError {
    /// No such deck or version, or a deck the caller does not own.
    #[error("no such deck or version")]
    NotFound,
    #[error("the deck is at version {current_version}")]
    PreconditionFailed { current_version: i32 },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why `put_guide` stored no strategy guide.
#[derive(Debug, thiserror::Error)]
pub enum PutGuideError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    /// No such deck, or one the caller does not own.
    #[error("no such deck")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why an inline export payload was not rendered.
#[derive(Debug, thiserror::Error)]
pub enum ExportPayloadError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why the content a create or a save sets is refused: the part of the checks both share.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ContentError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    #[error("{} card(s) could not be resolved", .items.len())]
    Unresolved {
        field: &'static str,
        items: Vec<Unresolved>,
    },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// The content checks' refusal, for the operations that set content.
macro_rules! from_content_error {
    ($($operation:ty),+) => {$(
        impl From<ContentError> for $operation {
            fn from(error: ContentError) -> Self {
                match error {
                    ContentError::Invalid(violations) => Self::Invalid(violations),
                    ContentError::Unresolved { field, items } => Self::Unresolved { field, items },
                    ContentError::Unexpected(error) => Self::Unexpected(error),
                }
            }
        }
    )+};
}

from_content_error!(CreateDeckError, SaveDeckError);

impl From<InsertDeckError> for CreateDeckError {
    fn from(error: InsertDeckError) -> Self {
        match error {
            InsertDeckError::DuplicateProvenance => Self::DuplicateProvenance,
            InsertDeckError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

/// A fork's provenance is always manual, so a duplicate provenance cannot happen to it.
impl From<InsertDeckError> for ForkError {
    fn from(error: InsertDeckError) -> Self {
        match error {
            InsertDeckError::DuplicateProvenance => Self::Unexpected(anyhow::anyhow!(
                "a fork, whose provenance is manual, was refused as a duplicate provenance"
            )),
            InsertDeckError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

/// A missing deck, for the operations that first find the deck they act on.
macro_rules! from_find_deck_error {
    ($($operation:ty),+) => {$(
        impl From<FindDeckError> for $operation {
            fn from(error: FindDeckError) -> Self {
                match error {
                    FindDeckError::NotFound => Self::NotFound,
                    FindDeckError::Unexpected(error) => Self::Unexpected(error),
                }
            }
        }
    )+};
}

from_find_deck_error!(ForkError, RollbackError, PutGuideError);

impl From<ReviseDeckError> for SaveDeckError {
    fn from(error: ReviseDeckError) -> Self {
        match error {
            ReviseDeckError::NotFound | ReviseDeckError::Refused(RevisionRefused::NotFound) => {
                Self::NotFound
            }
            ReviseDeckError::Refused(RevisionRefused::PreconditionFailed { current_version }) => {
                Self::PreconditionFailed { current_version }
            }
            ReviseDeckError::DuplicateProvenance => Self::DuplicateProvenance,
            ReviseDeckError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

/// A rollback keeps the deck's provenance, so a duplicate provenance cannot happen to it.
impl From<ReviseDeckError> for RollbackError {
    fn from(error: ReviseDeckError) -> Self {
        match error {
            ReviseDeckError::NotFound | ReviseDeckError::Refused(RevisionRefused::NotFound) => {
                Self::NotFound
            }
            ReviseDeckError::Refused(RevisionRefused::PreconditionFailed { current_version }) => {
                Self::PreconditionFailed { current_version }
            }
            ReviseDeckError::DuplicateProvenance => Self::Unexpected(anyhow::anyhow!(
                "a rollback, which keeps the provenance, was refused as a duplicate provenance"
            )),
            ReviseDeckError::Unexpected(error) => Self::Unexpected(error),
        }
    }
}

/// Why a deck list was refused.
#[derive(Debug, thiserror::Error)]
pub enum ListDecksError {
    /// A filter names something the game does not have (a card of `cards=`).
    #[error(transparent)]
    Invalid(#[from] Violations),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why a card's statistics were refused.
#[derive(Debug, thiserror::Error)]
pub enum CardStatsError {
    /// No such card in the game.
    #[error("no such card")]
    NotFound,
    /// The format is not one of the game's.
    #[error(transparent)]
    Invalid(#[from] Violations),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}
