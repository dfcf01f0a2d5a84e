DROP TRIGGER deck_list_changed ON decks;
DROP FUNCTION deck_list_changed();
DROP TABLE deck_list_changes;
