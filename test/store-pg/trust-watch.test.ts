// How a trust row written on one replica reaches the others (src/store-pg trust-watch.ts),
// on a real PostgreSQL: the write's NOTIFY names the row, a payload that is not ours is
// ignored (property), and a listener whose connection was killed reconnects and asks for a
// full resync (what it may have missed) without anyone's help.
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, PgTrustStore, parseTrustPayload, TrustWatcher } from "../../src/store-pg/index.js";
import { DEFAULT_TRUST_CONFIG, freshRow } from "../../src/trust/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
let server: PostgresServer;
let url: string;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  pool = poolOf(url, 4);
  await migrate(pool);
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await server?.stop();
});

/** Resolves once `ok()` holds, checking every 20 ms (at most `tries` times). */
async function until(ok: () => boolean, tries = 250): Promise<void> {
  for (let i = 0; i < tries && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(ok()).toBe(true);
}

describe("parseTrustPayload", () => {
  it("takes exactly a JSON pair of strings; anything else is ignored, never thrown", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(parseTrustPayload(JSON.stringify([a, b]))).toEqual([a, b]);
      }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const r = parseTrustPayload(text);
        if (r !== undefined) {
          const v: unknown = JSON.parse(text);
          expect(Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === "string")).toBe(true);
        }
      }),
    );
    expect(parseTrustPayload(undefined)).toBeUndefined();
    expect(parseTrustPayload('["a"]')).toBeUndefined();
    expect(parseTrustPayload('["a", 1]')).toBeUndefined();
  });
});

describe("TrustWatcher", () => {
  it("hears every row written through PgTrustStore, and resyncs after its connection was killed", async () => {
    const rows: string[] = [];
    let resyncs = 0;
    const w = new TrustWatcher({
      url,
      pollMs: 50,
      resyncEvery: 1_000_000, // no safety-net resync: only a reconnect asks for one
      onRow: (t, s) => rows.push(`${t}/${s}`),
      onResync: () => {
        resyncs++;
      },
    });
    try {
      await w.start();
      expect(resyncs).toBe(1); // the first LISTEN: whatever was written before it
      const store = new PgTrustStore(pool);
      const self = DEFAULT_TRUST_CONFIG.self_id;
      await store.update(self, "agent-a", () => ({
        row: freshRow(self, "agent-a", T0, DEFAULT_TRUST_CONFIG),
        result: 0,
      }));
      await until(() => rows.includes(`${self}/agent-a`));
      // A read-only update writes nothing and announces nothing.
      await store.update(self, "agent-b", () => ({ result: 0 }));
      // The listener's connection dies (a failover, an operator's kill).
      const before = resyncs;
      await pool.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
      );
      await until(() => resyncs > before);
      await store.update(self, "agent-c", () => ({
        row: freshRow(self, "agent-c", T0, DEFAULT_TRUST_CONFIG),
        result: 0,
      }));
      await until(() => rows.includes(`${self}/agent-c`));
      expect(rows.some((r) => r.endsWith("/agent-b"))).toBe(false);
    } finally {
      await w.close();
    }
  });
});
