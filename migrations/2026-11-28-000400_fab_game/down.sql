-- Cascades to the game's sections, formats, cards and printings; refused while decks,
-- sideboard guides or collections of `fab` exist.
DELETE FROM games WHERE slug = 'fab';
