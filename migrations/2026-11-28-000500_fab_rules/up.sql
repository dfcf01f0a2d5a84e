-- Flesh and Blood's deck rules (contract, "A second game: Flesh and Blood"), as data read by
-- the one check (`deckhand_domain::formats::check`), like mtg's.
--
-- A format's rules gain what differs between games: the section `main_min`/`main_max` count
-- (`mtg`'s mainboard, `fab`'s deck), the most cards of the pool (every counted section but the
-- hero's; NULL: not checked) and the hero rule (`hero_young`: exactly one hero, young or adult;
-- NULL: no hero rule). mtg's rows keep their meaning: mainboard, no pool, no hero.
ALTER TABLE format_rules
    ADD COLUMN main_section text NOT NULL DEFAULT 'mainboard' CHECK (main_section <> ''),
    ADD COLUMN pool_max integer CHECK (pool_max >= 0),
    ADD COLUMN hero_young boolean;

-- The values `deckhand_domain::formats::seeds::fab_rules` states: Classic Constructed (an adult
-- hero, deck at least 60, pool at most 80, 3 copies), Blitz (a young hero, deck exactly 40,
-- pool at most 52, 2 copies). The other fab formats have legality only.
INSERT INTO format_rules (format_id, main_section, main_min, main_max, sideboard_max,
                          copy_limit, singleton, pool_max, hero_young)
SELECT id, 'deck', 60, NULL, NULL, 3, false, 80, false FROM formats
WHERE game = 'fab' AND slug = 'cc';
INSERT INTO format_rules (format_id, main_section, main_min, main_max, sideboard_max,
                          copy_limit, singleton, pool_max, hero_young)
SELECT id, 'deck', 40, 40, NULL, 2, false, 52, true FROM formats
WHERE game = 'fab' AND slug = 'blitz';

-- A card's hero facts, kept by name with its other deck-building clauses: `hero` is the hero
-- a hero card is, as `legalHeroes` name heroes (`Dorinthea` for Dorinthea Ironsong; NULL: no
-- hero), `hero_young` its age; `legal_heroes` the heroes whose decks may hold the card (empty:
-- any). The `fab-cards` import writes them; a catalog imported before this needs importing
-- again.
ALTER TABLE card_text_rules
    ADD COLUMN hero text,
    ADD COLUMN hero_young boolean,
    ADD COLUMN legal_heroes text[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT card_text_rules_hero_and_age CHECK ((hero IS NULL) = (hero_young IS NULL));
