DROP INDEX decks_forks;
ALTER TABLE deck_stats DROP COLUMN forks;
ALTER TABLE decks DROP COLUMN forked_from_version, DROP COLUMN forked_from_id;
