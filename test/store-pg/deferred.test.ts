// The shared deferred actions on one real PostgreSQL, each replica simulated by its own pool
// and its own DeferQueue (as a separate sidecar has), written as the attacks on a fleet:
// releasing an action twice, releasing one's own, forging a verdict into the table.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeferQueue, type DeferResolution, type DeferredItem } from "../../src/gate/index.js";
import { migrate, PgDeferQueue } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
const pools: pg.Pool[] = [];
const open: PgDeferQueue[] = [];

beforeAll(async () => {
  server = await startPostgres();
  const url = await freshDatabase(server.connectionString);
  for (let i = 0; i < 3; i++) pools.push(poolOf(url, 4));
  await migrate(pools[0]!);
}, 120_000);

afterAll(async () => {
  for (const q of open) await q.close();
  for (const p of pools) await p.end();
  await server?.stop();
});

/**
 * Three replicas: each its DeferQueue shared through its own pool; no notifications (the poll
 * alone applies). `skewMs` sets B's clock behind the others'.
 */
function replicas(skewMs = 0): { local: DeferQueue; shared: PgDeferQueue }[] {
  return pools.map((p, i) => {
    const local = new DeferQueue();
    const clock = i === 1 ? () => Date.now() - skewMs : Date.now;
    const shared = new PgDeferQueue(p, { node: `n${i}`, local, pollMs: 50, clock });
    open.push(shared);
    return { local, shared };
  });
}

function item(id: string, runId = `run-${id}`): DeferredItem {
  const now = Date.now();
  return {
    id,
    runId,
    principalId: "alice",
    decisionId: `dec-${id}`,
    summary: { toolClass: "file", action: "delete", tool: "rm" },
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
  };
}

const operator = { id: "op", roles: ["approver"] };
const release = { outcome: "allow" as const, releaser: operator, note: "batch window reached" };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function row(id: string): Promise<{ verdict: string | null } | undefined> {
  const r = await pools[0]!.query<{ verdict: string | null }>("SELECT verdict FROM deferred WHERE id = $1", [
    id,
  ]);
  return r.rows[0];
}

async function until<T>(f: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await pause(20);
  }
  throw new Error("condition never met");
}

describe("deferred actions shared by three replicas", () => {
  it("held on A, listed on B and C, released on B: A releases it once; a second verdict on C is refused; the row goes", async () => {
    const [a, b, c] = replicas();
    const held = a!.local.hold(item("d1"), 60_000) as Promise<DeferResolution>;
    await until(() => row("d1"));
    for (const r of [b!, c!]) expect((await r.shared.list()).map((d) => d.id)).toContain("d1");
    expect(await b!.shared.find("d1")).toMatchObject({ decisionId: "dec-d1", principalId: "alice" });
    expect(await b!.shared.release("d1", release)).toEqual({ ok: true });
    expect(await c!.shared.release("d1", { ...release, outcome: "deny" })).toMatchObject({
      ok: false,
      code: "ERR_APPROVAL_NOT_FOUND",
    });
    expect(await held).toEqual({ outcome: "allow", by: "op", note: "batch window reached" });
    await until(async () => ((await row("d1")) === undefined ? true : undefined));
    expect(await c!.shared.list()).toEqual([]);
  });

  it("denied on C: the action held on A is denied", async () => {
    const [a, , c] = replicas();
    const held = a!.local.hold(item("d2"), 60_000) as Promise<DeferResolution>;
    await until(() => row("d2"));
    expect(await c!.shared.release("d2", { ...release, outcome: "deny" })).toEqual({ ok: true });
    expect((await held).outcome).toBe("deny");
  });

  it("two replicas releasing at once: one verdict, the other refused", async () => {
    const [a, b, c] = replicas();
    const held = a!.local.hold(item("d3"), 60_000) as Promise<DeferResolution>;
    await until(() => row("d3"));
    const answers = await Promise.all([
      b!.shared.release("d3", release),
      c!.shared.release("d3", { ...release, outcome: "deny", note: "denied on replica c" }),
    ]);
    expect(answers.filter((x) => x.ok).length).toBe(1);
    expect(answers.find((x) => !x.ok)).toMatchObject({ code: "ERR_APPROVAL_NOT_FOUND" });
    expect((await held).outcome).toBe(answers[0]!.ok ? "allow" : "deny");
  });

  it("the principal releasing its own action, or someone without the approver role, is refused and claims nothing", async () => {
    const [a, b] = replicas();
    const ctl = new AbortController();
    const held = a!.local.hold(item("d4"), 60_000, ctl.signal) as Promise<DeferResolution>;
    await until(() => row("d4"));
    const self = { ...release, releaser: { id: "alice", roles: ["approver"] } };
    expect(await b!.shared.release("d4", self)).toMatchObject({
      ok: false,
      code: "ERR_APPROVAL_FORBIDDEN",
      message: "a principal cannot release its own action",
    });
    const agent = { ...release, releaser: { id: "mallory", roles: ["agent"] } };
    expect(await b!.shared.release("d4", agent)).toMatchObject({ code: "ERR_APPROVAL_FORBIDDEN" });
    expect(await b!.shared.release("d4", { ...release, note: "ok" })).toMatchObject({
      code: "ERR_APPROVAL_INVALID",
    });
    expect((await row("d4"))?.verdict).toBeNull();
    ctl.abort();
    expect((await held).outcome).toBe("cancelled");
  });

  it("a verdict forged into the table (no approver, or the principal itself) is never obeyed by the holder", async () => {
    const [a] = replicas();
    const ctl = new AbortController();
    const held = a!.local.hold(item("d5"), 60_000, ctl.signal) as Promise<DeferResolution>;
    await until(() => row("d5"));
    const forgeries = [
      { outcome: "allow", note: "no approver named at all" },
      { outcome: "allow", releaser: { id: "alice", roles: ["approver"] }, note: "releasing myself" },
      "not even JSON",
    ];
    for (const forged of forgeries) {
      await pools[1]!.query("UPDATE deferred SET verdict = $2 WHERE id = $1", [
        "d5",
        typeof forged === "string" ? forged : JSON.stringify(forged),
      ]);
      await pools[1]!.query("SELECT pg_notify('warden_deferred', 'd5')");
      await pause(200);
      expect(a!.local.list().map((d) => d.id)).toContain("d5");
    }
    ctl.abort();
    expect((await held).outcome).toBe("cancelled");
  });

  it("the holder's timeout still denies; its row goes and a late release is refused", async () => {
    const [a, b] = replicas();
    const held = a!.local.hold(item("d6"), 300) as Promise<DeferResolution>;
    await until(() => row("d6"));
    expect((await held).outcome).toBe("timeout");
    await until(async () => ((await row("d6")) === undefined ? true : undefined));
    expect(await b!.shared.release("d6", release)).toMatchObject({ code: "ERR_APPROVAL_NOT_FOUND" });
  });

  it("an action whose row cannot be stored is cancelled (the Gate denies it), never held unlisted", async () => {
    const [a] = replicas();
    await pools[0]!.query(
      "INSERT INTO deferred (id, decision_id, run_id, node, item, expires_at) VALUES ('d7', 'd', 'r', 'n9', '{}', 0)",
    );
    expect(await (a!.local.hold(item("d7"), 60_000) as Promise<DeferResolution>)).toEqual({
      outcome: "cancelled",
    });
    expect(a!.local.list()).toEqual([]);
  });

  it("releases from other replicas keep the run's order: the later action waits for the earlier one", async () => {
    const [a, b, c] = replicas();
    const first = a!.local.hold(item("d8", "run-ordered"), 60_000) as Promise<DeferResolution>;
    const second = a!.local.hold(item("d9", "run-ordered"), 60_000) as Promise<DeferResolution>;
    const order: string[] = [];
    void first.then(() => order.push("d8"));
    void second.then(() => order.push("d9"));
    await until(() => row("d9"));
    expect(await b!.shared.release("d9", release)).toEqual({ ok: true });
    await pause(300);
    expect(order).toEqual([]);
    // Answered, it waits for d8 on A, and no replica can answer it again meanwhile.
    expect(await c!.shared.release("d9", { ...release, outcome: "deny" })).toMatchObject({
      code: "ERR_APPROVAL_NOT_FOUND",
    });
    expect((await b!.shared.list()).map((d) => d.id)).not.toContain("d9");
    expect(await c!.shared.release("d8", release)).toEqual({ ok: true });
    await Promise.all([first, second]);
    expect(order).toEqual(["d8", "d9"]);
  });

  it("an action that timed out while an earlier one of its run is still held cannot be released, even by a replica whose clock is behind", async () => {
    const [a, b] = replicas(5_000);
    const ctl = new AbortController();
    const first = a!.local.hold(item("d11", "run-waits"), 60_000, ctl.signal) as Promise<DeferResolution>;
    const late = a!.local.hold(item("d12", "run-waits"), 200) as Promise<DeferResolution>;
    await until(() => row("d11"));
    await pause(400);
    // d12 timed out; it waits for d11 on A, but its answer is given: the release is refused
    // (its row went with its answer: B's clock, 5 s behind, still reads it as unexpired).
    expect(await b!.shared.release("d12", release)).toMatchObject({ code: "ERR_APPROVAL_NOT_FOUND" });
    expect((await b!.shared.list()).map((d) => d.id)).toEqual(["d11"]);
    ctl.abort();
    expect((await first).outcome).toBe("cancelled");
    expect((await late).outcome).toBe("timeout");
  });

  it("a dead replica's rows are listed until their expiry, then neither listed nor answerable", async () => {
    const [, b] = replicas();
    const dead = { ...item("d10"), principalId: "bob" };
    await pools[2]!.query(
      "INSERT INTO deferred (id, decision_id, run_id, principal_id, node, item, expires_at) VALUES ($1, $2, $3, $4, 'gone', $5, $6)",
      [dead.id, dead.decisionId, dead.runId, "bob", JSON.stringify(dead), Date.now() + 300],
    );
    expect((await b!.shared.list()).map((d) => d.id)).toContain("d10");
    await pause(400);
    expect((await b!.shared.list()).map((d) => d.id)).not.toContain("d10");
    expect(await b!.shared.release("d10", release)).toMatchObject({ code: "ERR_APPROVAL_NOT_FOUND" });
  });
});
