// Reservations (issue 17 finding 3): budgets and rate limits are taken atomically before
// any await, then committed or released; the principal's rate-limit override is honoured.
import { describe, expect, it } from "vitest";
import {
  createSessionStore,
  MemoryBudgetLedger,
  type Prepared,
  type Session,
} from "../../src/context/index.js";
import { AGENT, decide, expectCode, harness, RUN, req, T0 } from "./helpers.js";

const read = req({ toolClass: "file", action: "read", parameters: { path: "a.txt" } });
const tick = () => new Promise<void>((r) => setTimeout(r, 0));

/** One call as the Gate drives it: prepare, reserve before any await, await, record. */
async function governed(session: Session, waits: number): Promise<"ran" | "refused"> {
  const p = session.prepare(read);
  if (p.preDecision !== undefined) {
    session.recordDecision(p, "deny", p.preDecision.reasonCodes);
    return "refused";
  }
  const r = session.reserve(p);
  if (!r.ok) {
    session.recordDecision(p, "deny", r.reasonCodes);
    return "refused";
  }
  for (let i = 0; i < waits; i++) await tick(); // the journal's await
  session.recordDecision(p, "allow", []);
  return "ran";
}

describe("reservations (attacks)", () => {
  it("40 concurrent calls against a tool-call budget of 5: exactly 5 run", async () => {
    const { session } = harness({ budgets: { toolCalls: 5 } });
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => governed(session, 1 + (i % 3))));
    expect(outcomes.filter((o) => o === "ran")).toHaveLength(5);
    expect(session.snapshot().budgets.toolCalls).toEqual({ used: 5, limit: 5 });
  });

  it("40 concurrent calls against a rate limit of 5 a minute: exactly 5 run, across runs of the principal", async () => {
    const clock = { now: T0 };
    const store = createSessionStore({ rateLimits: { maxCallsPerMinute: 5 } }, { clock: () => clock.now });
    const runs = ["r1", "r2", "r3", "r4"].map((runId) => store.open({ runId, principalId: AGENT }));
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const s = runs[i % 4]!;
        const p = s.prepare({ ...read, runId: s.runId });
        const r = p.preDecision === undefined ? s.reserve(p) : undefined;
        await tick();
        s.recordDecision(p, r?.ok ? "allow" : "deny", []);
        return r?.ok === true;
      }),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(5);
  });

  it("seven sequential calls with a principal override of 5 a minute: 2 are refused", () => {
    const { session } = harness();
    let refused = 0;
    for (let i = 0; i < 7; i++) {
      const p = decide(session, read, undefined, { maxCallsPerMinute: 5 });
      if (p.preDecision?.reasonCodes.includes("rate_limited")) refused++;
    }
    expect(refused).toBe(2);
  });

  it("a configured per-principal limit holds for sequential calls too", () => {
    const { session } = harness({ rateLimits: { perPrincipal: { [AGENT]: 3 } } });
    const refused = Array.from({ length: 7 }, () => decide(session, read)).filter(
      (p) => p.preDecision !== undefined,
    );
    expect(refused).toHaveLength(4);
  });

  it("a denied call gives its budget unit back; a refused reservation is a coded refusal", () => {
    const { session } = harness({ budgets: { toolCalls: 1 } });
    const a = session.prepare(read);
    expect(session.reserve(a).ok).toBe(true);
    const b = session.prepare(read);
    expect(session.reserve(b)).toEqual({
      ok: false,
      code: "ERR_RUN_BUDGET_EXHAUSTED",
      reasonCodes: ["budget_tool_calls_exhausted"],
    });
    session.recordDecision(a, "deny", ["policy"]);
    const c = session.prepare(read);
    expect(session.reserve(c).ok).toBe(true);
    session.recordDecision(c, "allow", []);
    expect(session.snapshot().budgets.toolCalls).toEqual({ used: 1, limit: 1 });
  });

  it("a step_up holds its unit while waiting: no other call can take it", () => {
    const { session } = harness({ budgets: { toolCalls: 1 } });
    const waiting = session.prepare(read);
    expect(session.reserve(waiting).ok).toBe(true);
    session.recordDecision(waiting, "step_up", []);
    const other = session.prepare(read);
    expect(session.reserve(other).ok).toBe(false);
    expect(session.standingDenials(false)).toEqual([]); // the approved call itself may still run
    session.recordResolution(waiting, "allow", []);
    expect(session.standingDenials(false)).toEqual(["budget_tool_calls_exhausted"]);
  });

  it("a call cannot reserve twice, and a foreign preparation cannot reserve", () => {
    const { session, store } = harness();
    const p: Prepared = session.prepare(read);
    session.reserve(p);
    expectCode(() => session.reserve(p), "ERR_CONTEXT_ALREADY_RECORDED");
    const other = store.open({ runId: "run-2", principalId: AGENT });
    expectCode(() => other.reserve(p), "ERR_CONTEXT_FOREIGN_PREPARATION");
  });
});

describe("MemoryBudgetLedger", () => {
  const base = { runId: RUN, principalId: AGENT, now: T0 };

  it("commit and release are idempotent and report how a reservation ended", () => {
    const ledger = new MemoryBudgetLedger();
    const a = ledger.reserve({ ...base, toolCallLimit: 2 });
    const b = ledger.reserve({ ...base, toolCallLimit: 2 });
    if (!a.ok || !b.ok) throw new Error("expected reservations");
    expect(ledger.commit(a.reservation)).toBe("committed");
    expect(ledger.commit(a.reservation)).toBe("committed");
    expect(ledger.release(a.reservation)).toBe("committed");
    expect(ledger.release(b.reservation)).toBe("released");
    expect(ledger.commit(b.reservation)).toBe("released");
    expect(ledger.usage(RUN)).toEqual({ used: 1, held: 0 });
  });

  it("a leaked reservation expires and gives its unit back; committing it late is refused", () => {
    const ledger = new MemoryBudgetLedger({ ttlMs: 1000 });
    const leaked = ledger.reserve({ ...base, toolCallLimit: 1 });
    if (!leaked.ok) throw new Error("expected a reservation");
    expect(ledger.reserve({ ...base, now: T0 + 999, toolCallLimit: 1 }).ok).toBe(false);
    const later = ledger.reserve({ ...base, now: T0 + 1000, toolCallLimit: 1 });
    expect(later.ok).toBe(true);
    expect(ledger.commit(leaked.reservation, T0 + 1000)).toBe("expired");
    expect(ledger.stats().openReservations).toBe(1);
  });

  it("a renewed reservation outlives its first deadline", () => {
    const ledger = new MemoryBudgetLedger({ ttlMs: 1000 });
    const r = ledger.reserve({ ...base, toolCallLimit: 1 });
    if (!r.ok) throw new Error("expected a reservation");
    const renewed = ledger.renew(r.reservation, T0 + 900);
    expect(renewed?.expiresAt).toBe(T0 + 1900);
    expect(ledger.usage(RUN, T0 + 1500)).toEqual({ used: 0, held: 1 });
    expect(ledger.commit(r.reservation, T0 + 1500)).toBe("committed");
  });

  it("the rate log keeps every slot of the minute whatever the limit of the call at hand", () => {
    const ledger = new MemoryBudgetLedger();
    for (let i = 0; i < 5; i++) expect(ledger.reserve({ ...base, now: T0 + i }).ok).toBe(true);
    expect(ledger.rateUsed(AGENT, T0 + 10)).toBe(5);
    expect(ledger.reserve({ ...base, now: T0 + 10, ratePerMinute: 5 })).toEqual({
      ok: false,
      reasons: ["rate_limited"],
    });
    expect(ledger.rateUsed(AGENT, T0 + 60_000)).toBe(4);
    expect(ledger.reserve({ ...base, now: T0 + 60_000, ratePerMinute: 5 }).ok).toBe(true);
  });

  it("rejects a non-positive ttl", () => {
    expectCode(() => new MemoryBudgetLedger({ ttlMs: 0 }), "ERR_CONTEXT_CONFIG_INVALID");
  });
});
