// The deployment's cached trust table and what another replica's change means here
// (src/runtime/apae-table.ts), over the real in-memory trust store and the real principal
// cache, as attacks: a revocation or quarantine decided elsewhere is not missed, a lift
// never removes a quarantine trust did not set, and the cache never goes back in time.
import { describe, expect, it } from "vitest";
import { Principals } from "../../src/context/index.js";
import { actOnChange, type TableChange, TrustTable } from "../../src/runtime/apae-table.js";
import {
  DEFAULT_TRUST_CONFIG,
  freshRow,
  MemoryTrustStore,
  type TrustRow,
  type TrustStore,
} from "../../src/trust/index.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const SELF = DEFAULT_TRUST_CONFIG.self_id;
const row = (over: Partial<TrustRow> = {}): TrustRow => ({
  ...freshRow(SELF, "agent", T0, DEFAULT_TRUST_CONFIG),
  ...over,
});
const quarantined = (over: Partial<TrustRow> = {}) =>
  row({ score: 0.1, status: "quarantined", quarantineUntil: T0 + 60_000, quarantineCount: 1, ...over });

function actions(principals = new Principals()) {
  const revoked: { subject: string; at: number }[] = [];
  return {
    principals,
    revoked,
    a: {
      revocationFloor: DEFAULT_TRUST_CONFIG.revocation_floor,
      principals,
      now: () => T0 + 5,
      revoke: async (r: { subject: string; at: number }) => {
        revoked.push({ subject: r.subject, at: r.at });
      },
    },
  };
}

describe("another replica's trust change, seen here", () => {
  it("a fall below the revocation floor decided elsewhere runs this replica's revocation hooks, once", async () => {
    const x = actions();
    const change: TableChange = { before: row({ score: 0.3 }), after: row({ score: 0.18 }), own: false };
    await actOnChange(change, x.a);
    expect(x.revoked).toEqual([{ subject: "agent", at: T0 + 5 }]);
    // Already below: no second revocation; this replica's own write: its emissions did it.
    await actOnChange({ before: row({ score: 0.18 }), after: row({ score: 0.17 }), own: false }, x.a);
    await actOnChange({ before: row({ score: 0.3 }), after: row({ score: 0.18 }), own: true }, x.a);
    expect(x.revoked).toHaveLength(1);
  });

  it("a trust quarantine entered elsewhere quarantines the principal here", async () => {
    const x = actions();
    await actOnChange({ before: row({ score: 0.16 }), after: quarantined(), own: false }, x.a);
    expect(x.principals.quarantineOf("agent")?.type).toBe("trust_score");
  });

  it("a peer's quarantine notice (no count raised) holds new delegations only, as where it was received", async () => {
    const x = actions();
    const notice = row({
      score: 0.4,
      status: "quarantined",
      quarantineUntil: T0 + 60_000,
      quarantineCount: 0,
    });
    await actOnChange({ before: row({ score: 0.4 }), after: notice, own: false }, x.a);
    expect(x.principals.quarantineOf("agent")).toBeUndefined();
  });

  it("a trust quarantine ended elsewhere lifts only the quarantine trust set, never an operator's", async () => {
    const x = actions();
    await actOnChange({ before: row({ score: 0.16 }), after: quarantined(), own: false }, x.a);
    await actOnChange({ before: quarantined(), after: row({ score: 0.5 }), own: false }, x.a);
    expect(x.principals.quarantineOf("agent")).toBeUndefined();
    const y = actions();
    y.principals.quarantine("agent", "run-1", {
      type: "manual",
      reason: "operator",
      counters: { proposed: 0, allowed: 0, denied: 0, deferred: 0, executed: 0, stepUps: 0, modified: 0 },
      matchedEvents: [],
      at: new Date(T0).toISOString(),
    });
    await actOnChange({ before: quarantined(), after: row({ score: 0.5 }), own: false }, y.a);
    expect(y.principals.quarantineOf("agent")?.type).toBe("manual");
  });
});

describe("the cached deployment table", () => {
  it("follows writes it did not make (reload, resync) and reports each difference once", async () => {
    const store = new MemoryTrustStore();
    const seen: TableChange[] = [];
    const table = new TrustTable(store, SELF, {
      onChange: async (c) => {
        seen.push(c);
      },
      onError: (err) => {
        throw err;
      },
    });
    await table.load();
    expect(table.get("agent")).toBeUndefined();
    // Another replica writes the row (the shared store): the notification reloads it.
    await store.update(SELF, "agent", () => ({ row: row({ score: 0.4 }), result: null }));
    await table.reload(SELF, "agent");
    expect(table.get("agent")?.score).toBe(0.4);
    await table.reload(SELF, "agent");
    await store.update(SELF, "agent", () => ({ row: quarantined(), result: null }));
    await table.resync();
    expect(seen.map((c) => [c.before?.score ?? null, c.after.score, c.own])).toEqual([
      [null, 0.4, false],
      [0.4, 0.1, false],
    ]);
    // Another truster's rows are not the deployment's table.
    await store.update("someone-else", "agent", () => ({
      row: { ...row(), truster: "someone-else" },
      result: null,
    }));
    await table.reload("someone-else", "agent");
    expect(table.get("agent")?.score).toBe(0.1);
  });

  it("reads are serialized: a slow older read never overwrites a newer one", async () => {
    const store = new MemoryTrustStore();
    await store.update(SELF, "agent", () => ({ row: row({ score: 0.4 }), result: null }));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The first read is held until after the second read finished (if it could run).
    let calls = 0;
    const slow: TrustStore = {
      get: async (t, s) => {
        const r = await store.get(t, s);
        if (calls++ === 0) await gate;
        return r;
      },
      update: (t, s, fn) => store.update(t, s, fn),
      list: (t) => store.list(t),
      dueQuarantines: (now) => store.dueQuarantines(now),
      addRecipient: (s, p) => store.addRecipient(s, p),
      recipients: (s) => store.recipients(s),
      close: () => store.close(),
    };
    const table = new TrustTable(slow, SELF, { onChange: async () => undefined, onError: () => undefined });
    const first = table.reload(SELF, "agent");
    await store.update(SELF, "agent", () => ({ row: row({ score: 0.3 }), result: null }));
    const second = table.reload(SELF, "agent");
    await new Promise((r) => setTimeout(r, 20));
    release();
    await Promise.all([first, second]);
    expect(table.get("agent")?.score).toBe(0.3);
  });
});
