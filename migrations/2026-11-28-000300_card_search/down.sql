DROP TABLE card_stats;
DROP INDEX decks_card_ids;
DROP TRIGGER deck_counted_cards ON decks;
DROP FUNCTION deck_counted_cards();
ALTER TABLE decks DROP COLUMN card_ids, DROP COLUMN card_copies;
