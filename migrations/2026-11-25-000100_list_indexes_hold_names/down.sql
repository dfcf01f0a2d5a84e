DROP INDEX decks_list_by_edited;
CREATE INDEX decks_list_by_edited ON decks (game, updated_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal)
    WHERE NOT is_archived;
DROP INDEX decks_list_by_created;
CREATE INDEX decks_list_by_created ON decks (game, created_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal)
    WHERE NOT is_archived;
