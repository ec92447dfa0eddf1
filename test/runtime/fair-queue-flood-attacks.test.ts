// Issue 37, floods: one hostile principal floods the shared work (Gate decisions, journal
// commits, upstream calls) while an honest principal sends one call at a time. The fair
// queue serves principals round-robin with equal shares, so the honest call is served
// before the hostile backlog drains; the hostile gets coded refusals when its share of
// the queue is full, the honest never; the queue never holds more than its bound. Order
// of service is observed directly (no clock).
import { describe, expect, it, vi } from "vitest";
import { FairQueue } from "../../src/runtime/index.js";

/** A call whose work is held until released: records when it started. */
function held(order: string[], name: string) {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  return {
    work: async () => {
      order.push(name);
      await gate;
      return name;
    },
    release: () => release(),
  };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe("a hostile principal floods the shared work queue", () => {
  it("the honest call is served before the hostile's queued calls drain (order of service)", async () => {
    const q = new FairQueue({ concurrency: 2, maxPerPrincipal: 64, maxQueued: 256, now: () => 0 });
    const order: string[] = [];
    const hostile = Array.from({ length: 40 }, (_, i) => held(order, `hostile-${i}`));
    const hostileRuns = hostile.map((h) => q.run("hostile", h.work));
    await tick();
    expect(order).toEqual(["hostile-0", "hostile-1"]); // alone, it uses every slot
    const honest = held(order, "honest");
    const honestRun = q.run("honest", honest.work);
    hostile[0]?.release();
    await tick();
    // The first slot freed goes to the honest principal, not to hostile-2.
    expect(order).toEqual(["hostile-0", "hostile-1", "honest"]);
    honest.release();
    expect(await honestRun).toEqual({ ok: true, value: "honest" });
    expect(q.of("hostile").queued).toBeGreaterThanOrEqual(36); // the backlog is still there
    for (const h of hostile) h.release();
    const outcomes = await Promise.all(hostileRuns);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(q.active).toBe(0);
    expect(q.queued).toBe(0);
  });

  it("while both are active the hostile holds at most its equal share of the slots", async () => {
    let t = 0;
    const q = new FairQueue({ concurrency: 4, maxPerPrincipal: 64, maxQueued: 256, now: () => t });
    const order: string[] = [];
    const honest = held(order, "honest-0");
    const first = q.run("honest", honest.work); // the honest principal was seen just now
    honest.release();
    await first;
    t = 10; // within recentMs: still an active principal when shares are computed
    const hostile = Array.from({ length: 10 }, (_, i) => held(order, `hostile-${i}`));
    const runs = hostile.map((h) => q.run("hostile", h.work));
    await tick();
    expect(q.of("hostile").active).toBe(2); // ceil(4 / 2 principals), not 4
    const next = held(order, "honest-1");
    const honestRun = q.run("honest", next.work);
    await tick();
    expect(order.at(-1)).toBe("honest-1"); // a free slot was waiting for it: no wait at all
    next.release();
    await honestRun;
    for (const h of hostile) h.release();
    await Promise.all(runs);
  });

  it("the hostile's queue-full is a coded refusal for the hostile, never for the honest principal", async () => {
    const q = new FairQueue({ concurrency: 1, maxPerPrincipal: 8, maxQueued: 256, now: () => 0 });
    const order: string[] = [];
    const hostile = Array.from({ length: 50 }, (_, i) => held(order, `hostile-${i}`));
    const runs = hostile.map((h) => q.run("hostile", h.work));
    const honest = held(order, "honest");
    const honestRun = q.run("honest", honest.work);
    for (const h of hostile) h.release();
    honest.release();
    const outcomes = await Promise.all(runs);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(8);
    expect(outcomes.filter((o) => !o.ok && o.reason === "principal_full")).toHaveLength(42);
    expect(await honestRun).toEqual({ ok: true, value: "honest" });
  });

  it("memory stays bounded under a flood from many principals: the longest queue sheds, a short one is admitted", async () => {
    const q = new FairQueue({ concurrency: 1, maxPerPrincipal: 1000, maxQueued: 20, now: () => 0 });
    const order: string[] = [];
    const blocker = held(order, "blocker");
    const blocked = q.run("hostile", blocker.work);
    const flood = Array.from({ length: 500 }, (_, i) => held(order, `hostile-${i}`));
    const runs = flood.map((h) => q.run("hostile", h.work));
    let maxQueued = 0;
    const others = Array.from({ length: 5 }, (_, i) => held(order, `other-${i}`));
    const otherRuns = others.map((h, i) => {
      const r = q.run(`other-${i}`, h.work);
      maxQueued = Math.max(maxQueued, q.queued);
      return r;
    });
    expect(maxQueued).toBeLessThanOrEqual(20);
    expect(q.queued).toBe(20);
    expect(q.of("hostile").queued).toBe(15); // it gave way to the five others
    blocker.release();
    await blocked;
    for (const h of [...flood, ...others]) h.release();
    const outcomes = await Promise.all(runs);
    expect(outcomes.filter((o) => !o.ok && o.reason === "queue_full").length).toBeGreaterThan(400);
    expect((await Promise.all(otherRuns)).every((o) => o.ok)).toBe(true);
  });

  it("a flooder's client that left stops waiting: its call is not run and frees its place", async () => {
    const q = new FairQueue({ concurrency: 1, maxPerPrincipal: 4, maxQueued: 16, now: () => 0 });
    const order: string[] = [];
    const a = held(order, "a");
    const first = q.run("hostile", a.work);
    const gone = new AbortController();
    const waiting = q.run("hostile", held(order, "gone").work, gone.signal);
    gone.abort();
    expect(await waiting).toEqual({ ok: false, reason: "aborted" });
    expect(q.queued).toBe(0);
    a.release();
    await first;
    expect(order).toEqual(["a"]);
  });
});

describe("the uncontended fast path keeps every refusal of the waiting path", () => {
  it("a call served at once never builds its abort signal; a call that must wait does, and its client leaving still stops it", async () => {
    const q = new FairQueue({ concurrency: 1, maxPerPrincipal: 4, maxQueued: 16, now: () => 0 });
    const order: string[] = [];
    let built = 0;
    const gone = new AbortController();
    const lazy = () => {
      built++;
      return gone.signal;
    };
    const a = held(order, "a");
    const first = q.run("hostile", a.work, lazy);
    expect(built).toBe(0); // served at once: no signal needed
    const waiting = q.run("hostile", held(order, "gone").work, lazy);
    expect(built).toBe(1); // it waits: its signal is built
    gone.abort();
    expect(await waiting).toEqual({ ok: false, reason: "aborted" });
    expect(q.queued).toBe(0);
    a.release();
    await first;
    expect(order).toEqual(["a"]); // the call whose client left never ran
  });

  it("a flooder past its share is refused principal_full on the fast path too (nothing waiting, slots free)", async () => {
    const q = new FairQueue({ concurrency: 8, maxPerPrincipal: 2, maxQueued: 16, now: () => 0 });
    const order: string[] = [];
    const calls = Array.from({ length: 3 }, (_, i) => held(order, `h-${i}`));
    const runs = calls.map((h) => q.run("hostile", h.work, () => new AbortController().signal));
    expect(await runs[2]).toEqual({ ok: false, reason: "principal_full" });
    expect(q.active).toBe(2);
    for (const h of calls) h.release();
    await Promise.all(runs);
    expect(order).toEqual(["h-0", "h-1"]);
    expect(q.active).toBe(0);
  });

  it("a call whose signal already aborted is refused before it runs, even with a free slot", async () => {
    const q = new FairQueue({ concurrency: 4, maxPerPrincipal: 4, maxQueued: 16, now: () => 0 });
    const order: string[] = [];
    const gone = new AbortController();
    gone.abort();
    expect(await q.run("hostile", held(order, "late").work, gone.signal)).toEqual({
      ok: false,
      reason: "aborted",
    });
    expect(order).toEqual([]);
    expect(q.active).toBe(0);
  });

  it("while another principal is served, a second principal's call starts at once only within its share", async () => {
    const q = new FairQueue({ concurrency: 2, maxPerPrincipal: 8, maxQueued: 16, now: () => 0 });
    const order: string[] = [];
    const hostile = Array.from({ length: 3 }, (_, i) => held(order, `hostile-${i}`));
    const hostileRuns = hostile.map((h) => q.run("hostile", h.work));
    const honest = held(order, "honest");
    const honestRun = q.run("honest", honest.work);
    await tick();
    // Both slots were taken by the hostile alone; the honest call waits for the next free one.
    expect(order).toEqual(["hostile-0", "hostile-1"]);
    hostile[0]?.release();
    await tick();
    expect(order).toEqual(["hostile-0", "hostile-1", "honest"]);
    honest.release();
    await honestRun;
    for (const h of hostile) h.release();
    await Promise.all(hostileRuns);
    expect(q.active).toBe(0);
  });
});

describe("a hostile principal parks calls that wait on something else (approval, slow tool)", () => {
  it("a call running past its slice gives its slot back: the honest call is served while the parked calls still run", async () => {
    vi.useFakeTimers();
    try {
      const q = new FairQueue({
        concurrency: 2,
        maxPerPrincipal: 8,
        maxQueued: 16,
        sliceMs: 1000,
        now: () => 0,
      });
      const order: string[] = [];
      const parked = Array.from({ length: 4 }, (_, i) => held(order, `parked-${i}`));
      const runs = parked.map((h) => q.run("hostile", h.work));
      const honest = held(order, "honest");
      const honestRun = q.run("honest", honest.work);
      await vi.advanceTimersByTimeAsync(0);
      expect(order).toEqual(["parked-0", "parked-1"]); // both slots taken, nothing finished
      await vi.advanceTimersByTimeAsync(1000); // the slices end; the calls go on outside the count
      expect(order).toContain("honest");
      expect(q.of("hostile").queued).toBeLessThanOrEqual(1);
      honest.release();
      expect(await honestRun).toEqual({ ok: true, value: "honest" });
      for (const h of parked) h.release();
      await vi.advanceTimersByTimeAsync(5000);
      expect((await Promise.all(runs)).every((o) => o.ok)).toBe(true);
      expect(q.active).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
