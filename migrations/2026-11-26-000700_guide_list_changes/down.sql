DROP TRIGGER guide_list_changed ON sideboard_guides;
DROP FUNCTION guide_list_changed();
DROP TABLE guide_list_changes;
