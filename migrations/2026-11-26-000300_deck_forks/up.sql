-- Forks (contract, "Forks and comparisons"): a fork names the deck and the version it was
-- copied from, and its source counts its forks beside its other counters (`deck_stats`), so a
-- fork moves a counter row, never the source's deck row or its list index entries. A deleted
-- source leaves its forks without a source.
ALTER TABLE decks
    ADD COLUMN forked_from_id uuid
        CONSTRAINT decks_forked_from_id_fkey REFERENCES decks (id) ON DELETE SET NULL,
    ADD COLUMN forked_from_version integer
        CONSTRAINT decks_forked_from_version_positive CHECK (forked_from_version >= 1);

ALTER TABLE deck_stats ADD COLUMN forks bigint NOT NULL DEFAULT 0;

-- The list filter `forkedFrom`: a deck's forks in the default order, archived ones left out as
-- lists do; the columns of the game and visibility conditions are included, so those are
-- checked in the index.
CREATE INDEX decks_forks ON decks (forked_from_id, updated_at DESC, id DESC)
    INCLUDE (game, visibility, owner_id)
    WHERE forked_from_id IS NOT NULL AND NOT is_archived;
