-- Commander, whole (contract, "Format checks"): two commanders only as partners, and no
-- sideboard.
--
-- A card's partner ability is rules text, kept by name like the other clauses: `partner` for
-- "Partner", `partner_with` (a name key) for "Partner with NAME". Imports of files with
-- `oracle_text` derive them (`deckhand_domain::formats::text_rules`); for the bundled 2019 file,
-- which has none, the values `deckhand_domain::formats::seeds::mtg_text_rules` states are seeded
-- here: Commander 2016's partners and Battlebond's legendary pairs (Will and Rowan Kenrith can
-- also be commanders, as their text says).
ALTER TABLE card_text_rules
    ADD COLUMN partner boolean NOT NULL DEFAULT false,
    ADD COLUMN partner_with text,
    ADD CONSTRAINT card_text_rules_one_partner CHECK (NOT (partner AND partner_with IS NOT NULL));

INSERT INTO card_text_rules (game, name_key, partner, partner_with, can_be_commander) VALUES
    ('mtg', 'akiri, line-slinger', true, NULL, false),
    ('mtg', 'bruse tarl, boorish herder', true, NULL, false),
    ('mtg', 'ikra shidiqi, the usurper', true, NULL, false),
    ('mtg', 'ishai, ojutai dragonspeaker', true, NULL, false),
    ('mtg', 'kraum, ludevic''s opus', true, NULL, false),
    ('mtg', 'kydele, chosen of kruphix', true, NULL, false),
    ('mtg', 'ludevic, necro-alchemist', true, NULL, false),
    ('mtg', 'ravos, soultender', true, NULL, false),
    ('mtg', 'reyhan, last of the abzan', true, NULL, false),
    ('mtg', 'sidar kondo of jamuraa', true, NULL, false),
    ('mtg', 'silas renn, seeker adept', true, NULL, false),
    ('mtg', 'tana, the bloodsower', true, NULL, false),
    ('mtg', 'thrasios, triton hero', true, NULL, false),
    ('mtg', 'tymna the weaver', true, NULL, false),
    ('mtg', 'vial smasher the fierce', true, NULL, false),
    ('mtg', 'gorm the great', false, 'virtus the veiled', false),
    ('mtg', 'virtus the veiled', false, 'gorm the great', false),
    ('mtg', 'khorvath brightflame', false, 'sylvia brightspear', false),
    ('mtg', 'sylvia brightspear', false, 'khorvath brightflame', false),
    ('mtg', 'krav, the unredeemed', false, 'regna, the redeemer', false),
    ('mtg', 'regna, the redeemer', false, 'krav, the unredeemed', false),
    ('mtg', 'okaun, eye of chaos', false, 'zndrsplt, eye of wisdom', false),
    ('mtg', 'zndrsplt, eye of wisdom', false, 'okaun, eye of chaos', false),
    ('mtg', 'pir, imaginative rascal', false, 'toothy, imaginary friend', false),
    ('mtg', 'toothy, imaginary friend', false, 'pir, imaginative rascal', false),
    ('mtg', 'rowan kenrith', false, 'will kenrith', true),
    ('mtg', 'will kenrith', false, 'rowan kenrith', true)
ON CONFLICT (game, name_key) DO UPDATE SET partner = excluded.partner,
    partner_with = excluded.partner_with, can_be_commander = excluded.can_be_commander;

-- Commander decks have no sideboard: a card in it is a `sideboard_size` problem.
UPDATE format_rules SET sideboard_max = 0
WHERE format_id IN (SELECT id FROM formats WHERE game = 'mtg' AND slug = 'commander');
