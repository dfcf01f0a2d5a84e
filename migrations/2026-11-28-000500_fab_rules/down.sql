ALTER TABLE card_text_rules
    DROP CONSTRAINT card_text_rules_hero_and_age,
    DROP COLUMN legal_heroes,
    DROP COLUMN hero_young,
    DROP COLUMN hero;
DELETE FROM format_rules WHERE main_section <> 'mainboard' OR pool_max IS NOT NULL
    OR hero_young IS NOT NULL;
ALTER TABLE format_rules
    DROP COLUMN hero_young,
    DROP COLUMN pool_max,
    DROP COLUMN main_section;
