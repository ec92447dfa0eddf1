// One journal chain per replica (distributed mode's default, migration 5): replicas never
// contend for a head, each chain opens with a checkpoint naming it, later checkpoints name
// the other chains' committed heads, and a database that had the one global chain keeps it
// (chain "") through the migration. Real PostgreSQL (embedded).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHECKPOINT,
  type CheckpointBody,
  GENESIS_HASH,
  type JournalEntry,
  openJournal,
  sealEntry,
  verifyJournal,
} from "../../src/journal/index.js";
import { composeRuntime, type RuntimeConfig } from "../../src/runtime/index.js";
import {
  ChainCheckpointer,
  listChains,
  migrate,
  PgJournalStore,
  SCHEMA_VERSION,
} from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { KEY, keyringOf, RUN, TRACE } from "../journal/helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function migrated(to?: number): Promise<string> {
  const url = await freshDatabase(server.connectionString);
  const setup = poolOf(url, 1);
  await migrate(setup, to);
  await setup.end();
  return url;
}

/** A replica's journal on its own chain, with its checkpointer (not started). */
async function replica(url: string, chain: string) {
  const pool = poolOf(url, 2);
  const store = new PgJournalStore(pool, { node: chain, chain, ownsPool: false });
  const journal = await openJournal({ store, signer: KEY, signatureMode: "batch" });
  const checkpoints = new ChainCheckpointer({ pool, journal, chain, everyMs: 3_600_000 });
  return {
    pool,
    store,
    journal,
    checkpoints,
    async close() {
      await checkpoints.stop(false);
      await journal.close();
      await pool.end();
    },
  };
}

const note = (i: number) => ({
  type: "ObservationsCollected",
  run_id: RUN,
  trace_id: TRACE,
  body: { observation_count: i },
});

async function entriesOf(store: PgJournalStore): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const e of store.entries()) out.push(e as JournalEntry);
  return out;
}

describe("one chain per replica", () => {
  it("three replicas appending at once never lose a race: no re-chaining, three chains that each verify", async () => {
    const url = await migrated();
    const nodes = await Promise.all(["a", "b", "c"].map((n) => replica(url, n)));
    try {
      await Promise.all(nodes.map((n) => n.checkpoints.start()));
      await Promise.all(
        nodes.flatMap((n) => Array.from({ length: 60 }, (_, i) => n.journal.append(note(i)))),
      );
      for (const n of nodes) {
        const stats = n.store.appendStats();
        expect(stats.conflicts).toBe(0);
        expect(stats.locked).toBe(0);
        expect(await n.store.count()).toBe(61);
        const report = await verifyJournal(n.store, keyringOf(KEY));
        expect(report.ok).toBe(true);
      }
      const heads = await listChains(nodes[0]!.pool);
      expect(heads.map((h) => [h.chain, h.seq])).toEqual([
        ["a", 61],
        ["b", 61],
        ["c", 61],
      ]);
    } finally {
      for (const n of nodes) await n.close();
    }
  });

  it("a chain opens with a checkpoint naming it; later ones name only the other chains' heads that moved", async () => {
    const url = await migrated();
    const [a, b] = await Promise.all(["a", "b"].map((n) => replica(url, n)));
    try {
      await a!.checkpoints.start();
      await b!.journal.append(note(1));
      const [first] = await entriesOf(a!.store);
      expect(first).toMatchObject({ seq: 1, type: CHECKPOINT, body: { chain: "a", heads: [] } });
      // b moved: a's next checkpoint names b's committed head, never a's own chain.
      expect(await a!.checkpoints.checkpoint()).toBe(1);
      const bHead = await b!.store.head();
      const second = (await a!.store.get(2))!;
      expect(second.type).toBe(CHECKPOINT);
      expect((second.body as CheckpointBody).heads).toEqual([
        { chain: "b", seq: bHead!.seq, hash: bHead!.hash },
      ]);
      // Nothing moved since: nothing is appended (an idle fleet does not grow its journals).
      expect(await a!.checkpoints.checkpoint()).toBe(0);
      await a!.journal.append(note(2));
      expect(await a!.checkpoints.checkpoint()).toBe(0);
      await b!.journal.append(note(3));
      expect(await a!.checkpoints.checkpoint()).toBe(1);
      expect(await a!.store.count()).toBe(4);
    } finally {
      await a!.close();
      await b!.close();
    }
  });

  it("a checkpoint names only committed heads: every head it names is an entry of that chain with that hash", async () => {
    const url = await migrated();
    const nodes = await Promise.all(["a", "b", "c"].map((n) => replica(url, n)));
    try {
      await Promise.all(nodes.map((n) => n.checkpoints.start()));
      const load = nodes.flatMap((n) => Array.from({ length: 40 }, (_, i) => n.journal.append(note(i))));
      const marks = nodes.map((n) => n.checkpoints.checkpoint());
      await Promise.all([...load, ...marks]);
      for (const n of nodes) {
        for (const e of await entriesOf(n.store)) {
          if (e.type !== CHECKPOINT) continue;
          for (const h of (e.body as CheckpointBody).heads) {
            const other = nodes.find((x) => x.store.chain === h.chain)!;
            expect((await other.store.get(h.seq))?.hash).toBe(h.hash);
          }
        }
      }
    } finally {
      for (const n of nodes) await n.close();
    }
  });

  it("two replicas misconfigured with one name share one chain without forking it", async () => {
    const url = await migrated();
    const [x, y] = await Promise.all(["same", "same"].map((n) => replica(url, n)));
    try {
      await Promise.all(
        [x!, y!].flatMap((n) => Array.from({ length: 30 }, (_, i) => n.journal.append(note(i)))),
      );
      expect(await x!.store.count()).toBe(60);
      expect((await verifyJournal(x!.store, keyringOf(KEY))).ok).toBe(true);
    } finally {
      await x!.close();
      await y!.close();
    }
  });
});

describe("migration 5 keeps the global chain", () => {
  it("entries appended under schema 4 stay chain '' and the global store extends that chain", async () => {
    const url = await migrated(4);
    const pool = poolOf(url, 2);
    try {
      // Two entries as schema 4 held them: the one global chain and its head row.
      let prev = GENESIS_HASH;
      for (const seq of [1, 2]) {
        const body = { observation_count: seq };
        const { entry: e } = sealEntry(
          {
            seq,
            time: new Date().toISOString(),
            type: "ObservationsCollected",
            run_id: RUN,
            trace_id: TRACE,
            prev_hash: prev,
            key_id: KEY.keyId,
          },
          body,
          JSON.stringify(body),
          KEY.privateKey,
        );
        await pool.query(
          "INSERT INTO journal_entries (seq, time, type, run_id, trace_id, prev_hash, hash, key_id, signature, body, node) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'old')",
          [
            e.seq,
            e.time,
            e.type,
            e.run_id,
            e.trace_id,
            e.prev_hash,
            e.hash,
            e.key_id,
            e.signature,
            JSON.stringify(body),
          ],
        );
        await pool.query("UPDATE journal_head SET seq = $1, hash = $2", [seq, e.hash]);
        prev = e.hash;
      }
      expect((await migrate(pool)).applied).toEqual(
        Array.from({ length: SCHEMA_VERSION - 4 }, (_, i) => i + 5),
      );
      expect(await listChains(pool)).toEqual([{ chain: "", seq: 2, hash: prev, node: "global" }]);
      const global = new PgJournalStore(pool, { node: "n", ownsPool: false });
      const j = await openJournal({ store: global, signer: KEY });
      expect((await j.append(note(3))).seq).toBe(3);
      await j.close();
      expect((await verifyJournal(global, keyringOf(KEY))).ok).toBe(true);
      // A per-replica chain beside it starts at 1 and does not touch the global one.
      const own = new PgJournalStore(pool, { node: "n", chain: "n", ownsPool: false });
      const k = await openJournal({ store: own, signer: KEY });
      expect((await k.append(note(1))).seq).toBe(1);
      await k.close();
      expect(await global.count()).toBe(3);
    } finally {
      await pool.end();
    }
  });
});

describe("the composed runtime on PostgreSQL", () => {
  const POLICY =
    "rules:\n  - { id: r, name: r, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }\n";

  function config(url: string, node: string, journal?: { chains: "per-node" | "global" }): RuntimeConfig {
    const dir = mkdtempSync(join(tmpdir(), "warden-chains-rt-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    return {
      policy: [join(dir, "policy.yaml")],
      journal: { path: join(dir, "journal.db"), signer: KEY },
      gate: { principals: { "agent-1": { id: "agent-1", roles: ["agent"] } }, requireContract: false },
      store: { kind: "postgres", url, node, ...(journal !== undefined ? { journal } : {}) },
    };
  }

  it("appends to its own chain, opened by a checkpoint naming it, and closes with a last checkpoint", async () => {
    const url = await migrated();
    const other = await replica(url, "other");
    await other.journal.append(note(1));
    const rt = await composeRuntime(config(url, "r1"));
    try {
      expect(rt.journalChain).toBe("r1");
      const first = await rt.store.get(1);
      expect(first).toMatchObject({ type: CHECKPOINT, body: { chain: "r1" } });
      const head = (await other.store.head())!;
      expect((first!.body as CheckpointBody).heads).toEqual([
        { chain: "other", seq: head.seq, hash: head.hash },
      ]);
      await other.journal.append(note(2));
    } finally {
      await rt.close();
      await other.close();
    }
    const pool = poolOf(url, 1);
    try {
      const own = new PgJournalStore(pool, { chain: "r1", ownsPool: false });
      const last = (await own.last())!;
      // The other chain moved after the opening checkpoint: the closing one names its new head.
      expect(last.type).toBe(CHECKPOINT);
      expect((last.body as CheckpointBody).heads.map((h) => [h.chain, h.seq])).toEqual([["other", 2]]);
    } finally {
      await pool.end();
    }
  });

  it("with chains: global appends to the one global chain, without checkpoints", async () => {
    const url = await migrated();
    const rt = await composeRuntime(config(url, "r2", { chains: "global" }));
    try {
      expect(rt.journalChain).toBeUndefined();
      await rt.journal.append(note(1));
      const pool = poolOf(url, 1);
      try {
        expect((await listChains(pool)).map((c) => [c.chain, c.seq])).toEqual([["", 1]]);
      } finally {
        await pool.end();
      }
    } finally {
      await rt.close();
    }
  });
});
