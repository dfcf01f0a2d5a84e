DROP TABLE catalog_printings;
DROP TABLE catalog_cards;
DROP TABLE formats;
DROP TABLE game_sections;
DROP TABLE games;
