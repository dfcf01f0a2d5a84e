DROP TABLE deck_guides;
