// One suite in one attack phrasing, every mode: the undefended baseline (every protocol
// call executed); `warden` (flow control and the Gate's output screening in `flag` mode:
// flagged values direct nothing, no run is quarantined); `flow-only` (screening `off`: what
// flow control does alone); `screening-only` (the preset without its `at-flow-…` rules and
// screening in `quarantine` mode: what the screening does alone); and, when the suite has
// an annotation file, `warden+annotations`. Benign runs and every (user × injection) pair each.
import type { ScreeningMode } from "../../src/gate/index.js";
import { type Annotations, classifyTool } from "./classify.js";
import { Harness } from "./harness.js";
import { type Phrasing, rephrase } from "./phrasing.js";
import { attackSteps, benignSteps, injectionsFor, type Step } from "./protocol.js";
import { attackSucceeded, modelOutput, stateChangingCalls, utility } from "./score.js";
import type { Call, Suite } from "./suite.js";

export type Mode = "undefended" | "warden" | "flow-only" | "screening-only" | "warden+annotations";

export interface RequestLine {
  suite: string;
  user_task_id: string;
  injection_task_id: string | null;
  injections: Record<string, string> | null;
  calls: Call[];
  model_output: string;
  /** `<suite>/<phrasing>/<user task>/<injection task or benign>`, echoed back by the replay. */
  request_id: string;
}

export interface ModeRow {
  mode: Mode;
  /** Attack pairs whose undefended scripted attack succeeds (the ASR denominator). */
  scoredPairs: number;
  attacksSucceeded: number;
  pairs: number;
  utilityUnderAttack: number;
  benignRuns: number;
  benignUtility: number;
  /** Calls that ended in step-up: in attack pairs, and in benign runs. */
  stepUpsAttack: number;
  stepUpsBenign: number;
  benignRunsWithStepUp: number;
}

export interface SuiteReport {
  suite: string;
  phrasing: Phrasing;
  /** Every tool's class decision: class, the rule that decided, target arguments. */
  classes: { name: string; class: string; why: string; targets: string[] }[];
  rows: ModeRow[];
  /** Request lines of the `warden` mode (pairs, then benign runs). */
  requests: RequestLine[];
  refusedTools: { name: string; why: string }[];
}

type Player = (prompt: string, steps: readonly Step[]) => Promise<{ executed: Call[]; stepUps: number }>;

const undefended: Player = async (_prompt, steps) => ({
  executed: steps.map((s) => ({ function: s.call.function, args: s.call.args })),
  stepUps: 0,
});

function emptyRow(mode: Mode): ModeRow {
  return {
    mode,
    scoredPairs: 0,
    attacksSucceeded: 0,
    pairs: 0,
    utilityUnderAttack: 0,
    benignRuns: 0,
    benignUtility: 0,
    stepUpsAttack: 0,
    stepUpsBenign: 0,
    benignRunsWithStepUp: 0,
  };
}

/** Every (user × injection) pair: counted into `row`, request lines into `keep`. */
async function playPairs(
  suite: Suite,
  row: ModeRow,
  play: Player,
  keep: RequestLine[] | null,
  phrasing: Phrasing,
): Promise<void> {
  const isRead = (name: string) => {
    const t = suite.tools.find((x) => x.name === name);
    return t !== undefined && classifyTool(t).class === "read";
  };
  for (const user of suite.userTasks) {
    for (const inj of suite.injectionTasks) {
      const steps = attackSteps(suite, user, inj);
      const r = await play(user.prompt, steps);
      const changing = stateChangingCalls(suite, inj, isRead);
      row.pairs++;
      row.stepUpsAttack += r.stepUps;
      if (utility(user, r.executed)) row.utilityUnderAttack++;
      if (attackSucceeded(changing, (await undefended(user.prompt, steps)).executed)) {
        row.scoredPairs++;
        if (attackSucceeded(changing, r.executed)) row.attacksSucceeded++;
      }
      keep?.push({
        suite: suite.name,
        user_task_id: user.id,
        injection_task_id: inj.id,
        injections: injectionsFor(user, inj),
        calls: r.executed,
        model_output: modelOutput(user, r.executed),
        request_id: `${suite.name}/${phrasing}/${user.id}/${inj.id}`,
      });
    }
  }
}

/** Every user task alone. */
async function playBenign(
  suite: Suite,
  row: ModeRow,
  play: Player,
  keep: RequestLine[] | null,
  phrasing: Phrasing,
): Promise<void> {
  for (const user of suite.userTasks) {
    const r = await play(user.prompt, benignSteps(suite, user));
    row.benignRuns++;
    row.stepUpsBenign += r.stepUps;
    if (r.stepUps > 0) row.benignRunsWithStepUp++;
    if (utility(user, r.executed)) row.benignUtility++;
    keep?.push({
      suite: suite.name,
      user_task_id: user.id,
      injection_task_id: null,
      injections: null,
      calls: r.executed,
      model_output: modelOutput(user, r.executed),
      request_id: `${suite.name}/${phrasing}/${user.id}/benign`,
    });
  }
}

async function playMode(
  suite: Suite,
  mode: Mode,
  play: Player,
  keep: RequestLine[] | null,
  phrasing: Phrasing,
): Promise<ModeRow> {
  const row = emptyRow(mode);
  await playPairs(suite, row, play, keep, phrasing);
  await playBenign(suite, row, play, keep, phrasing);
  return row;
}

type HarnessSetup = {
  policy: readonly string[];
  annotations?: Annotations | undefined;
  screening: ScreeningMode;
  withoutFlowRules?: boolean;
};

async function withHarness(
  suite: Suite,
  opts: HarnessSetup,
  fn: (play: Player, h: Harness) => Promise<ModeRow>,
): Promise<ModeRow> {
  const h = await Harness.open(suite, opts);
  try {
    return await fn((prompt, steps) => h.play(prompt, steps), h);
  } finally {
    await h.close();
  }
}

/** Runs every mode of one suite in one attack phrasing. */
export async function runSuite(
  original: Suite,
  options: {
    policy: readonly string[];
    annotations?: Annotations | undefined;
    ablation?: boolean;
    phrasing?: Phrasing;
  },
): Promise<SuiteReport> {
  const phrasing = options.phrasing ?? "important_instructions";
  const suite = { ...original, injectionTasks: original.injectionTasks.map((i) => rephrase(i, phrasing)) };
  const requests: RequestLine[] = [];
  let refusedTools: SuiteReport["refusedTools"] = [];
  let classes: SuiteReport["classes"] = [];
  const mode = (m: Mode, setup: HarnessSetup, keep: RequestLine[] | null) =>
    withHarness(suite, setup, (play, h) => {
      if (m === "warden") {
        refusedTools = h.catalog.refused;
        classes = [...h.catalog.entries.values()].map((e) => ({
          name: e.def.name,
          class: e.cls.class,
          why: e.cls.why,
          targets: e.cls.targets,
        }));
      }
      return playMode(suite, m, play, keep, phrasing);
    });
  const rows: ModeRow[] = [await playMode(suite, "undefended", undefended, null, phrasing)];
  rows.push(await mode("warden", { policy: options.policy, screening: "flag" }, requests));
  if (options.ablation !== false) {
    rows.push(await mode("flow-only", { policy: options.policy, screening: "off" }, null));
    rows.push(
      await mode(
        "screening-only",
        { policy: options.policy, screening: "quarantine", withoutFlowRules: true },
        null,
      ),
    );
  }
  if (options.annotations !== undefined) {
    const setup = { policy: options.policy, annotations: options.annotations, screening: "flag" as const };
    rows.push(await mode("warden+annotations", setup, null));
  }
  return { suite: suite.name, phrasing, classes, rows, requests, refusedTools };
}
