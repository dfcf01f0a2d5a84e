ALTER TABLE game_sections DROP COLUMN featured_slot;
