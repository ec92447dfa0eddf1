// APAE §Trust Scoring and §Quarantine through the real engine: the spec's numbers, each
// event kind, decay, confidence bands, floors, quarantine durations and recovery.
import { describe, expect, it } from "vitest";
import {
  DAY_MS,
  HOUR_MS,
  MemoryTrustStore,
  parseTrustConfig,
  TRUST_EVENTS,
  type TrustConfig,
  TrustEngine,
  type TrustEventKind,
} from "../../src/trust/index.js";

const T0 = Date.parse("2026-03-01T00:00:00Z");

function engine(config: Partial<Record<string, unknown>> = {}, start = T0) {
  let now = start;
  const cfg: TrustConfig = parseTrustConfig(config);
  const e = new TrustEngine({ store: new MemoryTrustStore(), config: cfg, clock: () => now });
  return {
    e,
    set: (t: number) => {
      now = t;
    },
    at: () => now,
  };
}

async function applyN(e: TrustEngine, event: TrustEventKind, n: number, from: number, stepMs: number) {
  let last = await e.view("b");
  for (let i = 0; i < n; i++) last = (await e.apply({ subject: "b", event, at: from + i * stepMs })).view;
  return last;
}

describe("trust scoring (spec numbers)", () => {
  it("100 successes take 0.5 to ~1.0 (AIMD: +0.01 each, capped at 1.0)", async () => {
    const { e } = engine();
    // Four a day keeps under the 0.1/day increase cap; no gap is long enough to decay.
    const v = await applyN(e, "task_success", 100, T0, 6 * HOUR_MS);
    expect(v.score).toBe(1);
    expect(v.interactions).toBe(100);
    expect(v.confidence).toBe("high");
  });

  it("the score reaches 1.0 at the 50th success and never exceeds it", async () => {
    const { e } = engine({ max_increase_per_day: null });
    expect((await applyN(e, "task_success", 49, T0, 1000)).score).toBeCloseTo(0.99, 12);
    expect((await e.apply({ subject: "b", event: "task_success", at: T0 + 60_000 })).view.score).toBe(1);
    expect((await e.apply({ subject: "b", event: "task_success", at: T0 + 61_000 })).view.score).toBe(1);
  });

  it("one failure takes 0.82 to ~0.66 (x0.8)", async () => {
    const { e } = engine({ max_increase_per_day: null });
    expect((await applyN(e, "task_success", 32, T0, 1000)).score).toBe(0.82);
    const c = await e.apply({ subject: "b", event: "task_failure", at: T0 + DAY_MS, ect: "ect-1" });
    expect(c.view.score).toBe(0.656);
    expect(c.view.score).toBeCloseTo(0.66, 2);
    expect(c.steps).toEqual([
      { kind: "task_failure", time: T0 + DAY_MS, ect: "ect-1", before: 0.82, after: 0.656 },
    ]);
  });

  const expected: Record<TrustEventKind, number> = {
    task_success: 0.51,
    task_partial: 0.505,
    task_failure: 0.4,
    task_timeout: 0.4,
    policy_violation: 0.32,
    attestation_invalid: 0.32,
    rollback_triggered: 0.4,
  };
  for (const kind of TRUST_EVENTS) {
    it(`${kind} adjusts 0.5 to ${expected[kind]}`, async () => {
      const { e } = engine();
      const c = await e.apply({ subject: "b", event: kind, at: T0 });
      expect(c.view.score).toBe(expected[kind]);
      expect(c.steps[0]).toMatchObject({ kind, before: 0.5, after: expected[kind] });
    });
  }

  it("an unknown subject starts at the configured initial score (zero-trust 0.1)", async () => {
    expect((await engine().e.view("new")).score).toBe(0.5);
    expect((await engine({ initial_score: 0.1, recovery_score: 0.5 }).e.view("new")).score).toBe(0.1);
  });

  it("confidence: low below 10 interactions, medium 10-99, high from 100", async () => {
    const { e } = engine({ max_increase_per_day: null });
    expect((await applyN(e, "task_partial", 9, T0, 1000)).confidence).toBe("low");
    expect((await e.apply({ subject: "b", event: "task_partial", at: T0 + 10_000 })).view.confidence).toBe(
      "medium",
    );
    const v = await applyN(e, "task_partial", 89, T0 + 20_000, 1000);
    expect(v.interactions).toBe(99);
    expect(v.confidence).toBe("medium");
    expect((await e.apply({ subject: "b", event: "task_partial", at: T0 + 200_000 })).view.confidence).toBe(
      "high",
    );
  });

  it("an agent that farms successes gains at most 0.1 per day (score inflation)", async () => {
    const { e } = engine();
    const v = await applyN(e, "task_success", 100, T0, 1000);
    expect(v.score).toBe(0.6);
    const next = await e.apply({ subject: "b", event: "task_success", at: T0 + DAY_MS });
    expect(next.view.score).toBe(0.61);
  });

  it("an unknown event kind is refused with a code", async () => {
    await expect(engine().e.apply({ subject: "b", event: "bribe" as TrustEventKind })).rejects.toMatchObject({
      code: "ERR_TRUST_EVENT_INVALID",
    });
  });
});

describe("decay", () => {
  it("after 7 idle days the score loses 0.01 per further day, never below the initial score", async () => {
    const { e } = engine({ max_increase_per_day: null });
    await applyN(e, "task_success", 30, T0, 1000); // 0.8
    const last = T0 + 29_000;
    expect((await e.view("b", undefined, last + 7 * DAY_MS)).score).toBe(0.8);
    expect((await e.view("b", undefined, last + 8 * DAY_MS)).score).toBe(0.79);
    expect((await e.view("b", undefined, last + 17 * DAY_MS)).score).toBe(0.7);
    expect((await e.view("b", undefined, last + 400 * DAY_MS)).score).toBe(0.5);
  });

  it("the next event starts from the decayed score and journals the decay as a step", async () => {
    const { e } = engine({ max_increase_per_day: null });
    await applyN(e, "task_success", 30, T0, 1000);
    const c = await e.apply({ subject: "b", event: "task_failure", at: T0 + 29_000 + 10 * DAY_MS });
    expect(c.steps.map((s) => [s.kind, s.before, s.after])).toEqual([
      ["decay", 0.8, 0.77],
      ["task_failure", 0.77, 0.616],
    ]);
  });

  it("a penalised agent that waits is not forgiven (no decay upwards)", async () => {
    const { e } = engine();
    await e.apply({ subject: "b", event: "task_failure", at: T0 });
    expect((await e.view("b", undefined, T0 + 60 * DAY_MS)).score).toBe(0.4);
  });
});

describe("floors and quarantine", () => {
  it("falling below 0.2 emits apae:trust_revoke once", async () => {
    const { e } = engine();
    const a = await e.apply({ subject: "b", event: "policy_violation", at: T0 }); // 0.32
    expect(a.emitted).toEqual([]);
    const b = await e.apply({ subject: "b", event: "task_failure", at: T0 + 1 }); // 0.256
    expect(b.emitted).toEqual([]);
    const c = await e.apply({ subject: "b", event: "task_failure", at: T0 + 2 }); // 0.2048
    expect(c.emitted).toEqual([]);
    const d = await e.apply({ subject: "b", event: "task_failure", at: T0 + 3 }); // 0.16384
    expect(d.emitted.map((x) => x.execAct)).toEqual(["apae:trust_revoke"]);
    expect(d.emitted[0]?.ext).toMatchObject({
      "apae.subject": "b",
      "apae.score": 0.16384,
      "apae.threshold": 0.2,
    });
  });

  it("falling below 0.15 quarantines for 1 h with the quarantine ECT's claims", async () => {
    const { e } = engine();
    await e.apply({ subject: "b", event: "policy_violation", at: T0 }); // 0.32
    const c = await e.apply({ subject: "b", event: "policy_violation", at: T0 + 1000 }); // 0.2048
    expect(c.view.status).toBe("active");
    const q = await e.apply({ subject: "b", event: "policy_violation", at: T0 + 2000 }); // 0.131072
    expect(q.view).toMatchObject({
      status: "quarantined",
      quarantineCount: 1,
      quarantineUntil: T0 + 2000 + HOUR_MS,
    });
    expect(q.emitted.map((x) => x.execAct)).toEqual(["apae:trust_revoke", "apae:quarantine"]);
    expect(q.emitted[1]?.ext).toEqual({
      "apae.subject": "b",
      "apae.to_state": "quarantined",
      "apae.score": 0.131072,
      "apae.threshold": 0.15,
      "apae.quarantine_until": new Date(T0 + 2000 + HOUR_MS).toISOString(),
      "apae.quarantine_count": 1,
      "apae.reason": "policy_violation took the score from 0.2048 to 0.131072, below the quarantine floor",
    });
  });

  async function quarantineOnce(e: TrustEngine, at: number) {
    let c = await e.apply({ subject: "b", event: "policy_violation", at });
    for (let i = 1; c.view.status === "active"; i++) {
      c = await e.apply({ subject: "b", event: "policy_violation", at: at + i });
    }
    return c;
  }

  it("successive quarantines last 1, 2, 4, ... hours, capped at 168", async () => {
    const { e } = engine();
    const hours: number[] = [];
    let t = T0;
    for (let n = 0; n < 10; n++) {
      const c = await quarantineOnce(e, t);
      const until = c.view.quarantineUntil as number;
      hours.push((until - c.steps[c.steps.length - 1]!.time) / HOUR_MS);
      t = until + 1000;
    }
    expect(hours).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 168, 168]);
  });

  it("at expiry the score resets to 0.5, the agent is active and a recovery ECT is emitted", async () => {
    const { e } = engine();
    const q = await quarantineOnce(e, T0);
    const until = q.view.quarantineUntil as number;
    expect(await e.tick(until - 1)).toEqual([]);
    expect((await e.view("b", undefined, until - 1)).status).toBe("quarantined");
    const [r] = await e.tick(until + 5 * 60_000);
    expect(r?.view).toMatchObject({
      status: "active",
      score: 0.5,
      quarantineUntil: null,
      quarantineCount: 1,
    });
    expect(r?.steps).toEqual([
      { kind: "quarantine_expired", time: until, ect: null, before: q.view.score, after: 0.5 },
    ]);
    expect(r?.emitted).toEqual([
      {
        time: until,
        execAct: "apae:quarantine",
        truster: "deployment",
        subject: "b",
        ext: {
          "apae.subject": "b",
          "apae.to_state": "active",
          "apae.score": 0.5,
          "apae.quarantine_count": 1,
          "apae.reason": "quarantine expired",
        },
      },
    ]);
  });

  it("an expiry noticed late by the next event is applied at its own time first", async () => {
    const { e } = engine();
    const q = await quarantineOnce(e, T0);
    const c = await e.apply({ subject: "b", event: "task_success", at: T0 + 3 * HOUR_MS });
    expect(c.steps.map((s) => s.kind)).toEqual(["quarantine_expired", "task_success"]);
    expect(c.steps[0]?.time).toBe(q.view.quarantineUntil);
    expect(c.view.score).toBe(0.51);
  });

  it("events while quarantined still count but do not re-quarantine or extend it", async () => {
    const { e } = engine();
    const q = await quarantineOnce(e, T0);
    const c = await e.apply({ subject: "b", event: "policy_violation", at: T0 + 60_000 });
    expect(c.view.status).toBe("quarantined");
    expect(c.view.quarantineUntil).toBe(q.view.quarantineUntil);
    expect(c.view.quarantineCount).toBe(1);
    expect(c.emitted).toEqual([]);
  });

  it("a configuration override changes the floors and durations", async () => {
    const { e } = engine({ quarantine_floor: 0.4, revocation_floor: 0.45, quarantine_base_hours: 3 });
    const c = await e.apply({ subject: "b", event: "policy_violation", at: T0 });
    expect(c.view).toMatchObject({ status: "quarantined", quarantineUntil: T0 + 3 * HOUR_MS });
  });

  it("one truster's quarantine of an agent does not touch another truster's table", async () => {
    const { e } = engine();
    await e.apply({ subject: "b", truster: "a", event: "policy_violation", at: T0 });
    await e.apply({ subject: "b", truster: "a", event: "policy_violation", at: T0 + 1 });
    await e.apply({ subject: "b", truster: "a", event: "policy_violation", at: T0 + 2 });
    expect((await e.view("b", "a", T0 + 3)).status).toBe("quarantined");
    expect((await e.view("b", "c", T0 + 3)).status).toBe("active");
    expect((await e.view("b", undefined, T0 + 3)).score).toBe(0.5);
  });

  it("a clock that steps backwards does not move a row back in time", async () => {
    const { e } = engine();
    await e.apply({ subject: "b", event: "task_failure", at: T0 + DAY_MS });
    const c = await e.apply({ subject: "b", event: "task_failure", at: T0 });
    expect(c.steps[0]?.time).toBe(T0 + DAY_MS);
  });
});

describe("trust config", () => {
  it("a misspelt key is refused, not ignored", () => {
    expect(() => parseTrustConfig({ alhpa: 0.02 })).toThrowError(
      expect.objectContaining({ code: "ERR_TRUST_CONFIG_INVALID" }),
    );
  });
  it("a quarantine floor above the revocation floor is refused", () => {
    expect(() => parseTrustConfig({ quarantine_floor: 0.3 })).toThrowError(/quarantine_floor/);
  });
  it("a runtime config's trust member is read", () => {
    expect(parseTrustConfig({ trust: { beta: 0.5 } }).beta).toBe(0.5);
  });
});
