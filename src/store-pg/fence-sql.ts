// Migration 8 (issue 36): the shared store's reservations as single statements, and the
// idempotency keys of /v1/execute. A reservation used to be a client-driven transaction
// (BEGIN, lock the principal's rate row, read, write, COMMIT): a replica paused between two
// of those round trips held the row lock, and every other replica's call for that principal
// waited the whole pause. Each is now ONE call of a PL/pgSQL function in its own implicit
// transaction: the locks are taken and released inside the server, while the statement runs,
// whatever the client does. Each statement of a VOLATILE function takes a new snapshot (READ
// COMMITTED), so a count read after the lock sees every committed slot.
export const FENCE_MIGRATION_SQL = `
CREATE FUNCTION warden_rate_admit(p text, now_ms bigint, window_ms bigint, lim integer, me text,
    OUT admitted boolean, OUT others bigint[]) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO principal_rate (principal_id) VALUES (p) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM principal_rate WHERE principal_id = p FOR UPDATE;
  DELETE FROM rate_slots WHERE principal_id = p AND at <= now_ms - window_ms;
  IF (SELECT count(*) FROM rate_slots WHERE principal_id = p AND at > now_ms - window_ms) >= lim THEN
    admitted := false;
    others := NULL;
    RETURN;
  END IF;
  others := ARRAY(SELECT at FROM rate_slots
                  WHERE principal_id = p AND at > now_ms - window_ms AND node IS DISTINCT FROM me);
  INSERT INTO rate_slots (principal_id, at, node) VALUES (p, now_ms, me);
  admitted := true;
END $$;

CREATE FUNCTION warden_expire_run(r text, now_ms bigint) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  gone text[];
BEGIN
  INSERT INTO run_budgets (run_id) VALUES (r) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM run_budgets WHERE run_id = r FOR UPDATE;
  WITH d AS (DELETE FROM reservations WHERE run_id = r AND expires_at <= now_ms RETURNING id)
    SELECT coalesce(array_agg(id), '{}') INTO gone FROM d;
  IF cardinality(gone) = 0 THEN
    RETURN 0;
  END IF;
  UPDATE run_budgets SET held = held - cardinality(gone) WHERE run_id = r;
  INSERT INTO settlements (id, outcome, settled) SELECT unnest(gone), 'expired', now_ms ON CONFLICT DO NOTHING;
  RETURN cardinality(gone);
END $$;

CREATE FUNCTION warden_reserve(p text, r text, now_ms bigint, window_ms bigint, tool_limit integer,
    rate integer, take_slot boolean, rsv text, expires bigint) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  reasons text[] := '{}';
  u integer;
  h integer;
BEGIN
  INSERT INTO principal_rate (principal_id) VALUES (p) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM principal_rate WHERE principal_id = p FOR UPDATE;
  PERFORM warden_expire_run(r, now_ms);
  SELECT used, held INTO u, h FROM run_budgets WHERE run_id = r;
  IF tool_limit IS NOT NULL AND u + h + 1 > tool_limit THEN
    reasons := reasons || 'budget_tool_calls_exhausted'::text;
  END IF;
  IF rate IS NOT NULL AND
     (SELECT count(*) FROM rate_slots WHERE principal_id = p AND at > now_ms - window_ms) >= rate THEN
    reasons := reasons || 'rate_limited'::text;
  END IF;
  IF cardinality(reasons) > 0 THEN
    RETURN reasons;
  END IF;
  IF take_slot THEN
    DELETE FROM rate_slots WHERE principal_id = p AND at <= now_ms - window_ms;
    INSERT INTO rate_slots (principal_id, at) VALUES (p, now_ms);
  END IF;
  UPDATE run_budgets SET held = held + 1 WHERE run_id = r;
  INSERT INTO reservations (id, run_id, principal_id, expires_at) VALUES (rsv, r, p, expires);
  RETURN reasons;
END $$;

CREATE FUNCTION warden_settle(rsv text, outcome text, now_ms bigint, settled_at bigint) RETURNS text
    LANGUAGE plpgsql AS $$
DECLARE
  r text;
  exp bigint;
  how text;
BEGIN
  DELETE FROM reservations WHERE id = rsv RETURNING run_id, expires_at INTO r, exp;
  IF r IS NULL THEN
    RETURN coalesce((SELECT s.outcome FROM settlements s WHERE s.id = rsv), 'expired');
  END IF;
  how := CASE WHEN now_ms IS NOT NULL AND exp <= now_ms THEN 'expired' ELSE outcome END;
  UPDATE run_budgets SET held = held - 1, used = used + (CASE WHEN how = 'committed' THEN 1 ELSE 0 END)
    WHERE run_id = r;
  INSERT INTO settlements (id, outcome, settled) VALUES (rsv, how, settled_at);
  RETURN how;
END $$;

CREATE FUNCTION warden_renew(rsv text, r text, now_ms bigint, expires bigint) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
  PERFORM warden_expire_run(r, now_ms);
  UPDATE reservations SET expires_at = expires WHERE id = rsv;
  RETURN FOUND;
END $$;

CREATE TABLE idempotency_keys (
  principal_id text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  node         text NOT NULL,
  state        text NOT NULL CHECK (state IN ('pending', 'done')),
  status       integer,
  response     text,
  created_at   bigint NOT NULL,
  PRIMARY KEY (principal_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);`;
