// AgentPin TOFU pins and the L3 ECT ledger shared by every replica, on one real
// PostgreSQL, each replica simulated by its own pool (its own connections, as a separate
// sidecar has): written as the attacks on a fleet.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, hasErrorCode } from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { type AgentPinJwk, StaticSource, verifyCredential } from "../../src/identity/index.js";
import {
  builtinEventTypes,
  type Journal,
  type JournalEntry,
  openJournal,
  SqliteJournalStore,
} from "../../src/journal/index.js";
import { AgentPinAuthenticator } from "../../src/runtime/agentpin.js";
import { migrate, PgEctIndex, PgJournalStore, PgKeyPins, SCHEMA_VERSION } from "../../src/store-pg/index.js";
import {
  ECT_LEDGER_EVENT,
  type EctClaims,
  EctLedger,
  ectClaims,
  encodeEct,
  registerEctLedgerEventType,
} from "../../src/trust/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { type Domain, issue, makeDomain, NOW } from "../identity/agentpin-fixture.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let url: string;
const pools: pg.Pool[] = [];
const journals: Journal[] = [];
const JOURNAL_KEY = generateKeyPair("ed25519");
const ECT_KEY = { kid: "agent-a-1", privateKey: generateKeyPair("p256").privateKey };

function pool(): pg.Pool {
  const p = poolOf(url, 4);
  pools.push(p);
  return p;
}

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  await migrate(pool());
}, 120_000);

afterAll(async () => {
  for (const j of journals) await j.close();
  for (const p of pools) await p.end();
  await server?.stop();
});

/** One replica: its own pool, its own pin store handle. */
const replicas = (n: number) => Array.from({ length: n }, () => new PgKeyPins(pool()));

function verifyOn(pins: PgKeyPins, d: Domain) {
  return verifyCredential(issue(d), {
    source: new StaticSource([d.doc], []),
    pins,
    audience: "verifier.example",
    now: NOW,
  });
}

describe("AgentPin TOFU pins across replicas", () => {
  it("a key substituted for a domain on replica B after replica A pinned it is refused on every replica", async () => {
    const [a, b, c] = replicas(3) as [PgKeyPins, PgKeyPins, PgKeyPins];
    const real = makeDomain("subst.example");
    const first = await verifyOn(a, real);
    expect(first.ok && first.pinEvent?.kind).toBe("first_use");
    const forged = makeDomain("subst.example"); // same domain and kid, the attacker's key
    for (const replica of [b, c, a]) {
      const v = await verifyOn(replica, forged);
      expect(v.result.error_code).toBe("KEY_PIN_MISMATCH");
    }
    const again = await verifyOn(b, real);
    expect(again.ok && again.result.key_pinning?.status).toBe("pinned");
  });

  it("concurrent first uses of one domain with different keys on three replicas: one key wins, everywhere", async () => {
    const rs = replicas(3);
    const keys = [0, 1, 2].map(() => makeDomain("race.example"));
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => verifyOn(rs[i % 3] as PgKeyPins, keys[(i * 7) % 3] as Domain)),
    );
    const winners = new Set(results.flatMap((v, i) => (v.ok ? [(i * 7) % 3] : [])));
    expect(winners.size).toBe(1);
    const refused = results.filter((v) => !v.ok);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((v) => v.result.error_code === "KEY_PIN_MISMATCH")).toBe(true);
    expect(results.filter((v) => v.ok && v.pinEvent?.kind === "first_use")).toHaveLength(1);
    const rows = await (pools[0] as pg.Pool).query("SELECT 1 FROM agentpin_keys WHERE domain = $1", [
      "race.example",
    ]);
    expect(rows.rowCount).toBe(1);
  });

  it("the race is decided at the write: two uses that both saw first_use cannot both pin", async () => {
    const [a, b] = replicas(2) as [PgKeyPins, PgKeyPins];
    const one = makeDomain("write-race.example").doc.public_keys[0] as AgentPinJwk;
    const two = makeDomain("write-race.example").doc.public_keys[0] as AgentPinJwk;
    expect((await a.check("write-race.example", one)).status).toBe("first_use");
    expect((await b.check("write-race.example", two)).status).toBe("first_use");
    const at = new Date(NOW * 1000).toISOString();
    const uses = await Promise.all([
      a.use("write-race.example", one, at),
      b.use("write-race.example", two, at),
    ]);
    expect(uses.filter((u) => u.ok)).toHaveLength(1);
    expect(uses.filter((u) => !u.ok)).toEqual([{ ok: false, status: "changed" }]);
  });

  it("a replica started later sees the pin (and refuses another key)", async () => {
    const [a] = replicas(1) as [PgKeyPins];
    const real = makeDomain("late.example");
    expect((await verifyOn(a, real)).ok).toBe(true);
    const [late] = replicas(1) as [PgKeyPins];
    const jwk = real.doc.public_keys[0] as AgentPinJwk;
    expect(await late.check("late.example", jwk)).toMatchObject({ status: "pinned" });
    expect((await verifyOn(late, makeDomain("late.example"))).result.error_code).toBe("KEY_PIN_MISMATCH");
  });

  it("an operator's re-pin on replica A is honoured on replica B; the old key stays pinned too", async () => {
    const [a, b] = replicas(2) as [PgKeyPins, PgKeyPins];
    const old = makeDomain("rotate.example");
    const rotated = makeDomain("rotate.example");
    expect((await verifyOn(b, old)).ok).toBe(true);
    expect((await verifyOn(b, rotated)).result.error_code).toBe("KEY_PIN_MISMATCH");
    const e = await a.add(
      "rotate.example",
      rotated.doc.public_keys[0] as AgentPinJwk,
      "2026-02-01T00:00:00Z",
    );
    expect(e.kind).toBe("operator");
    const v = await verifyOn(b, rotated);
    expect(v.ok && v.pinEvent).toBe(null);
    expect((await verifyOn(b, old)).ok).toBe(true);
  });

  it("a node-local pins file next to the shared store is refused (no silent split brain)", () => {
    const journal = { append: async () => undefined as never };
    const config = {
      audience: "verifier.example",
      online: true,
      pins: "/nonexistent/pins.json",
      principals: {},
    };
    let err: unknown;
    try {
      new AgentPinAuthenticator(config, journal, Date.now, new PgKeyPins(pools[0] as pg.Pool));
    } catch (e) {
      err = e;
    }
    expect(hasErrorCode(err, "ERR_IDENTITY_CONFIG_INVALID")).toBe(true);
  });
});

async function replicaLedger(node: string): Promise<{ ledger: EctLedger; journal: Journal }> {
  const p = pool();
  const registry = builtinEventTypes();
  registerEctLedgerEventType(registry);
  const journal = await openJournal({
    store: new PgJournalStore(p, { node }),
    signer: JOURNAL_KEY,
    registry,
  });
  journals.push(journal);
  return { ledger: await EctLedger.open(journal, new PgEctIndex(p, node)), journal };
}

let iat = Date.parse("2026-03-01T12:00:00Z");
async function ect(par: string[] = []): Promise<{ token: string; claims: EctClaims }> {
  iat += 1000;
  const claims = {
    ...ectClaims(
      { exec_act: "report", aud: "spiffe://example.com/agent/c" },
      "spiffe://example.com/agent/a",
      iat,
    ),
    par,
  };
  return { token: await encodeEct(claims, "L2", ECT_KEY), claims };
}

/** Opens every connection of each pool, so concurrent transactions really overlap. */
async function warm(ps: pg.Pool[]): Promise<void> {
  await Promise.all(ps.flatMap((p) => Array.from({ length: 4 }, () => p.query("SELECT pg_sleep(0.05)"))));
}

async function recordedTimes(jti: string): Promise<number> {
  const r = await (pools[0] as pg.Pool).query(
    "SELECT count(*)::int AS n FROM journal_entries WHERE type = $1 AND body::jsonb ->> 'jti' = $2",
    [ECT_LEDGER_EVENT, jti],
  );
  return (r.rows[0] as { n: number }).n;
}

describe("the L3 ECT ledger across replicas", () => {
  it("the same ECT presented to two replicas is recorded once (a replay on B is a duplicate)", async () => {
    const a = await replicaLedger("a");
    const b = await replicaLedger("b");
    const item = await ect();
    expect((await a.ledger.append([item])).ok).toBe(true);
    expect(await b.ledger.append([item])).toMatchObject({ ok: false, code: "ERR_TRUST_ECT_DUPLICATE" });
    expect(await recordedTimes(item.claims.jti)).toBe(1);
  });

  it("a replica opened after the ECT was recorded refuses its replay", async () => {
    const a = await replicaLedger("a");
    const item = await ect();
    expect((await a.ledger.append([item])).ok).toBe(true);
    const late = await replicaLedger("late");
    expect(await late.ledger.has(item.claims.jti)).toBe(true);
    expect(await late.ledger.append([item])).toMatchObject({ code: "ERR_TRUST_ECT_DUPLICATE" });
  });

  it("a child ECT on B whose parent was recorded on A is accepted", async () => {
    const a = await replicaLedger("a");
    const b = await replicaLedger("b");
    const parent = await ect();
    expect((await a.ledger.append([parent])).ok).toBe(true);
    const child = await ect([parent.claims.jti]);
    expect((await b.ledger.append([child])).ok).toBe(true);
    expect(await a.ledger.has(child.claims.jti)).toBe(true);
  });

  it("a child whose parent exists nowhere is refused on every replica, and its jti is not burnt", async () => {
    const rs = [await replicaLedger("a"), await replicaLedger("b"), await replicaLedger("c")];
    const orphan = await ect(["never-recorded"]);
    for (const r of rs) {
      expect(await r.ledger.append([orphan])).toMatchObject({ code: "ERR_TRUST_ECT_PARENT_UNKNOWN" });
    }
    expect(await recordedTimes(orphan.claims.jti)).toBe(0);
    const rows = await (pools[0] as pg.Pool).query("SELECT 1 FROM ect_ledger WHERE jti = $1", [
      orphan.claims.jti,
    ]);
    expect(rows.rowCount).toBe(0);
  });

  it("concurrent appends of one jti through three replicas: exactly one is recorded", async () => {
    const rs = [await replicaLedger("a"), await replicaLedger("b"), await replicaLedger("c")];
    await warm(pools.slice(-3));
    const item = await ect();
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) => (rs[i % 3] as { ledger: EctLedger }).ledger.append([item])),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.code === "ERR_TRUST_ECT_DUPLICATE")).toBe(
      true,
    );
    expect(await recordedTimes(item.claims.jti)).toBe(1);
  });

  it("concurrent reservations of one jti on warm connections of three replicas: one wins", async () => {
    const ps = [pool(), pool(), pool()];
    await warm(ps);
    const indexes = ps.map((p, i) => new PgEctIndex(p, `n${i}`));
    const node = { jti: `race-${iat}`, iat, par: [] };
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => indexes[i % 3]?.reserve([node])));
    expect(results.filter((r) => r?.ok)).toHaveLength(1);
    expect(results.filter((r) => r?.ok === false && r.code === "ERR_TRUST_ECT_DUPLICATE")).toHaveLength(11);
  });

  it("a parent only reserved (its journal append never became durable) is no parent on any replica", async () => {
    const a = await replicaLedger("a");
    const b = await replicaLedger("b");
    const parent = await ect();
    // Replica A reserves, then its journal fails before the entry is durable.
    await a.journal.close();
    await expect(a.ledger.append([parent])).rejects.toMatchObject({ code: "ERR_JOURNAL_CLOSED" });
    const child = await ect([parent.claims.jti]);
    expect(await b.ledger.append([child])).toMatchObject({ code: "ERR_TRUST_ECT_PARENT_UNKNOWN" });
    expect(await b.ledger.append([parent])).toMatchObject({ code: "ERR_TRUST_ECT_DUPLICATE" });
  });

  it("a parent whose replica stopped between the journal's commit and the mark still resolves (the journal is the truth)", async () => {
    const a = await replicaLedger("a");
    const b = await replicaLedger("b");
    const parent = await ect();
    expect((await a.ledger.append([parent])).ok).toBe(true);
    await (pools[0] as pg.Pool).query("UPDATE ect_ledger SET recorded = false WHERE jti = $1", [
      parent.claims.jti,
    ]);
    expect((await b.ledger.append([await ect([parent.claims.jti])])).ok).toBe(true);
    expect(await a.ledger.has(parent.claims.jti)).toBe(true);
  });

  it("a batch refused for one member reserves none of its jtis", async () => {
    const a = await replicaLedger("a");
    const b = await replicaLedger("b");
    const taken = await ect();
    expect((await a.ledger.append([taken])).ok).toBe(true);
    const fresh = await ect();
    expect(await b.ledger.append([fresh, taken])).toMatchObject({ code: "ERR_TRUST_ECT_DUPLICATE" });
    expect((await a.ledger.append([fresh])).ok).toBe(true);
  });

  it("migration 4 indexes the ECTs a journal already held: a replay of one recorded before the upgrade is refused", async () => {
    const older = poolOf(await freshDatabase(server.connectionString), 4);
    pools.push(older);
    expect((await migrate(older, 3)).applied).toEqual([1, 2, 3]);
    const registry = builtinEventTypes();
    registerEctLedgerEventType(registry);
    // The ECT entry as schema 3 held it: written by a journal (on a scratch store, as this
    // Warden's PostgreSQL journal needs schema 5), copied into the one global chain's rows.
    const scratchStore = SqliteJournalStore.open(":memory:");
    const scratch = await openJournal({ store: scratchStore, signer: JOURNAL_KEY, registry });
    const before = await ect();
    expect((await (await EctLedger.open(scratch)).append([before])).ok).toBe(true);
    for await (const e of scratchStore.entries()) {
      const x = e as JournalEntry;
      await older.query(
        "INSERT INTO journal_entries (seq, time, type, run_id, trace_id, prev_hash, hash, key_id, signature, body, node) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,'old')",
        [
          x.seq,
          x.time,
          x.type,
          x.run_id,
          x.trace_id,
          x.prev_hash,
          x.hash,
          x.key_id,
          x.signature,
          canonicalJson(x.body),
        ],
      );
      await older.query("UPDATE journal_head SET seq = $1, hash = $2", [x.seq, x.hash]);
    }
    await scratch.close();
    await scratchStore.close();
    expect((await migrate(older, 4)).applied).toEqual([4]);
    expect((await migrate(older)).applied).toEqual(
      Array.from({ length: SCHEMA_VERSION - 4 }, (_, i) => i + 5),
    );
    // The global chain goes on after the upgrade, with the shared index.
    const journal = await openJournal({
      store: new PgJournalStore(older, { node: "old" }),
      signer: JOURNAL_KEY,
      registry,
    });
    journals.push(journal);
    const upgraded = await EctLedger.open(journal, new PgEctIndex(older, "new"));
    expect(await upgraded.has(before.claims.jti)).toBe(true);
    expect(await upgraded.append([before])).toMatchObject({ code: "ERR_TRUST_ECT_DUPLICATE" });
    expect((await upgraded.append([await ect([before.claims.jti])])).ok).toBe(true);
  });
});
