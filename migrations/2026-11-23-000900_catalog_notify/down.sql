DROP TRIGGER formats_changed ON formats;
DROP TRIGGER game_sections_changed ON game_sections;
DROP TRIGGER games_changed ON games;
DROP FUNCTION notify_catalog_changed();
