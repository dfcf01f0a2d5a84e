-- Flesh and Blood (contract, "A second game: Flesh and Blood"): a second real game, added as
-- rows. Its colours are the pitch colours in pitch order (1 red, 2 yellow, 3 blue); its cards
-- come from `deckhand admin catalog import --game fab --source fab-cards`.
--
-- Format ids are UUID v5 of "fab/<slug>" in the namespace 5d0c2a0e-3b8f-4c1e-9a57-6f1e2d8b4c10
-- (`deckhand_domain::catalog::format_id`; a test checks every literal below against it).

INSERT INTO games (slug, name, colors, position) VALUES
    ('fab', 'Flesh and Blood', ARRAY['red', 'yellow', 'blue'], 3);

INSERT INTO game_sections (game, key, label, counted, position) VALUES
    ('fab', 'hero', 'Hero', true, 1),
    ('fab', 'arena', 'Arena', true, 2),
    ('fab', 'deck', 'Deck', true, 3),
    ('fab', 'inventory', 'Inventory', true, 4),
    ('fab', 'maybeboard', 'Maybeboard', false, 5);

INSERT INTO formats (id, game, slug, name, position) VALUES
    ('912357d4-b8f5-5705-a894-93fff7630382', 'fab', 'cc', 'Classic Constructed', 1),
    ('fa951bfd-17df-5dc8-91bd-b2a90fd96e43', 'fab', 'blitz', 'Blitz', 2),
    ('9ae00722-1ee5-5efc-b984-3dc66bc6268b', 'fab', 'living-legend', 'Living Legend', 3),
    ('2871064f-342b-549c-8d42-e98b56db1f6a', 'fab', 'silver-age', 'Silver Age', 4),
    ('10027a1f-7169-50f6-b86f-3ce97cc8b6c8', 'fab', 'ultimate-pit-fight', 'Ultimate Pit Fight', 5),
    ('b319243a-5496-57e8-bead-72553993f34d', 'fab', 'open', 'Open', 6);
