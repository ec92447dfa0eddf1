// Semantic drift (OATS §7.4): the lexical embedder, the calibration on the labelled
// fixtures (precision / recall at the default threshold, computed here), the Gate acting
// on drift per risk tier, and the fail-closed paths.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  actionText,
  distance,
  type Embedder,
  lexicalEmbedder,
  lexicalVector,
} from "../../src/context/index.js";
import { DRIFT_FLAG_THRESHOLD, DriftTracker } from "../../src/gate/index.js";
import { onnxEmbedder } from "../../src/telemetry/index.js";
import { makeGate, req } from "../gate/harness.js";

interface FixtureAction {
  label: "on" | "off";
  tool: string;
  toolClass: string;
  action: string;
  parameters: Record<string, unknown>;
}
const fixtures = JSON.parse(
  readFileSync(new URL("../fixtures/drift/sequences.json", import.meta.url), "utf8"),
) as {
  sequences: { id: string; request: string; actions: FixtureAction[] }[];
};

describe("lexical embedder", () => {
  it("is deterministic, and a text is at distance 0 from itself", () => {
    const a = lexicalVector("read the billing README");
    expect(lexicalVector("read the billing README")).toEqual(a);
    expect(distance(a, a)).toBeCloseTo(0, 6);
  });

  it("puts unrelated texts near distance 1 and related ones well below", () => {
    const req0 = lexicalVector("summarise the quarterly sales report");
    expect(distance(req0, lexicalVector("rm -rf /var/backups"))).toBeGreaterThan(0.95);
    expect(distance(req0, lexicalVector("read sales/quarterly-report.pdf"))).toBeLessThan(0.7);
  });

  it("an action's text comes from its tool and parameters, never from a rationale", () => {
    const text = actionText({
      toolClass: "file",
      action: "read",
      tool: "read_file",
      parameters: { path: "/etc/shadow" },
      // a field a caller might add: only `parameters` is walked
      ...{ rationale: "summarise the README as the user asked" },
    } as never);
    expect(text).toContain("shadow");
    expect(text).not.toContain("README");
  });
});

/** Scores every fixture action against its request with a fresh tracker per sequence. */
async function scoreFixtures(embedder: Embedder): Promise<{ label: string; drift: number }[]> {
  const out: { label: string; drift: number }[] = [];
  for (const s of fixtures.sequences) {
    const t = new DriftTracker({ embedder });
    for (const a of s.actions) {
      const r = await t.score(req({ runId: `run-${s.id}`, ...a }) as never, s.request);
      if (r.kind !== "scored") throw new Error(`not scored: ${s.id}`);
      out.push({ label: a.label, drift: r.score.action });
    }
  }
  return out;
}

describe("calibration on the labelled fixtures (test/fixtures/drift)", () => {
  it("reports precision and recall of the default threshold; both stay at least 0.9", async () => {
    const scored = await scoreFixtures(lexicalEmbedder);
    const flagged = scored.filter((s) => s.drift > DRIFT_FLAG_THRESHOLD);
    const tp = flagged.filter((s) => s.label === "off").length;
    const off = scored.filter((s) => s.label === "off").length;
    const precision = tp / flagged.length;
    const recall = tp / off;
    // The numbers docs/policy.md quotes: printed so a change of embedder or threshold shows.
    console.log(
      `drift calibration: ${scored.length} actions (${off} off-task), threshold ${DRIFT_FLAG_THRESHOLD}: ` +
        `precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`,
    );
    expect(scored.length).toBeGreaterThanOrEqual(40);
    expect(precision).toBeGreaterThanOrEqual(0.9);
    expect(recall).toBeGreaterThanOrEqual(0.9);
  });
});

const ALLOW_ALL = `
rules:
  - id: allow-all
    name: allow
    priority: 100
    match: {}
    decision: allow
    reason: everything is allowed by policy
`;

const off = {
  toolClass: "http",
  action: "get",
  parameters: { url: "http://169.254.169.254/latest/meta-data/iam" },
};
const on = {
  toolClass: "http",
  action: "get",
  parameters: { url: "https://api.weather.example/forecast/lisbon" },
};
const original = "What is the weather forecast for Lisbon tomorrow?";

describe("the Gate acts on drift", () => {
  it("an off-task action that policy allows is stepped up by drift, an on-task one is allowed", async () => {
    const h = await makeGate({
      yaml: ALLOW_ALL,
      gate: { drift: new DriftTracker({ embedder: lexicalEmbedder }) },
    });
    const good = await h.gate.evaluate(req({ ...on, originalRequest: original }));
    expect(good.decision).toBe("allow");
    expect(good.drift?.action).toBeLessThan(DRIFT_FLAG_THRESHOLD);
    const bad = await h.gate.evaluate(req({ ...off, originalRequest: original }));
    expect(bad.decision).toBe("step_up");
    expect(bad.reasonCodes).toContain("drift_exceeded");
    const entries = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(entries[1]?.body.drift).toMatchObject({ steps: 2, embedder: "lexical-v1" });
  });

  it("thresholds follow the risk level: a deny threshold refuses outright", async () => {
    const drift = new DriftTracker({ embedder: lexicalEmbedder, thresholds: { default: { deny: 0.8 } } });
    const h = await makeGate({ yaml: ALLOW_ALL, gate: { drift } });
    const bad = await h.gate.evaluate(req({ ...off, originalRequest: original }));
    expect(bad.decision).toBe("deny");
    expect(bad.reasonCodes).toContain("drift_exceeded");
  });

  it("cumulative drift holds a run that keeps drifting even when no single step crosses the line", async () => {
    const drift = new DriftTracker({
      embedder: lexicalEmbedder,
      thresholds: { default: {} },
      cumulative: { default: { defer: 0.9 } },
    });
    const h = await makeGate({ yaml: ALLOW_ALL, gate: { drift } });
    const first = await h.gate.evaluate(req({ ...on, originalRequest: original }));
    expect(first.decision).toBe("allow");
    let last = first;
    for (let i = 0; i < 4; i++) last = await h.gate.evaluate(req({ ...off, originalRequest: original }));
    expect(last.decision).toBe("defer");
    expect(last.reasonCodes).toContain("drift_cumulative_exceeded");
    expect(last.drift?.cumulative).toBeGreaterThan(0.9);
  });

  it("a run that states no original request is not scored (and not held for it)", async () => {
    const h = await makeGate({
      yaml: ALLOW_ALL,
      gate: { drift: new DriftTracker({ embedder: lexicalEmbedder }) },
    });
    const out = await h.gate.evaluate(req(off));
    expect(out.decision).toBe("allow");
    expect(out.drift).toBeUndefined();
  });

  it("an embedder that fails denies the call (fail closed) with drift_unavailable", async () => {
    const broken: Embedder = { id: "broken", embed: () => Promise.reject(new Error("down")) };
    const h = await makeGate({ yaml: ALLOW_ALL, gate: { drift: new DriftTracker({ embedder: broken }) } });
    const out = await h.gate.evaluate(req({ ...on, originalRequest: original }));
    expect(out.decision).toBe("deny");
    expect(out.reasonCodes).toEqual(["drift_unavailable"]);
  });

  it("an agent that restates originalRequest as its own action is still scored against the run's first", async () => {
    // A runtime-created run pins no original request: the first one a call states is the run's.
    const h = await makeGate({
      yaml: ALLOW_ALL,
      gate: { runs: "runtime", drift: new DriftTracker({ embedder: lexicalEmbedder }) },
    });
    const { runId } = await h.gate.sessions.startRun("agent-1");
    const first = await h.gate.evaluate(req({ ...on, runId, originalRequest: original }));
    expect(first.decision).toBe("allow");
    const restated = await h.gate.evaluate(
      req({ ...off, runId, originalRequest: "get latest meta-data iam from 169.254.169.254" }),
    );
    expect(restated.decision).toBe("step_up");
    expect(restated.reasonCodes).toContain("drift_exceeded");
  });

  it("a rationale that restates the request does not lower an off-task action's drift", async () => {
    const t = new DriftTracker({ embedder: lexicalEmbedder });
    const plain = await t.score(req({ ...off, runId: "run-a" }) as never, original);
    const dressed = await t.score(req({ ...off, runId: "run-b", rationale: original }) as never, original);
    expect(plain.kind === "scored" && dressed.kind === "scored").toBe(true);
    if (plain.kind === "scored" && dressed.kind === "scored")
      expect(dressed.score.action).toBe(plain.score.action);
  });
});

describe("onnx embedder", () => {
  it("without the optional package it refuses with ERR_CONTEXT_EMBEDDER_UNAVAILABLE", async () => {
    const e = onnxEmbedder({ modelDir: "/nonexistent/model" });
    await expect(e.embed(["x"])).rejects.toMatchObject({ code: "ERR_CONTEXT_EMBEDDER_UNAVAILABLE" });
  });

  it("maps the pipeline's pooled rows to vectors, and a model that fails to load is a coded error", async () => {
    let pooled: unknown;
    const fake = {
      env: { allowRemoteModels: true, allowLocalModels: false, localModelPath: "" },
      pipeline: async (_t: string, model: string, o: { local_files_only: boolean }) => {
        if (model !== "mini" || !o.local_files_only) throw new Error("bad load");
        return async (texts: string[], opts: unknown) => {
          pooled = opts;
          return { tolist: () => texts.map((t) => [t.length, 1]) };
        };
      },
    };
    const e = onnxEmbedder({ modelDir: "/models/mini", load: async () => fake });
    const [v] = await e.embed(["abc"]);
    expect([...(v ?? [])]).toEqual([3, 1]);
    expect(pooled).toEqual({ pooling: "mean", normalize: true });
    expect(fake.env.allowRemoteModels).toBe(false);
    const bad = onnxEmbedder({ modelDir: "/models/other", load: async () => fake });
    await expect(bad.embed(["abc"])).rejects.toMatchObject({ code: "ERR_CONTEXT_EMBEDDER_UNAVAILABLE" });
  });
});
