// timedScope (src/contracts/abort-scope.ts): a call's signal bounded in time that follows a
// long-lived parent only until released. Timers are Vitest's fake ones: no wall clock.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { timedScope } from "../../src/contracts/index.js";
import { heldBy } from "../helpers/abort-held.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("timedScope", () => {
  it("its time up: aborts with a TimeoutError and says it timed out; the parent is left as it was", () => {
    const parent = new AbortController();
    const s = timedScope(parent.signal, 1000);
    vi.advanceTimersByTime(999);
    expect(s.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(s.signal.aborted).toBe(true);
    expect(s.timedOut).toBe(true);
    expect((s.signal.reason as DOMException).name).toBe("TimeoutError");
    expect(parent.signal.aborted).toBe(false);
    s.release();
    expect(heldBy(parent.signal)).toBe(0);
  });

  it("the parent aborts first: the scope aborts with its reason and did not time out", () => {
    const parent = new AbortController();
    const s = timedScope(parent.signal, 1000);
    const reason = new Error("stop");
    parent.abort(reason);
    vi.advanceTimersByTime(2000);
    expect(s.signal.reason).toBe(reason);
    expect(s.timedOut).toBe(false);
  });

  it("released: neither its timer nor its parent aborts it any more, and no timer is left", () => {
    const parent = new AbortController();
    const s = timedScope(parent.signal, 1000);
    s.release();
    expect(vi.getTimerCount()).toBe(0);
    parent.abort();
    vi.advanceTimersByTime(5000);
    expect(s.signal.aborted).toBe(false);
  });

  it("without a parent: a time bound alone; an already aborted parent aborts it at once", () => {
    const alone = timedScope(undefined, 10);
    vi.advanceTimersByTime(10);
    expect(alone.timedOut).toBe(true);
    const gone = new AbortController();
    gone.abort(new Error("gone"));
    const s = timedScope(gone.signal, 10);
    expect(s.signal.aborted).toBe(true);
    expect(s.timedOut).toBe(false);
    s.release();
  });
});
