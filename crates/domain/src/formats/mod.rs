//! Format checks (contract, "Format checks"): a format's deck rules and each card's
//! deck-building facts are data; [`check`] is the one pure function that decides whether a
//! deck is legal in a format at a date, and exactly why not.

pub mod check;
mod model;
pub mod seeds;
mod service;
#[cfg(test)]
mod tests;

pub use check::{CheckLine, Problem, ProblemCard, Rule, check};
pub use model::{
    CardFacts, CardTextRules, CommanderRules, CopyAllowance, FormatRules, Legality, LegalityChange,
    text_rules,
};
pub use service::{CheckError, CheckReport, FormatService, LegalityRecord, RecordLegalityError};
