//! Format checks (contract, "Format checks"): a format's deck rules and each card's
//! deck-building facts are data; [`check`] is the one pure function that decides whether a
//! deck is legal in a format at a date, and exactly why not.

pub mod check;
#[cfg(test)]
mod fab_tests;
mod service;
#[cfg(test)]
mod tests;

/// The data a check reads lives with the catalog (formats and cards own it); named here too.
pub use crate::catalog::deck_rules::{
    CardFacts, CardTextRules, CommanderRules, CopyAllowance, FormatRules, HeroCard, HeroRules,
    Legality, LegalityChange, LegalityHistory, PartnerAbility, partners, recorded_at, text_rules,
};
pub use crate::catalog::seeds;
pub use check::{CheckLine, Problem, ProblemCard, Rule, check};
pub use service::{CheckError, CheckReport, FormatService, LegalityRecord, RecordLegalityError};
