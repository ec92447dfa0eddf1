// Runs belong to principals (issue 17 finding 1): the runtime creates runs, only their
// owner is served, quarantine lives with the principal and persists, and taint is carried
// into a child run by parentRun.
import { describe, expect, it } from "vitest";
import {
  createSessionStore,
  MemoryPrincipalStateStore,
  type PrincipalRecord,
  type PrincipalStateStore,
} from "../../src/context/index.js";
import { AGENT, decide, expectCode, observe, req, T0, web } from "./helpers.js";

const OTHER = "agent-2";
const call = (runId: string, p: Parameters<typeof req>[0], principalId = AGENT) =>
  req({ ...p, runId, principalId });
const post = { toolClass: "http", action: "post", parameters: { url: "https://x.example/" } };
const read = { toolClass: "file", action: "read", parameters: { path: "a.txt" } };

function store(config = {}) {
  const clock = { now: T0 };
  return { clock, store: createSessionStore(config, { clock: () => clock.now }) };
}

describe("runs are created by the runtime and bound to their principal", () => {
  it("startRun returns a fresh unguessable id bound to the principal", async () => {
    const { store: s } = store();
    const a = await s.startRun(AGENT);
    const b = await s.startRun(AGENT);
    expect(a.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.runId).not.toBe(b.runId);
    expect(s.run(a.runId, AGENT)).toBe(a);
  });

  it("another principal naming a run it does not own gets the same answer as for an unknown run", async () => {
    const { store: s } = store();
    const mine = await s.startRun(AGENT);
    expectCode(() => s.run(mine.runId, OTHER), "ERR_RUN_UNKNOWN");
    expectCode(() => s.run("no-such-run", OTHER), "ERR_RUN_UNKNOWN");
  });

  it("an ended run is unknown afterwards", async () => {
    const { store: s } = store();
    const r = await s.startRun(AGENT);
    s.end(r.runId);
    expectCode(() => s.run(r.runId, AGENT), "ERR_RUN_UNKNOWN");
    expectCode(() => r.prepare(call(r.runId, read)), "ERR_CONTEXT_SESSION_CLOSED");
  });

  it("rejects an invalid principal", async () => {
    const { store: s } = store();
    await expect(s.startRun("")).rejects.toMatchObject({ code: "ERR_CONTEXT_INPUT_INVALID" });
  });
});

describe("principal-level quarantine (attacks)", () => {
  it("an agent that rotates runId stays quarantined", () => {
    const { store: s } = store();
    const first = s.open({ runId: "r1", principalId: AGENT });
    for (let i = 0; i < 5; i++) decide(first, call("r1", post), "deny");
    expect(first.quarantined).toBe(true);
    const fresh = s.open({ runId: "r2", principalId: AGENT });
    const p = fresh.prepare(call("r2", post));
    expect(p.preDecision?.reasonCodes).toContain("quarantined");
    expect(p.facts.quarantined).toBe(true);
    // Read-only work stays allowed, and another agent is unaffected.
    expect(fresh.prepare(call("r2", read)).preDecision).toBeUndefined();
    const other = s.open({ runId: "r3", principalId: OTHER });
    expect(other.prepare(call("r3", post, OTHER)).preDecision).toBeUndefined();
  });

  it("an agent that starts a new run stays quarantined", async () => {
    const { store: s } = store();
    const first = await s.startRun(AGENT);
    first.quarantine("operator");
    const next = await s.startRun(AGENT);
    expect(next.prepare(call(next.runId, post)).preDecision?.reasonCodes).toEqual(["quarantined"]);
  });

  it("a quarantine survives a restart: a new store over the same principal store keeps it", async () => {
    const persisted = new MemoryPrincipalStateStore();
    const before = createSessionStore({}, { principalStore: persisted, clock: () => T0 });
    const r = await before.startRun(AGENT);
    for (let i = 0; i < 5; i++) decide(r, call(r.runId, post), "deny");
    await before.principals.flush();
    const after = createSessionStore({}, { principalStore: persisted, clock: () => T0 });
    const next = await after.startRun(AGENT);
    expect(next.quarantineTrigger).toMatchObject({ type: "denial_threshold" });
    expect(next.prepare(call(next.runId, post)).preDecision?.reasonCodes).toEqual(["quarantined"]);
  });

  it("a failing principal store keeps the quarantine in force and reports the failure", async () => {
    const errors: string[] = [];
    const broken: PrincipalStateStore = {
      load: () => undefined,
      save: async (_r: PrincipalRecord) => {
        throw new Error("disk full");
      },
    };
    const s = createSessionStore({}, { principalStore: broken, onError: (_e, p) => errors.push(p) });
    const r = await s.startRun(AGENT);
    r.quarantine("operator");
    await s.principals.flush();
    expect(errors).toEqual([AGENT]);
    const next = await s.startRun(AGENT);
    expect(next.quarantined).toBe(true);
  });

  it("reading a stale store never lifts a quarantine held in memory", async () => {
    const s = createSessionStore(
      {},
      { principalStore: { load: () => ({ principalId: AGENT }), save: () => {} } },
    );
    (await s.startRun(AGENT)).quarantine("operator");
    expect((await s.startRun(AGENT)).quarantined).toBe(true);
  });
});

describe("taint lineage (parentRun)", () => {
  it("a child run started from a tainted run carries its taint into every call", async () => {
    const { store: s } = store();
    const parent = await s.startRun(AGENT);
    observe(parent, call(parent.runId, { toolClass: "http", action: "get", parameters: {} }), "page", [
      web(),
    ]);
    const child = await s.startRun(AGENT, { parentRun: parent.runId });
    const p = child.prepare(call(child.runId, read));
    expect(p.effectiveTaint.map((l) => l.source)).toContain("web");
    expect(p.facts.parentRun).toBe(parent.runId);
    expect(p.facts.inheritedTaint).toContain("web");
    expect(child.events()[0]).toMatchObject({ type: "session.opened", parentRun: parent.runId });
  });

  it("taint is carried from an ended parent run too", async () => {
    const { store: s } = store();
    const parent = await s.startRun(AGENT);
    observe(parent, call(parent.runId, { toolClass: "http", action: "get", parameters: {} }), "page", [
      web(),
    ]);
    s.end(parent.runId);
    const child = await s.startRun(AGENT, { parentRun: parent.runId });
    expect(child.prepare(call(child.runId, read)).effectiveTaint.map((l) => l.source)).toContain("web");
  });

  it("an agent cannot name another principal's run as its parent", async () => {
    const { store: s } = store();
    const theirs = await s.startRun(OTHER);
    await expect(s.startRun(AGENT, { parentRun: theirs.runId })).rejects.toMatchObject({
      code: "ERR_RUN_UNKNOWN",
    });
    await expect(s.startRun(AGENT, { parentRun: "nope" })).rejects.toMatchObject({ code: "ERR_RUN_UNKNOWN" });
  });

  it("with taint.carry: explicit, a run started without a parent inherits nothing", async () => {
    const { store: s } = store({ taint: { carry: "explicit" } });
    const parent = await s.startRun(AGENT);
    observe(parent, call(parent.runId, { toolClass: "http", action: "get", parameters: {} }), "page", [
      web(),
    ]);
    const fresh = await s.startRun(AGENT);
    const p = fresh.prepare(call(fresh.runId, read));
    expect(p.effectiveTaint).toEqual([]);
    expect(p.facts.parentRun).toBeUndefined();
  });
});

describe("a run adopted from another replica (distributed mode)", () => {
  it("an adopted run keeps the taint and the spent budget it had on its dead owner", () => {
    const { store: s } = store({ budgets: { toolCalls: 3 } });
    const r = s.adopt({ runId: "r-adopted", principalId: AGENT, taint: [web()], admitted: 2 });
    expect(s.run("r-adopted", AGENT)).toBe(r);
    expect(r.taintSeen()).toEqual([expect.objectContaining(web())]);
    const p = r.prepare(call("r-adopted", read));
    expect(p.effectiveTaint).toEqual([expect.objectContaining(web())]);
    expect(r.reserve(p).ok).toBe(true);
    r.recordDecision(p, "allow", []);
    const last = r.prepare(call("r-adopted", read));
    expect(r.reserve(last)).toMatchObject({ ok: false, code: "ERR_RUN_BUDGET_EXHAUSTED" });
  });

  it("another principal cannot use an adopted run, and an ended run cannot be adopted back", async () => {
    const { store: s } = store();
    s.adopt({ runId: "r-a", principalId: AGENT, taint: [], admitted: 0 });
    expectCode(() => s.run("r-a", OTHER), "ERR_RUN_UNKNOWN");
    expectCode(
      () => s.adopt({ runId: "r-a", principalId: AGENT, taint: [], admitted: 0 }),
      "ERR_RUN_UNKNOWN",
    );
    const mine = await s.startRun(AGENT);
    s.end(mine.runId);
    expectCode(
      () => s.adopt({ runId: mine.runId, principalId: AGENT, taint: [], admitted: 0 }),
      "ERR_RUN_UNKNOWN",
    );
    expect(s.openRunIds()).toEqual(["r-a"]);
  });
});
