-- +goose Up
-- Several processes on one database (issue 13). Every commit that a live
-- view shows sends a notification on channel 'palaver' in its own
-- transaction, so it is heard only once it is committed, in commit order. A
-- notification is a pointer, never the data: the listener re-reads what it
-- points to. Each payload is a small JSON object with "k" (the kind), the
-- ids, and "o", the application_name of the session that committed (the
-- process that did it already told its own subscribers, and skips it; the
-- others skip what is for users none of whose tabs they hold):
--   m: entries appended to exchange x of user u, ids a..b (one per statement
--      and exchange)
--   x: exchange x of user u made, changed or deleted, its turn now st (at
--      commit, so after the
--      entries of the same transaction); a heartbeat, or what an appended
--      entry keeps up to date in its header (the byte count of 00003, the
--      summary ids of 00011), sends nothing
--   p: page pg of user u made or changed
--   s: a Stop of exchange x's turn was asked for (turn_stop_requests)
-- Token deltas are sent by the process writing the reply (kind d), outside
-- any transaction.

-- +goose StatementBegin
CREATE FUNCTION palaver_notify_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('palaver', json_build_object('k', 'm', 'x', n.exchange_id, 'u', e.user_id, 'a', n.lo, 'b', n.hi,
    'o', current_setting('application_name'))::text)
  FROM (SELECT exchange_id, min(id) AS lo, max(id) AS hi FROM new_rows GROUP BY exchange_id) n
  JOIN exchanges e ON e.id = n.exchange_id;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER messages_notify AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION palaver_notify_entries();

-- +goose StatementBegin
CREATE FUNCTION palaver_notify_exchange() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r exchanges;
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  PERFORM pg_notify('palaver', json_build_object('k', 'x', 'x', r.id, 'u', r.user_id, 'st', r.turn_status,
    'o', current_setting('application_name'))::text);
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER exchanges_notify AFTER INSERT OR DELETE ON exchanges
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION palaver_notify_exchange();
CREATE CONSTRAINT TRIGGER exchanges_notify_update AFTER UPDATE ON exchanges
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN ((to_jsonb(OLD) - ARRAY['turn_heartbeat_at', 'stored_bytes', 'title_tsv', 'first_query_id', 'first_reply_id', 'last_reply_id'])
    IS DISTINCT FROM (to_jsonb(NEW) - ARRAY['turn_heartbeat_at', 'stored_bytes', 'title_tsv', 'first_query_id', 'first_reply_id', 'last_reply_id']))
  EXECUTE FUNCTION palaver_notify_exchange();

-- +goose StatementBegin
CREATE FUNCTION palaver_notify_page() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('palaver', json_build_object('k', 'p', 'pg', NEW.id, 'u', NEW.user_id,
    'o', current_setting('application_name'))::text);
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER pages_notify AFTER INSERT OR UPDATE ON pages
  FOR EACH ROW EXECUTE FUNCTION palaver_notify_page();

-- A Stop asked of a process that does not run the turn: the request is
-- recorded (owner: the turn's lease holder when it was asked), and its
-- insert notifies; the owner deletes the row as it stops the turn, and
-- looks for rows of its own again after its listener reconnects.
CREATE TABLE turn_stop_requests (
  exchange_id BIGINT PRIMARY KEY REFERENCES exchanges(id) ON DELETE CASCADE,
  owner TEXT NOT NULL,
  requested_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose StatementBegin
CREATE FUNCTION palaver_notify_stop() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('palaver', json_build_object('k', 's', 'x', NEW.exchange_id, 'w', NEW.owner,
    'o', current_setting('application_name'))::text);
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER turn_stop_requests_notify AFTER INSERT OR UPDATE ON turn_stop_requests
  FOR EACH ROW EXECUTE FUNCTION palaver_notify_stop();

-- +goose Down
DROP TABLE turn_stop_requests;
DROP FUNCTION palaver_notify_stop();
DROP TRIGGER pages_notify ON pages;
DROP FUNCTION palaver_notify_page();
DROP TRIGGER exchanges_notify_update ON exchanges;
DROP TRIGGER exchanges_notify ON exchanges;
DROP FUNCTION palaver_notify_exchange();
DROP TRIGGER messages_notify ON messages;
DROP FUNCTION palaver_notify_entries();
