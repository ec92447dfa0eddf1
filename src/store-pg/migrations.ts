// Versioned schema of the shared PostgreSQL store. `warden db migrate` applies the
// migrations a database has not seen yet, each in the same transaction as its row in
// `schema_version`, under an advisory lock (two operators migrating at once apply each
// step once). A runtime never migrates: at start it checks that the database holds
// exactly the versions this Warden knows, 1..SCHEMA_VERSION, and refuses an empty,
// older, newer or unknown schema with ERR_RUNTIME_STORE_SCHEMA.
import type pg from "pg";
import { RuntimeError } from "../contracts/index.js";
import { ECT_LEDGER_EVENT } from "../trust/index.js";
import { inTransaction, storeError } from "./connect.js";
import { FENCE_MIGRATION_SQL } from "./fence-sql.js";
import { PROTECT_MIGRATION_SQL } from "./protect-sql.js";

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

// The decision column mirrors the SQLite store's (docs/journal.md): derived from the
// signed body, so it cannot disagree with it; it exists only to be indexed.
const DECISION = `decision text GENERATED ALWAYS AS (
    CASE
      WHEN type = 'warden.gate.decision' THEN (body::jsonb ->> 'decision')
      WHEN type IN ('dare.policy.decision', 'gate.policy.decision') THEN (body::jsonb -> 'result' ->> 'decision')
      WHEN type IN ('dare.tool.response', 'gate.tool.response') THEN (body::jsonb -> 'policy' ->> 'decision')
      WHEN type IN ('dare.hitl.decision', 'gate.hitl.decision') THEN (body::jsonb -> 'decision' ->> 'action')
    END) STORED`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "journal: one global hash chain, appends serialised on the head row",
    sql: `
CREATE TABLE journal_head (
  id   smallint PRIMARY KEY CHECK (id = 1),
  seq  bigint NOT NULL CHECK (seq >= 0),
  hash text
);
INSERT INTO journal_head (id, seq, hash) VALUES (1, 0, NULL);
CREATE TABLE journal_entries (
  seq       bigint PRIMARY KEY CHECK (seq >= 1),
  time      text NOT NULL,
  type      text NOT NULL,
  run_id    text,
  trace_id  text,
  prev_hash text NOT NULL,
  hash      text NOT NULL,
  key_id    text NOT NULL,
  signature text NOT NULL,
  body      text NOT NULL,
  node      text NOT NULL,
  ${DECISION}
);
CREATE INDEX journal_entries_run ON journal_entries (run_id, seq);
CREATE INDEX journal_entries_time ON journal_entries (time);
CREATE INDEX journal_entries_type ON journal_entries (type, seq);
CREATE INDEX journal_entries_decision ON journal_entries (decision, seq);`,
  },
  {
    version: 2,
    description: "shared state: principals, budgets and rate slots, reservations, nonces, trust tables",
    sql: `
CREATE TABLE principal_state (
  principal_id text PRIMARY KEY,
  record       text NOT NULL,
  version      bigint NOT NULL DEFAULT 1
);
CREATE TABLE run_budgets (
  run_id text PRIMARY KEY,
  used   integer NOT NULL DEFAULT 0 CHECK (used >= 0),
  held   integer NOT NULL DEFAULT 0 CHECK (held >= 0)
);
CREATE TABLE principal_rate (principal_id text PRIMARY KEY);
CREATE TABLE rate_slots (
  principal_id text NOT NULL REFERENCES principal_rate ON DELETE CASCADE,
  at           bigint NOT NULL
);
CREATE INDEX rate_slots_principal ON rate_slots (principal_id, at);
CREATE TABLE reservations (
  id           text PRIMARY KEY,
  run_id       text NOT NULL,
  principal_id text NOT NULL,
  expires_at   bigint NOT NULL
);
CREATE INDEX reservations_run ON reservations (run_id, expires_at);
CREATE TABLE settlements (
  id        text PRIMARY KEY,
  outcome   text NOT NULL CHECK (outcome IN ('committed', 'released', 'expired')),
  settled   bigint NOT NULL
);
CREATE TABLE message_nonces (k text PRIMARY KEY, until bigint NOT NULL);
CREATE INDEX message_nonces_until ON message_nonces (until);
CREATE TABLE trust_rows (
  truster          text NOT NULL,
  subject          text NOT NULL,
  row              text NOT NULL,
  quarantine_until bigint,
  PRIMARY KEY (truster, subject)
);
CREATE INDEX trust_rows_quarantine ON trust_rows (quarantine_until) WHERE quarantine_until IS NOT NULL;
CREATE TABLE trust_recipients (subject text NOT NULL, peer text NOT NULL, PRIMARY KEY (subject, peer));`,
  },
  {
    version: 3,
    description:
      "runs registry (principal binding, owner node, lease), the shared approval queue, rate slots by node",
    sql: `
CREATE TABLE runs (
  run_id       text PRIMARY KEY,
  principal_id text NOT NULL,
  node         text NOT NULL,
  lease_until  bigint NOT NULL,
  epoch        integer NOT NULL DEFAULT 1 CHECK (epoch >= 1),
  ended        boolean NOT NULL DEFAULT false,
  parent_run   text,
  created_at   bigint NOT NULL
);
CREATE INDEX runs_node ON runs (node) WHERE NOT ended;
CREATE TABLE approvals (
  id           text PRIMARY KEY,
  decision_id  text NOT NULL,
  run_id       text NOT NULL,
  principal_id text NOT NULL,
  node         text NOT NULL,
  request      text NOT NULL,
  expires_at   bigint NOT NULL,
  verdict      text,
  decided_by   text,
  decided_at   bigint
);
CREATE INDEX approvals_open ON approvals (expires_at) WHERE verdict IS NULL;
ALTER TABLE rate_slots ADD COLUMN node text;`,
  },
  {
    version: 4,
    description: "AgentPin and MCP tool TOFU pins, the L3 ECT ledger's jti index, shared by every replica",
    sql: `
CREATE TABLE agentpin_domains (domain text PRIMARY KEY, first_seen text NOT NULL);
CREATE TABLE agentpin_keys (
  domain          text NOT NULL REFERENCES agentpin_domains,
  public_key_hash text NOT NULL,
  kid             text NOT NULL,
  first_seen      text NOT NULL,
  last_seen       text NOT NULL,
  trust_level     text NOT NULL CHECK (trust_level IN ('tofu', 'verified', 'pinned')),
  ord             bigserial NOT NULL,
  PRIMARY KEY (domain, public_key_hash)
);
CREATE TABLE mcp_pins (
  server text NOT NULL,
  tool   text NOT NULL,
  hash   text NOT NULL,
  PRIMARY KEY (server, tool)
);
CREATE TABLE ect_ledger (
  jti      text PRIMARY KEY,
  iat      bigint NOT NULL,
  node     text NOT NULL,
  recorded boolean NOT NULL DEFAULT false
);
INSERT INTO ect_ledger (jti, iat, node, recorded)
  SELECT DISTINCT ON (body::jsonb ->> 'jti') body::jsonb ->> 'jti', (body::jsonb ->> 'iat')::bigint, node, true
  FROM journal_entries WHERE type = '${ECT_LEDGER_EVENT}' AND body::jsonb ? 'jti'
  ORDER BY body::jsonb ->> 'jti', seq;`,
  },
  {
    version: 5,
    description:
      "journal: one hash chain per replica (journal_chains heads); the global chain becomes chain ''",
    sql: `
CREATE TABLE journal_chains (
  chain   text PRIMARY KEY,
  seq     bigint NOT NULL CHECK (seq >= 0),
  hash    text,
  node    text NOT NULL,
  created timestamptz NOT NULL DEFAULT now()
);
INSERT INTO journal_chains (chain, seq, hash, node)
  SELECT '', seq, hash, 'global' FROM journal_head WHERE id = 1 AND seq > 0;
DROP TABLE journal_head;
ALTER TABLE journal_entries ADD COLUMN chain text NOT NULL DEFAULT '';
ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_pkey;
ALTER TABLE journal_entries ADD PRIMARY KEY (chain, seq);`,
  },
  {
    version: 6,
    description: "deferred: the deferred actions (defer) every replica lists and answers",
    sql: `
CREATE TABLE deferred (
  id           text PRIMARY KEY,
  decision_id  text NOT NULL,
  run_id       text NOT NULL,
  principal_id text,
  node         text NOT NULL,
  item         text NOT NULL,
  expires_at   bigint NOT NULL,
  verdict      text,
  decided_by   text,
  decided_at   bigint
);
CREATE INDEX deferred_open ON deferred (expires_at) WHERE verdict IS NULL;`,
  },
  {
    version: 7,
    description: "SchemaPin contract-key pins and hook source pins (TOFU), shared by every replica",
    sql: `
CREATE TABLE tofu_pins (
  kind        text NOT NULL CHECK (kind IN ('schemapin', 'hook-source')),
  tool_id     text NOT NULL,
  domain      text NOT NULL,
  fingerprint text NOT NULL CHECK (fingerprint ~ '^sha256:[0-9a-f]{64}$'),
  pinned_at   text NOT NULL,
  PRIMARY KEY (kind, tool_id, domain)
);`,
  },
  {
    version: 8,
    description:
      "reservations as single statements (no row lock across client round trips); /v1/execute idempotency keys",
    sql: FENCE_MIGRATION_SQL,
  },
  {
    version: 9,
    description:
      "taint carried at the principal and waiting inter-agent messages (issue 37), shared by every replica",
    sql: `
CREATE TABLE principal_taint (
  principal_id text NOT NULL,
  source       text NOT NULL,
  run_id       text NOT NULL,
  label        text NOT NULL,
  at           bigint NOT NULL,
  PRIMARY KEY (principal_id, source)
);
CREATE TABLE inbox_items (
  recipient  text NOT NULL,
  message_id text NOT NULL,
  message    text NOT NULL,
  context    text NOT NULL,
  seq        bigint NOT NULL,
  PRIMARY KEY (recipient, message_id)
);
CREATE INDEX inbox_items_seq ON inbox_items (seq);`,
  },
  {
    version: 10,
    description:
      "the console's browser approval keys (public halves) and their revocations, shared by every replica (issue 37)",
    sql: `
CREATE TABLE console_keys (
  approver_id   text NOT NULL,
  key_id        text NOT NULL,
  x             text NOT NULL,
  registered_at text NOT NULL,
  revoked_at    text,
  revoked_by    text,
  PRIMARY KEY (approver_id, key_id)
);`,
  },
  {
    version: 11,
    description:
      "APAE revocation floors every replica's token check reads; AgentPin first pins as one statement (issue 36)",
    sql: PROTECT_MIGRATION_SQL,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Arbitrary constant: the advisory lock `migrate` holds (one migration at a time per database). */
const MIGRATE_LOCK = 0x57415244;

const VERSION_TABLE = `CREATE TABLE IF NOT EXISTS schema_version (
  version     integer PRIMARY KEY,
  description text NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now()
)`;

export interface MigrateResult {
  from: number;
  to: number;
  applied: number[];
}

async function versionsIn(c: pg.ClientBase): Promise<number[] | undefined> {
  const t = await c.query<{ t: string | null }>("SELECT to_regclass('schema_version')::text AS t");
  if (t.rows[0]?.t === null || t.rows[0] === undefined) return undefined;
  const r = await c.query<{ version: number }>("SELECT version FROM schema_version ORDER BY version");
  return r.rows.map((row) => row.version);
}

/** Whether `versions` is exactly 1..n for some n ≤ SCHEMA_VERSION. */
function known(versions: readonly number[]): boolean {
  return versions.length <= SCHEMA_VERSION && versions.every((v, i) => v === i + 1);
}

/** Applies every migration up to `to` (default: all) the database lacks, in one transaction. */
export async function migrate(pool: pg.Pool, to = SCHEMA_VERSION): Promise<MigrateResult> {
  try {
    return await inTransaction(pool, async (c) => {
      await c.query("SELECT pg_advisory_xact_lock($1)", [MIGRATE_LOCK]);
      await c.query(VERSION_TABLE);
      const versions = (await versionsIn(c)) ?? [];
      if (!known(versions)) {
        throw new RuntimeError(
          "ERR_RUNTIME_STORE_SCHEMA",
          `the database holds schema versions [${versions.join(", ")}], unknown to this Warden (knows 1..${SCHEMA_VERSION})`,
        );
      }
      const applied: number[] = [];
      for (const m of MIGRATIONS) {
        if (m.version <= versions.length || m.version > to) continue;
        await c.query(m.sql);
        await c.query("INSERT INTO schema_version (version, description) VALUES ($1, $2)", [
          m.version,
          m.description,
        ]);
        applied.push(m.version);
      }
      return { from: versions.length, to: Math.max(versions.length, ...applied), applied };
    });
  } catch (err) {
    throw storeError("migrate", err);
  }
}

/**
 * The start check: resolves with the version when the database is at exactly this
 * Warden's schema; throws ERR_RUNTIME_STORE_SCHEMA otherwise (never migrates).
 */
export async function checkSchema(pool: pg.Pool): Promise<number> {
  let versions: number[] | undefined;
  try {
    const c = await pool.connect();
    let broken = false;
    const onError = () => {
      broken = true;
    };
    c.on("error", onError);
    try {
      versions = await versionsIn(c);
    } finally {
      c.removeListener("error", onError);
      c.release(broken);
    }
  } catch (err) {
    throw storeError("schema check", err);
  }
  const fix = "run `warden db migrate --url URL` with this Warden's version";
  if (versions === undefined || versions.length === 0) {
    throw new RuntimeError("ERR_RUNTIME_STORE_SCHEMA", `the database has no Warden schema: ${fix}`);
  }
  if (!known(versions)) {
    throw new RuntimeError(
      "ERR_RUNTIME_STORE_SCHEMA",
      `the database holds schema versions [${versions.join(", ")}], unknown to this Warden (knows 1..${SCHEMA_VERSION})`,
      { details: { versions } },
    );
  }
  if (versions.length < SCHEMA_VERSION) {
    throw new RuntimeError(
      "ERR_RUNTIME_STORE_SCHEMA",
      `the database schema is version ${versions.length}, older than this Warden's ${SCHEMA_VERSION}: ${fix}`,
      { details: { version: versions.length, expected: SCHEMA_VERSION } },
    );
  }
  return versions.length;
}
