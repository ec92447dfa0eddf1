// Plays scripted runs through a composed Warden runtime (library mode): a temp-dir SQLite
// journal, the assistant-tools preset, the suite's derived contracts. Each run is a fresh
// principal's run whose original request is the user's prompt (value provenance). Every
// call goes to the Gate; an allowed call "executes" by returning its recorded output, which
// is reported with `recordResult` (taint `tool-output`, provenance, classification
// `confidential` for personal-data tools) exactly as an executor's output would be. What an
// output carrying instructions addressed to the agent leads to is the product's own output
// screening (gate `outputScreening`, docs/gate.md#output-screening), configured here like any
// deployment configures it: `quarantine` by default, `off` for the ablation row. The harness
// itself neither scans outputs nor quarantines runs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { generateKeyPair } from "../../src/crypto/index.js";
import type { GatePolicy, ScreeningMode } from "../../src/gate/index.js";
import { loadPolicyBundle, type PolicyFlow } from "../../src/policy/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { buildCatalog, type Catalog, TOOL_CLASS } from "./catalog.js";
import type { Annotations } from "./classify.js";
import type { Step } from "./protocol.js";
import type { Call, Suite } from "./suite.js";

export interface HarnessOptions {
  /** Policy files (default: policies/assistant-tools.yaml). */
  policy: readonly string[];
  annotations?: Annotations | undefined;
  /** The Gate's output screening mode (`gate.outputScreening.instructions`, default "flag"). */
  screening?: ScreeningMode;
  /** Leave out the preset's flow-control rules (ids `at-flow-…`): the screening-alone ablation. */
  withoutFlowRules?: boolean;
}

/** The flow-control rules of a policy file, by id prefix (left out for the screening-alone row). */
export const FLOW_RULE_PREFIX = "at-flow-";

/**
 * A recorded output as the tool returned it: AgentDojo prints a tool's structured result
 * (a list of transactions, a dict of addresses) as YAML or a Python dict for the model; an
 * executor hands the Gate the structure itself. Only a YAML sequence or a flow mapping is
 * read as structure; anything else stays text.
 */
export function structured(text: string): unknown {
  // Only a sequence or a flow mapping: a file or page whose text happens to read as
  // `key: value` lines stays text (its lines are not records any tool vouched for).
  if (!/^\s*(- |\{|\[)/.test(text)) return text;
  try {
    const v = parseYaml(text) as unknown;
    return typeof v === "object" && v !== null ? v : text;
  } catch {
    return text;
  }
}

/** `policy` with every `at-flow-…` rule removed, written into `dir`; returns the new paths. */
function withoutFlow(policy: readonly string[], dir: string): string[] {
  return policy.map((path, i) => {
    const doc = parseYaml(readFileSync(path, "utf8")) as { rules?: { id?: string }[] };
    doc.rules = (doc.rules ?? []).filter((r) => !String(r.id).startsWith(FLOW_RULE_PREFIX));
    const out = join(dir, `policy-${i}.yaml`);
    writeFileSync(out, stringifyYaml(doc));
    return out;
  });
}

export interface StepResult {
  call: Call;
  origin: Step["origin"];
  decision: string;
  reasons: readonly string[];
  /** The flow facts the policy saw for this call (absent when refused before policy). */
  flow?: PolicyFlow;
}

export interface RunResult {
  executed: Call[];
  steps: StepResult[];
  stepUps: number;
  quarantined: boolean;
}

/**
 * The context the preset expects: `assistant:read` is the only read-only action, and what a
 * `fetch` returns is labelled `web` (a page on the open web) besides `tool-output`.
 */
export function assistantContext(): {
  quarantine: { readOnly: string[]; readOnlyCategories: string[] };
  taint: { boundaries: Record<string, "web"> };
} {
  return {
    quarantine: { readOnly: [`${TOOL_CLASS}:read`], readOnlyCategories: [] },
    taint: { boundaries: { [`${TOOL_CLASS}:fetch`]: "web" } },
  };
}

/** The policy bundle, with the flow facts of the last input it judged kept for the report. */
function observedPolicy(paths: readonly string[]): { policy: GatePolicy; take(): PolicyFlow | undefined } {
  const bundle = loadPolicyBundle(paths);
  let last: PolicyFlow | undefined;
  const policy: GatePolicy = {
    evaluate: (input) => {
      last = input.flow;
      return bundle.evaluate(input);
    },
    policyBundleHash: bundle.policyBundleHash,
    summary: bundle.summary,
  };
  return {
    policy,
    take: () => {
      const f = last;
      last = undefined;
      return f;
    },
  };
}

export class Harness {
  readonly catalog: Catalog;
  readonly #runtime: Runtime;
  readonly #dir: string;
  readonly #flow: () => PolicyFlow | undefined;
  #n = 0;

  private constructor(catalog: Catalog, runtime: Runtime, dir: string, flow: () => PolicyFlow | undefined) {
    this.catalog = catalog;
    this.#runtime = runtime;
    this.#dir = dir;
    this.#flow = flow;
  }

  static async open(suite: Suite, options: HarnessOptions): Promise<Harness> {
    const catalog = buildCatalog(suite, options.annotations);
    const dir = mkdtempSync(join(tmpdir(), "warden-agentdojo-"));
    try {
      const observed = observedPolicy(
        options.withoutFlowRules === true ? withoutFlow(options.policy, dir) : options.policy,
      );
      const runtime = await composeRuntime({
        policy: observed.policy,
        journal: {
          path: join(dir, "journal.db"),
          signer: generateKeyPair("ed25519"),
          signatureMode: "batch",
        },
        gate: {
          principals: (id: string) => ({ id, roles: ["agent"] }),
          context: assistantContext(),
          requireContract: true,
          runs: "runtime",
          contractLookup: () => catalog.lookup,
          classify: (tool) => catalog.classify(tool),
          outputScreening: { instructions: options.screening ?? "flag" },
        },
      });
      return new Harness(catalog, runtime, dir, observed.take);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The composed runtime (its journal holds every decision, result and quarantine). */
  get runtime(): Runtime {
    return this.#runtime;
  }

  /** Plays one run's steps; returns what was executed and every decision. */
  async play(prompt: string, steps: readonly Step[]): Promise<RunResult> {
    const principalId = `agent-${++this.#n}`;
    const session = await this.#runtime.startRun(principalId, { originalRequest: prompt });
    const gate = this.#runtime.gate;
    const out: RunResult = { executed: [], steps: [], stepUps: 0, quarantined: false };
    for (const s of steps) {
      this.#flow();
      const entry = this.catalog.entries.get(s.call.function);
      const action = entry?.cls.class ?? "write";
      const o = await gate.evaluate({
        principalId,
        runId: session.runId,
        toolClass: TOOL_CLASS,
        action,
        tool: s.call.function,
        parameters: s.call.args,
        originalRequest: prompt,
      });
      const reasons = [...o.reasonCodes, ...o.matchedRules.map((r) => r.id)];
      const flow = this.#flow();
      out.steps.push({
        call: s.call,
        origin: s.origin,
        decision: o.decision,
        reasons,
        ...(flow ? { flow } : {}),
      });
      if (o.decision === "step_up") out.stepUps++;
      if (o.decision !== "allow" && o.decision !== "modify") {
        if (o.decisionId !== null) gate.release(o.decisionId);
        continue;
      }
      out.executed.push({ function: s.call.function, args: o.parameters });
      await gate.recordResult(o.decisionId, {
        data: s.error === null ? structured(s.output) : s.output,
        classification: entry?.cls.personalData === true ? "confidential" : "public",
      });
    }
    out.quarantined = session.quarantined;
    this.#runtime.sessions.end(session.runId);
    return out;
  }

  async close(): Promise<void> {
    try {
      await this.#runtime.close();
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}
