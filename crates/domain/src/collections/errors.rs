//! Why a collection operation did not happen, one enum per operation.

use crate::catalog::Unresolved;
use crate::validation::Violations;

/// Why a PATCH changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum PatchCollectionError {
    #[error(transparent)]
    Invalid(#[from] Violations),
    /// Some changes match nothing in the catalog.
    #[error("{} change(s) could not be resolved", .0.len())]
    Unresolved(Vec<Unresolved>),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why an import wrote nothing and answered no outcome (unresolved rows are an outcome).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The body is in no known layout, or a query parameter is wrong.
    #[error(transparent)]
    Invalid(#[from] Violations),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Why a deck's needs could not be told.
#[derive(Debug, thiserror::Error)]
pub enum NeedsError {
    /// No such deck of this game, or one the caller may not read.
    #[error("no such deck")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}
