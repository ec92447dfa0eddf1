// Issue 37: per-run state that grew with every call of a flood. Two structures of a run
// grew with each call's client-chosen names: the run's taint labels (one per source and
// origin — a result's origin is the host of its URL or the tool's name) and its per-tool
// counts (one per tool name). Each merge or snapshot then cost time in proportion to them.
// Labels past a bound are folded into one label per source (no source is ever lost);
// a call naming one tool more than `limits.maxToolsPerRun` is refused ERR_RUN_FULL (the
// counts policy sees stay exact). Sizes are measured, never time.
import { describe, expect, it } from "vitest";
import { boundTaint, MANY_ORIGINS, MAX_LABELS_BY_ORIGIN } from "../../src/context/taint.js";
import type { TaintLabel } from "../../src/contracts/index.js";
import { decide, expectCode, harness, req } from "./helpers.js";

const FLOOD = 20_000;

describe("flood of fresh origins grows the run's taint without bound", () => {
  it("20 000 results from as many hosts keep the run's labels bounded, every source kept", () => {
    const { session } = harness();
    for (let i = 0; i < FLOOD; i++) {
      const p = decide(
        session,
        req({ toolClass: "http", action: "get", parameters: { url: `https://h${i}.example/` } }),
      );
      session.recordResult(p, { data: `page ${i}`, taintLabels: [{ source: "rag", origin: `doc-${i}` }] });
    }
    const seen = session.taintSeen();
    // web (boundary), tool-output (boundary), rag (reported): each source at least once.
    expect([...new Set(seen.map((l) => l.source))].sort()).toEqual(["rag", "tool-output", "web"]);
    expect(seen.length).toBeLessThanOrEqual(MAX_LABELS_BY_ORIGIN + 3);
    // The hosts and the reported origins were fresh every time; the tool's name was not.
    expect(
      seen
        .filter((l) => l.origin === MANY_ORIGINS)
        .map((l) => l.source)
        .sort(),
    ).toEqual(["rag", "web"]);
    expect(session.snapshot().taintSeen?.slice().sort()).toEqual(["rag", "tool-output", "web"]);
  });

  it("boundTaint folds only past the bound and keeps the highest confidence of what it folds", () => {
    const labels: TaintLabel[] = Array.from({ length: 10 }, (_, i) => ({
      source: "web",
      origin: `h${i}`,
      confidence: i / 10,
    }));
    expect(boundTaint(labels, 10)).toBe(labels);
    const bounded = boundTaint(labels, 4);
    expect(bounded.slice(0, 4)).toEqual(labels.slice(0, 4));
    expect(bounded[4]).toEqual({ source: "web", origin: MANY_ORIGINS, confidence: 0.9 });
    expect(bounded).toHaveLength(5);
  });
});

describe("flood of invented tool names grows the run's per-tool counts without bound", () => {
  it("a call naming one tool past limits.maxToolsPerRun is refused ERR_RUN_FULL; known tools still count", () => {
    const { session } = harness({ limits: { maxToolsPerRun: 16 } });
    for (let i = 0; i < 16; i++)
      decide(session, req({ toolClass: "http", action: "get", tool: `tool-${i}` }));
    expectCode(
      () => session.prepare(req({ toolClass: "http", action: "get", tool: "tool-16" })),
      "ERR_RUN_FULL",
    );
    decide(session, req({ toolClass: "http", action: "get", tool: "tool-3" }));
    const counts = session.snapshot().perToolCalls;
    expect(Object.keys(counts)).toHaveLength(16);
    expect(counts["tool-3"]).toBe(2);
  });
});
