// The shared TOFU pins wired end to end: two sidecars (in process) on one PostgreSQL,
// each with its own AgentPin trust bundle. Replica B's source is poisoned (it serves an
// attacker's key for acme.example, as a hijacked well-known fetch would): after replica A
// pinned acme's real key, the attacker's credential is refused on B, and B journals it.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { type DiscoveryDocument, issueCredential } from "../../src/identity/index.js";
import { migrate } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { type Domain, makeDomain } from "../identity/agentpin-fixture.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "../server/harness.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let url: string;
const sidecars: Sidecar[] = [];
const acme = makeDomain("acme.example", { capabilities: ["execute:echo"] });
const attacker = makeDomain("acme.example", { capabilities: ["execute:echo"] });
/** The journal key every replica shares (one chain, as a Secret is). */
const journalKey = saveKeyPair(generateKeyPair("ed25519"), mkdtempSync(join(tmpdir(), "warden-pins-key-")), {
  name: "journal",
}).privatePem;

function bundle(doc: DiscoveryDocument): string {
  const file = join(mkdtempSync(join(tmpdir(), "warden-pins-bundle-")), "bundle.json");
  const text = {
    agentpin_bundle_version: "0.1",
    created_at: "2026-01-01T00:00:00Z",
    documents: [doc],
    revocations: [],
  };
  writeFileSync(file, JSON.stringify(text));
  return file;
}

async function replica(
  node: string,
  doc: DiscoveryDocument,
  more: Record<string, unknown> = {},
): Promise<Sidecar> {
  const s = await startTestSidecar({
    config: {
      ...more,
      journal: { path: "journal.db", key: journalKey },
      store: { kind: "postgres", url, node },
      identity: {
        agentpin: {
          audience: "warden.test",
          trustBundle: bundle(doc),
          principals: { [acme.agent]: "agent-a" },
        },
      },
    },
  });
  sidecars.push(s);
  return s;
}

const credential = (d: Domain) =>
  issueCredential({
    privateKey: d.key,
    kid: d.kid,
    issuer: "acme.example",
    agentId: d.agent,
    capabilities: ["execute:echo"],
    ttlSeconds: 600,
    now: Math.floor(Date.now() / 1000),
    audience: "warden.test",
  });

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  const pool = poolOf(url, 1);
  await migrate(pool);
  await pool.end();
}, 120_000);

afterAll(async () => {
  for (const s of sidecars) await s.stop();
  await server?.stop();
});

describe("AgentPin pins shared by sidecars", () => {
  it("an attacker's key for a domain pinned on replica A is refused on replica B (401 ERR_IDENTITY_KEY_PIN_MISMATCH)", async () => {
    const a = await replica("a", acme.doc);
    const b = await replica("b", attacker.doc);
    const first = await a.call("/v1/runs", {
      headers: { authorization: `AgentPin ${credential(acme)}` },
      body: {},
    });
    expect(first.status).toBe(201);
    const forged = await b.call("/v1/runs", {
      headers: { authorization: `AgentPin ${credential(attacker)}` },
      body: {},
    });
    expect([forged.status, (forged.body.error as { code: string }).code]).toEqual([
      401,
      "ERR_IDENTITY_KEY_PIN_MISMATCH",
    ]);
    // Each replica journals on its own chain: the pin on A's, the refusal on B's.
    expect(await a.server.runtime.store.query({ type: "warden.identity.key_pinned" })).toHaveLength(1);
    expect(await b.server.runtime.store.query({ type: "warden.identity.key_pinned" })).toHaveLength(0);
    expect(await b.server.runtime.store.query({ type: "warden.identity.key_pin_refused" })).toHaveLength(1);
  });
});

describe("the L3 ECT ledger shared by sidecars", () => {
  it("ECTs emitted by two replicas are reserved and recorded in the shared index, each by its node", async () => {
    const apae = { apae: { profile: "standard", ectLevel: "L3" } };
    const c = await replica("c", acme.doc, apae);
    const d = await replica("d", acme.doc, apae);
    for (const s of [c, d]) {
      const runId = await s.run("ect");
      const r = await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId }) });
      expect(r.status).toBe(200);
    }
    const pool = poolOf(url, 1);
    try {
      const rows = await pool.query<{ node: string; n: number }>(
        "SELECT node, count(*)::int AS n FROM ect_ledger WHERE recorded GROUP BY node ORDER BY node",
      );
      expect(rows.rows.map((r) => r.node)).toEqual(["c", "d"]);
      const unrecorded = await pool.query("SELECT 1 FROM ect_ledger WHERE NOT recorded");
      expect(unrecorded.rowCount).toBe(0);
      // Each replica's ECT entries are on its own chain; together they are the index's rows.
      const inJournal = await Promise.all(
        [c, d].map((s) => s.server.runtime.store.query({ type: "warden.trust.ect" })),
      );
      expect(inJournal.map((e) => e.length)).toEqual(rows.rows.map((r) => r.n));
    } finally {
      await pool.end();
    }
  });
});
