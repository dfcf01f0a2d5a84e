DROP TRIGGER catalog_printings_changed ON catalog_printings;
DROP TRIGGER catalog_cards_changed ON catalog_cards;
