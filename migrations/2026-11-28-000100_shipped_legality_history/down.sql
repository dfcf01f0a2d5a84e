DROP TABLE legality_announcements;
