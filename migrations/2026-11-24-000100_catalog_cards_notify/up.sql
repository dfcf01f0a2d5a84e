-- Every change to the cards or printings of a catalog notifies `deckhand_catalog` when it
-- commits, as games and formats already do (2026-11-23-000900_catalog_notify): each instance
-- keeps each game's cards and printings indexed in memory for resolution and drops its copy on
-- that channel (crates/postgres/src/catalog/cache.rs). Statement triggers: an import batch of
-- 1,000 printings notifies once, and NOTIFY folds repeats within a transaction.

CREATE TRIGGER catalog_cards_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON catalog_cards
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();
CREATE TRIGGER catalog_printings_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON catalog_printings
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();
