-- +goose Up
-- Issue 22. SQLite's 00017 gives every integer key AUTOINCREMENT, so that
-- an id is never given twice; PostgreSQL's identity columns never give one
-- twice already. What this dialect adds is the other half: an account's
-- end reaches the sockets and streams that other processes hold for it.
-- Deleting or disabling an account, moving it to a new session epoch (a
-- password changed or reset) and revoking one of its keys notify kind a
-- (user u) in the committing transaction; every process's listener has the
-- account's sockets and streams check whether they may still speak as it
-- (agents/wake.go). pg_notify sends one of identical payloads per
-- transaction, so an account deleted with its keys notifies once.

-- +goose StatementBegin
CREATE FUNCTION palaver_notify_account() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE uid BIGINT;
BEGIN
  IF TG_TABLE_NAME = 'users' THEN uid := OLD.id; ELSE uid := OLD.user_id; END IF;
  PERFORM pg_notify('palaver', json_build_object('k', 'a', 'u', uid,
    'o', current_setting('application_name'))::text);
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER users_notify_account AFTER DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION palaver_notify_account();
CREATE TRIGGER users_notify_account_update AFTER UPDATE OF disabled, session_epoch ON users
  FOR EACH ROW WHEN (NEW.disabled AND NOT OLD.disabled OR NEW.session_epoch IS DISTINCT FROM OLD.session_epoch)
  EXECUTE FUNCTION palaver_notify_account();
CREATE TRIGGER api_keys_notify_account AFTER DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION palaver_notify_account();

-- +goose Down
DROP TRIGGER api_keys_notify_account ON api_keys;
DROP TRIGGER users_notify_account_update ON users;
DROP TRIGGER users_notify_account ON users;
DROP FUNCTION palaver_notify_account();
