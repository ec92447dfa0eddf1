// Bounded memory (issue 17 finding 2): caps on open runs and calls per run with coded
// refusals, idle eviction that is reported and never forgets a principal's quarantine,
// and a flood that leaves every retained structure at its bound (counts, never RSS/time).
import { describe, expect, it } from "vitest";
import {
  createSessionStore,
  type EvictedRun,
  MemoryBudgetLedger,
  verifyContextChain,
} from "../../src/context/index.js";
import { AGENT, decide, expectCode, req, T0 } from "./helpers.js";

const read = (runId: string, principalId = AGENT) =>
  req({ toolClass: "file", action: "read", parameters: { path: "a.txt" }, runId, principalId });

describe("run caps (attacks)", () => {
  it("an agent opening runs without end is refused at its cap, with a coded error", async () => {
    const s = createSessionStore({ limits: { maxOpenRunsPerPrincipal: 3 } }, { clock: () => T0 });
    for (let i = 0; i < 3; i++) await s.startRun(AGENT);
    await expect(s.startRun(AGENT)).rejects.toMatchObject({ code: "ERR_RUN_LIMIT" });
    expectCode(() => s.open({ runId: "legacy", principalId: AGENT }), "ERR_RUN_LIMIT");
    await expect(s.startRun("agent-2")).resolves.toBeDefined(); // another principal is not starved
  });

  it("the store's total cap holds across principals", async () => {
    const s = createSessionStore({ limits: { maxOpenRuns: 2 } }, { clock: () => T0 });
    await s.startRun("a");
    await s.startRun("b");
    await expect(s.startRun("c")).rejects.toMatchObject({ code: "ERR_RUN_LIMIT" });
  });

  it("a run that reached its call cap refuses further calls with ERR_RUN_FULL", async () => {
    const s = createSessionStore({ limits: { maxCallsPerRun: 3 } }, { clock: () => T0 });
    const r = await s.startRun(AGENT);
    for (let i = 0; i < 3; i++) decide(r, read(r.runId));
    expectCode(() => r.prepare(read(r.runId)), "ERR_RUN_FULL");
  });

  it("a run fed oversized requests stops at its byte cap with ERR_RUN_FULL (memory per run is bounded by bytes too)", async () => {
    const s = createSessionStore({ limits: { maxBytesPerRun: 64 * 1024 } }, { clock: () => T0 });
    const r = await s.startRun(AGENT);
    const big = (i: number, runId = r.runId) => ({
      ...read(runId),
      parameters: { blob: `${i}`.padEnd(20_000, "x") },
    });
    let accepted = 0;
    for (let i = 0; i < 10; i++) {
      try {
        decide(r, big(i));
        accepted++;
      } catch (err) {
        expect(err).toMatchObject({ code: "ERR_RUN_FULL", details: { kind: "bytes" } });
        break;
      }
    }
    // 64 KiB holds three 20 KB requests, not a fourth; a small call still fits afterwards.
    expect(accepted).toBe(3);
    expect(() => decide(r, read(r.runId))).not.toThrow();
    // A new run starts with a fresh byte count.
    const next = await s.startRun(AGENT);
    expect(() => decide(next, big(99, next.runId))).not.toThrow();
  });
});

describe("idle eviction", () => {
  it("evicts idle runs, reports each for the journal, and frees the principal's cap", async () => {
    const clock = { now: T0 };
    const evicted: EvictedRun[] = [];
    const s = createSessionStore(
      { limits: { maxOpenRunsPerPrincipal: 2, idleMs: 1000 } },
      { clock: () => clock.now, onEvict: (r) => evicted.push(r) },
    );
    const a = await s.startRun(AGENT);
    const b = await s.startRun(AGENT);
    clock.now += 600;
    decide(b, read(b.runId)); // b is active, a is not
    clock.now += 600;
    const c = await s.startRun(AGENT); // a is evicted to make room
    expect(evicted).toEqual([{ runId: a.runId, principalId: AGENT, lastActive: T0, at: T0 + 1200 }]);
    expectCode(() => s.run(a.runId, AGENT), "ERR_RUN_UNKNOWN");
    expect(s.run(b.runId, AGENT)).toBe(b);
    expect(s.run(c.runId, AGENT)).toBe(c);
  });

  it("an evicted quarantined run does not take the principal's quarantine with it", async () => {
    const clock = { now: T0 };
    const s = createSessionStore({ limits: { idleMs: 1000 } }, { clock: () => clock.now });
    const r = await s.startRun(AGENT);
    r.quarantine("operator");
    clock.now += 5000;
    expect(s.sweep().map((e) => e.runId)).toEqual([r.runId]);
    const next = await s.startRun(AGENT);
    expect(next.quarantined).toBe(true);
  });

  it("a run with a call waiting on a human is not evicted", async () => {
    const clock = { now: T0 };
    const s = createSessionStore({ limits: { idleMs: 1000 } }, { clock: () => clock.now });
    const r = await s.startRun(AGENT);
    const p = r.prepare(read(r.runId));
    r.reserve(p);
    r.recordDecision(p, "step_up", []);
    clock.now += 5000;
    expect(s.sweep()).toEqual([]);
    r.recordResolution(p, "allow", []);
    clock.now += 5000;
    expect(s.sweep().map((e) => e.runId)).toEqual([r.runId]);
  });
});

describe("flood (attack)", () => {
  // 100k real calls take seconds on an idle core; the generous timeout is for a loaded machine.
  it("100k calls keep every retained structure bounded", { timeout: 240_000 }, async () => {
    const ledger = new MemoryBudgetLedger();
    const s = createSessionStore(
      { limits: { eventsRetained: 64, maxCallsPerRun: 1_000_000, retiredRunsRemembered: 100 } },
      { clock: () => T0, ledger },
    );
    const r = await s.startRun(AGENT);
    const other = await s.startRun("agent-2");
    for (let i = 0; i < 100_000; i++) {
      const p = r.prepare({ ...read(r.runId), parameters: { path: `f-${i}.txt` } });
      const res = r.reserve(p);
      r.recordDecision(p, res.ok && i % 2 === 0 ? "allow" : "deny", []);
    }
    for (let i = 0; i < 1000; i++) {
      await s.startRun("agent-3").then((x) => s.end(x.runId));
    }
    expect(r.snapshot().counters.proposed).toBe(100_000);
    expect(r.retainedEvents).toBeLessThanOrEqual(2 * 64);
    expect(r.events().length).toBe(64);
    expect(r.snapshot().recentEvents.length).toBeLessThanOrEqual(20);
    const stats = ledger.stats();
    expect(stats.openReservations).toBe(0);
    expect(stats.settledRemembered).toBeLessThanOrEqual(4096);
    // One log (only AGENT calls): at most its cap, plus a dead prefix no larger than the live part.
    expect(stats.rateSlots).toBeLessThanOrEqual(2 * 10_000 + 65);
    expect(s.openRuns).toBe(2);
    expect(s.retiredRuns).toBeLessThanOrEqual(100);
    // The retained tail still verifies against its anchor.
    const v = verifyContextChain(r.events(), r.chainAnchor());
    // session.opened + one call.decided per call + the quarantine the denials triggered.
    expect(r.quarantined).toBe(true);
    expect(v).toEqual({ ok: true, head: r.contextHash(), length: 1 + 100_000 + 1 });
    expect(other.retainedEvents).toBe(1);
  });
});
