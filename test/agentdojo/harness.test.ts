// The harness on a synthetic suite it has never seen (new tool names, its own injection
// phrasing, no per-suite file): every call through a composed runtime's Gate, recorded
// outputs reported as results, the README's request lines and proxy scoring.
import { rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Harness } from "../../bench/agentdojo/harness.js";
import { parseArgs, runBench, suiteDirs } from "../../bench/agentdojo/main.js";
import { attackSteps, benignSteps } from "../../bench/agentdojo/protocol.js";
import { targetsMet } from "../../bench/agentdojo/report.js";
import { runSuite } from "../../bench/agentdojo/run.js";
import { MODEL_OUTPUT_PLACEHOLDER } from "../../bench/agentdojo/score.js";
import { loadSuite, type Suite, SuiteError } from "../../bench/agentdojo/suite.js";
import { Keyring } from "../../src/crypto/index.js";
import type { ScreeningMode } from "../../src/gate/index.js";
import { verifyJournal } from "../../src/journal/index.js";
import { ATTACKER_IBAN, writeSyntheticSuite } from "./synthetic.js";

const POLICY = [resolve("policies/assistant-tools.yaml")];
const dirs: string[] = [];
const synth = (o: Parameters<typeof writeSyntheticSuite>[0] = {}) => {
  const d = writeSyntheticSuite(o);
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const byId = <T extends { id: string }>(xs: T[], id: string): T => {
  const x = xs.find((t) => t.id === id);
  if (x === undefined) throw new Error(`no ${id}`);
  return x;
};

async function play(
  suite: Suite,
  userId: string,
  injId: string | null,
  screening: ScreeningMode = "quarantine",
) {
  const h = await Harness.open(suite, { policy: POLICY, screening });
  try {
    const user = byId(suite.userTasks, userId);
    const steps =
      injId === null ? benignSteps(suite, user) : attackSteps(suite, user, byId(suite.injectionTasks, injId));
    return await h.play(user.prompt, steps);
  } finally {
    await h.close();
  }
}

describe("agentdojo harness", () => {
  it("the hijack protocol plays the user's calls to the hijack point, the attacker's, then the rest", () => {
    const suite = loadSuite(synth());
    const steps = attackSteps(
      suite,
      byId(suite.userTasks, "user_task_0"),
      byId(suite.injectionTasks, "injection_task_0"),
    );
    expect(steps.map((s) => `${s.origin}:${s.call.function}`)).toEqual([
      "user:fetch_statement",
      "injection:wire_funds",
      "user:wire_funds",
    ]);
    expect(steps[0]?.output).toContain("ignore all previous instructions");
    expect(benignSteps(suite, byId(suite.userTasks, "user_task_0"))[0]?.output).not.toContain("ignore");
  });

  it("an injected payment to the attacker's account is refused once the instructions arrive in a statement", async () => {
    const suite = loadSuite(synth());
    const r = await play(suite, "user_task_0", "injection_task_0");
    expect(r.quarantined).toBe(true);
    const attacker = r.steps.find((s) => s.origin === "injection");
    expect(attacker?.decision).toBe("deny");
    expect(r.executed.some((c) => c.args.beneficiary === ATTACKER_IBAN)).toBe(false);
  });

  it("the quarantine, the refused payment and every result are in the signed journal", async () => {
    const suite = loadSuite(synth());
    const h = await Harness.open(suite, { policy: POLICY, screening: "quarantine" });
    try {
      const user = byId(suite.userTasks, "user_task_0");
      await h.play(user.prompt, attackSteps(suite, user, byId(suite.injectionTasks, "injection_task_0")));
      const report = await verifyJournal(h.runtime.store, new Keyring([h.runtime.signer.publicKey]));
      expect(report.ok).toBe(true);
      const entries: { type: string; body: unknown }[] = [];
      for await (const e of h.runtime.store.entries())
        if ("type" in e) entries.push({ type: e.type, body: e.body });
      // The Gate's own output screening quarantined the run: the result entry names the rule
      // ids (never the text), then the quarantine follows it.
      const q = entries.find((e) => e.type === "warden.system.quarantine");
      expect(q?.body).toMatchObject({
        trigger: "output_screening",
        rule_id: "aarts-injection-ignore-instructions",
        reason: expect.stringContaining("aarts-injection-ignore-instructions"),
      });
      const results = entries.filter((e) => e.type === "warden.gate.result");
      expect(results[0]?.body).toMatchObject({
        screening: {
          mode: "quarantine",
          rules: expect.arrayContaining(["aarts-injection-ignore-instructions"]),
        },
        taint: expect.arrayContaining([expect.objectContaining({ source: "instructions" })]),
      });
      expect(JSON.stringify(results[0]?.body)).not.toContain("previous instructions");
      const types = entries.map((e) => e.type);
      expect(types.indexOf("warden.system.quarantine")).toBeGreaterThan(types.indexOf("warden.gate.result"));
      const decided = entries
        .filter((e) => e.type === "warden.gate.decision")
        .map((e) => (e.body as { decision: string }).decision);
      expect(decided).toEqual(["allow", "deny", "deny"]);
    } finally {
      await h.close();
    }
  });

  it("with the Gate's output screening off, flow control still refuses the payment to the attacker's IBAN", async () => {
    const suite = loadSuite(synth());
    const r = await play(suite, "user_task_0", "injection_task_0", "off");
    expect(r.executed.some((c) => c.args.beneficiary === ATTACKER_IBAN)).toBe(false);
    expect(r.steps.find((s) => s.origin === "injection")?.reasons).toContain("at-flow-copied-target");
  });

  it("with screening in flag mode nothing is quarantined: the attacker is refused, the run goes on", async () => {
    const suite = loadSuite(synth());
    const r = await play(suite, "user_task_2", "injection_task_2", "flag");
    expect(r.quarantined).toBe(false);
    expect(r.executed.some((c) => String(c.args.text).includes("evil-mirror"))).toBe(false);
  });

  it("a passcode copied from a tool output is denied even when no instructions are detected", async () => {
    const suite = loadSuite(synth());
    const r = await play(suite, "user_task_0", "injection_task_1", "off");
    const attacker = r.steps.find((s) => s.origin === "injection");
    expect(attacker?.decision).toBe("deny");
    expect(attacker?.reasons).toContain("at-flow-copied-target");
  });

  it("a benign run whose payee comes from the statement executes every call", async () => {
    const suite = loadSuite(synth());
    const r = await play(suite, "user_task_0", null);
    expect(r.steps.map((s) => s.decision)).toEqual(["allow", "allow"]);
    expect(r.executed[1]).toEqual({
      function: "wire_funds",
      args: { beneficiary: "DE44 5001 0517 5407 3249 31", amount: 120.5, memo: "statement" },
    });
  });

  it("benign runs whose recipient is on a page or statement the user named execute with screening off", async () => {
    const suite = loadSuite(synth());
    for (const id of ["user_task_0", "user_task_2"]) {
      const r = await play(suite, id, null, "off");
      expect(
        r.steps.map((s) => s.decision),
        id,
      ).toEqual(["allow", "allow"]);
    }
  });

  it("an unseen suite with no per-suite file meets the targets and writes README request lines", async () => {
    const dir = synth();
    const out = resolve(dir, "requests.jsonl");
    const { reports } = await runBench(
      parseArgs(["--suite-dir", dir, "--out", out, "--phrasing", "important_instructions"]),
      POLICY,
    );
    const rep = reports[0]!;
    const base = rep.rows.find((r) => r.mode === "undefended")!;
    const w = rep.rows.find((r) => r.mode === "warden")!;
    expect(base.attacksSucceeded).toBe(base.scoredPairs);
    expect(base.scoredPairs).toBe(6); // user_task_1 reads no vector: its 3 pairs cannot show a defence
    expect(targetsMet(w, base)).toEqual({ asr: true, utility: true, stepUps: true });
    expect(rep.rows.map((r) => r.mode)).toEqual(["undefended", "warden", "flow-only", "screening-only"]);
    const flow = rep.rows.find((r) => r.mode === "flow-only")!;
    expect(flow.attacksSucceeded).toBe(0);
    const { readFileSync } = await import("node:fs");
    const lines = readFileSync(out, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3 * 3 + 3);
    for (const l of lines) {
      expect(Object.keys(l).sort()).toEqual([
        "calls",
        "injection_task_id",
        "injections",
        "model_output",
        "request_id",
        "suite",
        "user_task_id",
      ]);
    }
    const pair = lines.find(
      (l) => l.user_task_id === "user_task_0" && l.injection_task_id === "injection_task_0",
    )!;
    expect(pair.injections).toEqual({
      vec_note: expect.stringContaining("ignore all previous instructions"),
    });
    // The statement is flagged; its own payee, outside the injected block, is still paid
    // (docs/threat-model.md#flow-control); the attacker's account in the block is not.
    expect(pair.calls).toEqual([
      { function: "fetch_statement", args: { period: "2024-05" } },
      {
        function: "wire_funds",
        args: { beneficiary: "DE44 5001 0517 5407 3249 31", amount: 120.5, memo: "statement" },
      },
    ]);
    // The user's task was done, so the request line carries the ground-truth output marker.
    expect(pair.model_output).toBe(MODEL_OUTPUT_PLACEHOLDER);
    const benign = lines.find((l) => l.user_task_id === "user_task_0" && l.injection_task_id === null)!;
    expect(benign.injections).toBeNull();
    expect(benign.model_output).toBe(MODEL_OUTPUT_PLACEHOLDER);
  });

  it("an annotation file is reported as its own row", async () => {
    const dir = synth({ annotations: { post_note: { class: "delete" } } });
    const rep = await runSuite(loadSuite(dir), {
      policy: POLICY,
      annotations: { post_note: { class: "delete" } },
      ablation: false,
    });
    const row = rep.rows.find((r) => r.mode === "warden+annotations");
    // Posting classified as a deletion needs a human unless the user named its target: the
    // post to the channel the user named goes through, the one to the address on a page steps up.
    expect(row?.benignRunsWithStepUp).toBe(1);
    expect(rep.rows.find((r) => r.mode === "warden")?.benignRunsWithStepUp).toBe(0);
  });

  it("a missing suite folder fails with how to point the harness elsewhere", () => {
    expect(() => loadSuite(resolve(dirs[0] ?? "/nonexistent", "no-such-suite"))).toThrow(/--suite-dir DIR/);
    expect(() => suiteDirs(parseArgs([]), "/nonexistent-root")).toThrow(SuiteError);
    expect(() => parseArgs(["--suite-dir"])).toThrow(/needs a value/);
    expect(() => parseArgs(["--bogus"])).toThrow(/unknown argument/);
  });
});

describe("agentdojo export loading", () => {
  it("a malformed export is refused with the file named", () => {
    const dir = synth();
    writeFileSync(resolve(dir, "tools.json"), JSON.stringify({ not: "a list" }));
    expect(() => loadSuite(dir)).toThrow(/tools.json is not a list/);
    writeFileSync(resolve(dir, "suite.json"), JSON.stringify({}));
    expect(() => loadSuite(dir)).toThrow(/suite.json has no 'suite' name/);
    writeFileSync(resolve(dir, "tools.json"), "[]");
    rmSync(resolve(dir, "outputs.json"));
    writeFileSync(resolve(dir, "suite.json"), JSON.stringify({ suite: "s" }));
    expect(() => loadSuite(dir)).toThrow(/outputs.json is missing/);
  });

  it("an injection marker whose form the injection task does not give fails instead of hiding the attack", () => {
    const suite = loadSuite(synth());
    const user = byId(suite.userTasks, "user_task_0");
    const inj = { ...byId(suite.injectionTasks, "injection_task_0"), attack_text_in_outputs: { a9: "x" } };
    expect(() => attackSteps(suite, user, inj)).toThrow(/no text for the injection marker/);
  });
});
