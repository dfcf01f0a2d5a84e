-- A history record stores a card list only when the save changed it. A record whose save kept
-- the cards names, in `cards_from`, the record of the same deck that holds them, and its
-- `content` has no "cards" key; a holder never shares in turn, so one join finds any record's
-- cards. Most saves change notes or settings, not the list: a PATCH of its notes wrote about
-- 14 KB of JSON (6 KB compressed, in TOAST) into its record, most of what a save cost
-- PostgreSQL (docs/benchmarks.md, "Fourth pass"). Records written before keep their cards.
ALTER TABLE deck_versions
    ADD COLUMN cards_from integer,
    ADD CONSTRAINT deck_versions_cards_from_earlier CHECK (cards_from < version_number),
    ADD CONSTRAINT deck_versions_cards_from_fkey FOREIGN KEY (deck_id, cards_from)
        REFERENCES deck_versions (deck_id, version_number) ON DELETE CASCADE;
-- What the foreign key looks up when a deck, and with it its history, is deleted.
CREATE INDEX deck_versions_by_cards_from ON deck_versions (deck_id, cards_from)
    WHERE cards_from IS NOT NULL;
