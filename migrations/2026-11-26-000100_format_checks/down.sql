DROP TABLE card_legalities;
DROP TABLE card_text_rules;
ALTER TABLE catalog_cards DROP COLUMN type_line, DROP COLUMN color_identity;
DROP TABLE format_rules;
