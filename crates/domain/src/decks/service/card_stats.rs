//! The service side of card search and card statistics (`decks::card_search`): the cards a
//! list filters on must be the game's, and a card's statistics are its usage as the store
//! gathers it, named from the catalog.

use uuid::Uuid;

use super::DeckService;
use crate::catalog::Game;
use crate::decks::card_search::{CardStats, CardStatsQuery};
use crate::decks::errors::{CardStatsError, ListDecksError};
use crate::decks::query::DeckFilters;
use crate::validation::{FieldViolation, Violations};

impl DeckService {
    /// Refuses card filters that name a card `game` does not have (`cards` or `excludeCards`,
    /// whichever names it). Costs no statement where the store holds the game's card facts in
    /// process.
    pub(super) async fn check_card_filters(
        &self,
        game: &Game,
        filters: &DeckFilters,
    ) -> Result<(), ListDecksError> {
        if !filters.filters_cards() {
            return Ok(());
        }
        let named = filters.named_cards();
        let known: Vec<Uuid> = self
            .catalog
            .card_facts(game, &named)
            .await?
            .into_iter()
            .map(|facts| facts.card_id)
            .collect();
        let mut v = Violations::default();
        for (field, ids) in [
            ("cards", &filters.cards),
            ("excludeCards", &filters.exclude_cards),
        ] {
            if let Some(unknown) = ids.iter().find(|id| !known.contains(id)) {
                v.push(FieldViolation::new(
                    field,
                    "unknown",
                    format!("no card {unknown} in {}", game.slug),
                ));
            }
        }
        Ok(v.into_result(())?)
    }

    /// The statistics of `card_id` among the public, non-archived decks of `game`, of the
    /// format named by `format` (its id or slug) when given. Anyone may read them.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, card = %card_id))]
    pub async fn card_stats(
        &self,
        game: &Game,
        card_id: Uuid,
        format: Option<&str>,
    ) -> Result<CardStats, CardStatsError> {
        let format = match format {
            None => None,
            Some(wanted) => Some(self.catalog.format(game, wanted).await?.ok_or_else(|| {
                Violations::from(FieldViolation::new(
                    "format",
                    "unknown",
                    format!("{} has no format {wanted:?}", game.slug),
                ))
            })?),
        };
        let card = self
            .catalog
            .card_facts(game, &[card_id])
            .await?
            .into_iter()
            .next()
            .ok_or(CardStatsError::NotFound)?;
        let usage = self
            .decks
            .card_usage(&CardStatsQuery {
                game: game.slug.clone(),
                card: card_id,
                format: format.as_ref().map(|format| format.id),
            })
            .await?;
        let candidates: Vec<Uuid> = usage.played_with.iter().map(|(id, _)| *id).collect();
        let facts = self.catalog.card_facts(game, &candidates).await?;
        Ok(CardStats::from_usage(&card, format, usage, &facts))
    }
}
