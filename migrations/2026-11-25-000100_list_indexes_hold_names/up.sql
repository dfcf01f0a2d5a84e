-- The date-sorted list indexes also hold each deck's name, so a page filtered by name
-- (`q=...`) checks the pattern in the index, as it already did the visibility, format and flags,
-- instead of fetching every passed-over deck from the heap: `q=phoenix` page 1 on 100,000 decks
-- read 8 buffers instead of 343 (docs/benchmarks.md, "Third pass"). A save changes updated_at,
-- which rewrites these entries anyway, so renames cost nothing more.

DROP INDEX decks_list_by_edited;
CREATE INDEX decks_list_by_edited ON decks (game, updated_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal, name)
    WHERE NOT is_archived;
DROP INDEX decks_list_by_created;
CREATE INDEX decks_list_by_created ON decks (game, created_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal, name)
    WHERE NOT is_archived;
