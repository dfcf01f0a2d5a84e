-- A sieve of each deck's counted cards in the date-sorted list indexes, so that a `cards=` page
-- walked down the list (docs/adr/0003-card-search-and-stats.md) passes over the decks that do
-- not hold its cards in the index alone, instead of fetching each one's `card_ids` from the
-- heap: a walk for two common cards on 100,000 decks read about 460 heap rows for its 20
-- (docs/benchmarks.md, "Card search and card statistics").
--
-- `card_bloom` is a Bloom filter: for each counted card, three bits of 512 are set, taken from
-- the MD5 of the card id's text (stable across PostgreSQL versions and platforms, unlike the
-- built-in hash functions). A deck holding a card has all its bits set; a deck without it may
-- too (about one in a hundred for a 40-card deck, one in twelve for a 100-card one), so the
-- walk checks `card_ids` on the rows the sieve lets through.
--
-- PL/pgSQL, not SQL: a SQL function with a FROM clause is not inlined, and is planned again on
-- every call (0.17 ms; this one takes 0.01 to 0.05 ms), once per walked page for the wanted
-- cards.
CREATE FUNCTION deck_card_bloom(card_ids uuid[]) RETURNS bit(512)
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    bits bit(512) := repeat('0', 512)::bit(512);
    hashed bytea;
    card_id uuid;
BEGIN
    FOREACH card_id IN ARRAY card_ids LOOP
        hashed := decode(md5(card_id::text), 'hex');
        FOR i IN 0..2 LOOP
            bits := set_bit(bits, (get_byte(hashed, 2 * i) * 256 + get_byte(hashed, 2 * i + 1)) % 512, 1);
        END LOOP;
    END LOOP;
    RETURN bits;
END;
$$;

ALTER TABLE decks ADD COLUMN card_bloom bit(512) NOT NULL DEFAULT repeat('0', 512)::bit(512);

-- Kept by the trigger that keeps `card_ids`, so only a save that writes the card list pays.
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
    NEW.card_bloom := deck_card_bloom(NEW.card_ids);
    RETURN NEW;
END;
$$;

-- The decks there are, without bumping their list counters row by row (no list total depends on
-- the new column).
ALTER TABLE decks DISABLE TRIGGER deck_list_changed;
UPDATE decks SET card_bloom = deck_card_bloom(card_ids) WHERE card_ids <> '{}';
ALTER TABLE decks ENABLE TRIGGER deck_list_changed;

DROP INDEX decks_list_by_edited;
CREATE INDEX decks_list_by_edited ON decks (game, updated_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal, name,
             card_bloom)
    WHERE NOT is_archived;
DROP INDEX decks_list_by_created;
CREATE INDEX decks_list_by_created ON decks (game, created_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal, name,
             card_bloom)
    WHERE NOT is_archived;
