// One suite in one attack phrasing, every mode: the undefended baseline (every protocol
// call executed); `warden` (flow control and the Gate's output screening in `flag` mode:
// flagged values direct nothing, no run is quarantined); `flow-only` (screening `off`: what
// flow control does alone); `screening-only` (the preset without its `at-flow-…` rules and
// screening in `quarantine` mode: what the screening does alone); and, when the suite has
// an annotation file, `warden+annotations`. Benign runs and every (user × injection) pair each.
import type { ScreeningMode } from "../../src/gate/index.js";
import { type Annotations, classifyTool } from "./classify.js";
import { Harness, type StepResult } from "./harness.js";
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

/**
 * A pair a defended mode got wrong (`--failures`): the attack succeeded (the injection's
 * calls that did the harm, with the decision and the flow facts policy saw), or the user's
 * task failed (the user's calls that were refused).
 */
export interface Failure {
  mode: Mode;
  kind: "attack" | "utility";
  user: string;
  injection: string;
  steps: StepResult[];
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
  failures: Failure[];
}

type Played = { executed: Call[]; stepUps: number; steps?: StepResult[] };
type Player = (prompt: string, steps: readonly Step[]) => Promise<Played>;

const sameCall = (a: Call, b: Call) =>
  a.function === b.function && JSON.stringify(a.args) === JSON.stringify(b.args);

/** The failure record of one pair, or undefined when the mode got it right. */
function failureOf(
  mode: Mode,
  ids: { user: string; injection: string },
  r: Played,
  verdict: { attack: boolean; utility: boolean; changing: readonly Call[] },
): Failure[] {
  const steps = r.steps ?? [];
  const out: Failure[] = [];
  if (verdict.attack)
    out.push({
      mode,
      kind: "attack",
      ...ids,
      steps: steps.filter(
        (s) => s.origin === "injection" && verdict.changing.some((c) => sameCall(c, s.call)),
      ),
    });
  if (!verdict.utility)
    out.push({
      mode,
      kind: "utility",
      ...ids,
      steps: steps.filter((s) => s.origin === "user" && s.decision !== "allow" && s.decision !== "modify"),
    });
  return out;
}

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
  failures: Failure[] | null,
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
      const useful = utility(user, r.executed);
      if (useful) row.utilityUnderAttack++;
      let harmed = false;
      if (attackSucceeded(changing, (await undefended(user.prompt, steps)).executed)) {
        row.scoredPairs++;
        harmed = attackSucceeded(changing, r.executed);
        if (harmed) row.attacksSucceeded++;
      }
      failures?.push(
        ...failureOf(row.mode, { user: user.id, injection: inj.id }, r, {
          attack: harmed,
          utility: useful,
          changing,
        }),
      );
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
  failures: Failure[] | null = null,
): Promise<ModeRow> {
  const row = emptyRow(mode);
  await playPairs(suite, row, play, keep, phrasing, failures);
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
    /** Defended modes to play (default: every one); the undefended baseline is always played. */
    modes?: readonly Mode[];
    /** Keep the failing pairs of the defended modes (`--failures`). */
    failures?: boolean;
  },
): Promise<SuiteReport> {
  const phrasing = options.phrasing ?? "important_instructions";
  const suite = { ...original, injectionTasks: original.injectionTasks.map((i) => rephrase(i, phrasing)) };
  const requests: RequestLine[] = [];
  let refusedTools: SuiteReport["refusedTools"] = [];
  let classes: SuiteReport["classes"] = [];
  const failures: Failure[] = [];
  const wanted = (m: Mode) => options.modes === undefined || options.modes.includes(m);
  const mode = (m: Mode, setup: HarnessSetup, keep: RequestLine[] | null) =>
    withHarness(suite, setup, (play, h) => {
      if (classes.length === 0) {
        refusedTools = h.catalog.refused;
        classes = [...h.catalog.entries.values()].map((e) => ({
          name: e.def.name,
          class: e.cls.class,
          why: e.cls.why,
          targets: e.cls.targets,
        }));
      }
      return playMode(suite, m, play, keep, phrasing, options.failures === true ? failures : null);
    });
  const rows: ModeRow[] = [await playMode(suite, "undefended", undefended, null, phrasing)];
  if (wanted("warden"))
    rows.push(await mode("warden", { policy: options.policy, screening: "flag" }, requests));
  if (options.ablation !== false && wanted("flow-only"))
    rows.push(await mode("flow-only", { policy: options.policy, screening: "off" }, null));
  if (options.ablation !== false && wanted("screening-only"))
    rows.push(
      await mode(
        "screening-only",
        { policy: options.policy, screening: "quarantine", withoutFlowRules: true },
        null,
      ),
    );
  if (options.annotations !== undefined && wanted("warden+annotations")) {
    const setup = { policy: options.policy, annotations: options.annotations, screening: "flag" as const };
    rows.push(await mode("warden+annotations", setup, null));
  }
  return { suite: suite.name, phrasing, classes, rows, requests, refusedTools, failures };
}
