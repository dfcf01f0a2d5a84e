DELETE FROM deck_views v WHERE NOT EXISTS (SELECT 1 FROM decks d WHERE d.id = v.deck_id);
ALTER TABLE deck_views ADD CONSTRAINT deck_views_deck_id_fkey
    FOREIGN KEY (deck_id) REFERENCES decks (id) ON DELETE CASCADE;
