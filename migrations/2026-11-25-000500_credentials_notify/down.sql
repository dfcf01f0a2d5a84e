DROP TRIGGER users_changed ON users;
DROP TRIGGER personal_access_tokens_changed ON personal_access_tokens;
DROP FUNCTION notify_credentials_changed();
