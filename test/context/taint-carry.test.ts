// Taint follows the principal (issue 37 finding 1): an agent whose run read a web page
// cannot shed that taint by opening a fresh run without naming a parent. The carried
// labels are persisted (a new store over the same taint store still carries them), age
// out only after the window, never reach another principal, and only an operator's
// `clean` start drops them.
import { describe, expect, it } from "vitest";
import { createSessionStore, MemoryPrincipalTaintStore } from "../../src/context/index.js";
import { AGENT, observe, req, T0, web } from "./helpers.js";

const OTHER = "agent-2";
const get = (runId: string) => req({ toolClass: "http", action: "get", parameters: {}, runId });
const post = (runId: string, principalId = AGENT) =>
  req({ toolClass: "http", action: "post", parameters: { url: "https://x.example/" }, runId, principalId });

function store(config = {}, taintStore = new MemoryPrincipalTaintStore()) {
  const clock = { now: T0 };
  return { clock, taintStore, store: createSessionStore(config, { clock: () => clock.now, taintStore }) };
}

describe("taint escapes by opening a new run (taint.carry: principal)", () => {
  it("a fresh run without parentRun starts with the web taint of the principal's tainted run", async () => {
    const { store: s } = store();
    const tainted = await s.startRun(AGENT);
    observe(tainted, get(tainted.runId), "secret page", [web()]);
    const fresh = await s.startRun(AGENT);
    const p = fresh.prepare(post(fresh.runId));
    expect(p.effectiveTaint.map((l) => l.source)).toContain("web");
    expect(p.facts.inheritedTaint).toContain("web");
    expect(p.facts.inheritedFrom).toEqual([tainted.runId]);
    expect(p.facts.parentRun).toBeUndefined();
  });

  it("the taint is still carried after the tainted run ended, and after a restart (persisted)", async () => {
    const first = store();
    const tainted = await first.store.startRun(AGENT);
    observe(tainted, get(tainted.runId), "page", [web()]);
    first.store.end(tainted.runId);
    await first.store.carry?.flush();
    // A new process over the same persisted taint store.
    const second = store({}, first.taintStore);
    second.clock.now = T0 + 60_000;
    const fresh = await second.store.startRun(AGENT);
    expect(fresh.prepare(post(fresh.runId)).effectiveTaint.map((l) => l.source)).toContain("web");
  });

  it("taint of a run last active before the window is not carried", async () => {
    const { store: s, clock } = store({ taint: { carryWindowMs: 60_000 } });
    const tainted = await s.startRun(AGENT);
    observe(tainted, get(tainted.runId), "page", [web()]);
    s.end(tainted.runId);
    clock.now += 60_001;
    const fresh = await s.startRun(AGENT);
    expect(fresh.prepare(post(fresh.runId)).effectiveTaint).toEqual([]);
  });

  it("another principal's runs carry nothing in", async () => {
    const { store: s } = store();
    const tainted = await s.startRun(AGENT);
    observe(tainted, get(tainted.runId), "page", [web()]);
    const theirs = await s.startRun(OTHER);
    expect(theirs.prepare(post(theirs.runId, OTHER)).effectiveTaint).toEqual([]);
  });

  it("only an operator's clean start drops the carried taint; explicit mode keeps parentRun only", async () => {
    const { store: s } = store();
    const tainted = await s.startRun(AGENT);
    observe(tainted, get(tainted.runId), "page", [web()]);
    const clean = await s.startRun(AGENT, { clean: true });
    expect(clean.prepare(post(clean.runId)).effectiveTaint).toEqual([]);
    const explicit = store({ taint: { carry: "explicit" } }).store;
    const t2 = await explicit.startRun(AGENT);
    observe(t2, get(t2.runId), "page", [web()]);
    const fresh = await explicit.startRun(AGENT);
    expect(fresh.prepare(post(fresh.runId)).effectiveTaint).toEqual([]);
    const child = await explicit.startRun(AGENT, { parentRun: t2.runId });
    expect(child.prepare(post(child.runId)).effectiveTaint.map((l) => l.source)).toContain("web");
  });
});
