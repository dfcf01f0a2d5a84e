DROP INDEX decks_list_by_edited;
CREATE INDEX decks_list_by_edited ON decks (game, updated_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal, name)
    WHERE NOT is_archived;
DROP INDEX decks_list_by_created;
CREATE INDEX decks_list_by_created ON decks (game, created_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal, name)
    WHERE NOT is_archived;

CREATE OR REPLACE FUNCTION deck_counted_cards() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT coalesce(array_agg(counted.card_id ORDER BY counted.card_id), '{}'),
           coalesce(array_agg(counted.copies ORDER BY counted.card_id), '{}')
      INTO NEW.card_ids, NEW.card_copies
      FROM (SELECT (line -> 'card' ->> 'card_id')::uuid AS card_id,
                   sum((line ->> 'quantity')::integer)::integer AS copies
              FROM json_array_elements(NEW.cards) AS line
              JOIN game_sections s
                ON s.game = NEW.game AND s.key = line ->> 'section' AND s.counted
             GROUP BY 1) AS counted;
    RETURN NEW;
END;
$$;

ALTER TABLE decks DROP COLUMN card_bloom;
DROP FUNCTION deck_card_bloom(uuid[]);
