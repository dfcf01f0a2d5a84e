DROP TRIGGER users_username_never_changes ON users;
DROP FUNCTION refuse_username_change();
