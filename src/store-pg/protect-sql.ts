// Migration 11 (issue 36): protective state every replica reads at once, and the last
// reservations that held row locks across client round trips turned into single statements.
//  - principal_revocations: APAE revocation floors (revocation-floors.ts), written before the
//    answer that caused them, read by every replica's capability token check.
//  - warden_pin_use / warden_pin_add: an AgentPin domain's first pin (the domain row, then its
//    key) and a later use, each ONE call: the domain row's lock is taken and released inside
//    the server. Each statement of a VOLATILE function takes a new snapshot (READ COMMITTED):
//    after waiting for another replica's first pin of the domain, the use sees its key.
export const PROTECT_MIGRATION_SQL = `
CREATE TABLE principal_revocations (
  principal_id text PRIMARY KEY,
  at           bigint NOT NULL
);

CREATE FUNCTION warden_pin_use(d text, h text, k text, at text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO agentpin_domains (domain, first_seen) VALUES (d, at) ON CONFLICT (domain) DO NOTHING;
  IF FOUND THEN
    INSERT INTO agentpin_keys (domain, public_key_hash, kid, first_seen, last_seen, trust_level)
      VALUES (d, h, k, at, at, 'tofu') ON CONFLICT (domain, public_key_hash) DO NOTHING;
    RETURN 'first_use';
  END IF;
  UPDATE agentpin_keys SET last_seen = at WHERE domain = d AND public_key_hash = h;
  RETURN CASE WHEN FOUND THEN 'pinned' ELSE 'changed' END;
END $$;

CREATE FUNCTION warden_pin_add(d text, h text, k text, at text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO agentpin_domains (domain, first_seen) VALUES (d, at) ON CONFLICT (domain) DO NOTHING;
  INSERT INTO agentpin_keys (domain, public_key_hash, kid, first_seen, last_seen, trust_level)
    VALUES (d, h, k, at, at, 'pinned') ON CONFLICT (domain, public_key_hash) DO NOTHING;
END $$;`;
