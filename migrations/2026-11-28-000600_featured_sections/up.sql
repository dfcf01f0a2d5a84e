-- Which section's cards a deck features when its owner chose none, as data per game (contract,
-- "Cards on decks"; "a hero is the featured card" of `fab`): `mtg`'s commander and companion
-- sections fill the slots of those names, `fab`'s hero section the `hero` slot. A deck's
-- featured cards are derived from these in the game's section order.
ALTER TABLE game_sections ADD COLUMN featured_slot text
    CONSTRAINT game_sections_featured_slot
        CHECK (featured_slot IN ('commander', 'companion', 'cover', 'hero'));

UPDATE game_sections SET featured_slot = key
    WHERE (game, key) IN (('mtg', 'commander'), ('mtg', 'companion'), ('fab', 'hero'));
