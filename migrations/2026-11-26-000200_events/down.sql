DROP TRIGGER events_notify ON events;
DROP FUNCTION events_notify();
DROP TABLE events;
DROP TABLE event_log;
