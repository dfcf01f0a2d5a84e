-- Card search and card statistics (docs/adr/0003-card-search-and-stats.md).
--
-- Each deck keeps the cards of its counted sections beside its card list: `card_ids` (sorted,
-- each card once, any printing) and `card_copies` (the copies of each, in the same order). The
-- deck save's own statement keeps them: this trigger fills them from the card list whenever an
-- INSERT writes a deck or an UPDATE writes its `cards` (a save that keeps the card list does not
-- fire it). Which sections count is the game's data (`game_sections.counted`), read here as the
-- domain reads it (`decks::card_search::counted_copies`).
ALTER TABLE decks
    ADD COLUMN card_ids uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN card_copies integer[] NOT NULL DEFAULT '{}';

CREATE FUNCTION deck_counted_cards() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER deck_counted_cards BEFORE INSERT OR UPDATE OF cards ON decks
    FOR EACH ROW EXECUTE FUNCTION deck_counted_cards();

-- The decks there are: the trigger fires on the rewrite of `cards`. Their list counters are not
-- bumped row by row (a chain of row versions each bump walks again): no list total can depend
-- on the new columns yet.
ALTER TABLE decks DISABLE TRIGGER deck_list_changed;
UPDATE decks SET cards = cards;
ALTER TABLE decks ENABLE TRIGGER deck_list_changed;

-- `cards=` and `excludeCards=` of the deck list: `card_ids @> ARRAY[...]`. Only decks a list can
-- hold (archived ones never are). fastupdate (the default) queues a save's entries in the
-- pending list, merged by autovacuum, so a save pays little for the index.
CREATE INDEX decks_card_ids ON decks USING gin (card_ids) WHERE NOT is_archived;

-- A card's statistics as last gathered, for every instance to answer alike: one row per game,
-- card and format (the nil UUID for "every format"). `played_with` holds the candidates of
-- `decks::card_search::CardUsage` as a JSON array of [card id, decks], most first.
CREATE TABLE card_stats (
    game text NOT NULL,
    card_id uuid NOT NULL,
    format_id uuid NOT NULL,
    decks bigint NOT NULL,
    all_decks bigint NOT NULL,
    copies bigint NOT NULL,
    played_with json NOT NULL,
    computed_at timestamptz NOT NULL,
    PRIMARY KEY (game, card_id, format_id)
);
