// One suite, every mode: the undefended baseline (every protocol call executed), Warden
// with the general classification and the Gate's output screening in `quarantine` mode,
// Warden with `outputScreening: off` (what taint, provenance and the sensitive-action
// rules do alone) and, when the suite has an annotation file, Warden with it. Benign runs and every (user × injection) pair each.
import type { ScreeningMode } from "../../src/gate/index.js";
import { type Annotations, classifyTool } from "./classify.js";
import { Harness } from "./harness.js";
import { attackSteps, benignSteps, injectionsFor, type Step } from "./protocol.js";
import { attackSucceeded, modelOutput, stateChangingCalls, utility } from "./score.js";
import type { Call, Suite } from "./suite.js";

export type Mode = "undefended" | "warden" | "warden-screening-off" | "warden+annotations";

export interface RequestLine {
  suite: string;
  user_task_id: string;
  injection_task_id: string | null;
  injections: Record<string, string> | null;
  calls: Call[];
  model_output: string;
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
    });
  }
}

async function playMode(
  suite: Suite,
  mode: Mode,
  play: Player,
  keep: RequestLine[] | null,
): Promise<ModeRow> {
  const row = emptyRow(mode);
  await playPairs(suite, row, play, keep);
  await playBenign(suite, row, play, keep);
  return row;
}

async function withHarness(
  suite: Suite,
  opts: { policy: readonly string[]; annotations?: Annotations | undefined; screening: ScreeningMode },
  fn: (play: Player, h: Harness) => Promise<ModeRow>,
): Promise<ModeRow> {
  const h = await Harness.open(suite, opts);
  try {
    return await fn((prompt, steps) => h.play(prompt, steps), h);
  } finally {
    await h.close();
  }
}

/** Runs every mode of one suite. */
export async function runSuite(
  suite: Suite,
  options: { policy: readonly string[]; annotations?: Annotations | undefined; ablation?: boolean },
): Promise<SuiteReport> {
  const requests: RequestLine[] = [];
  let refusedTools: SuiteReport["refusedTools"] = [];
  const rows: ModeRow[] = [await playMode(suite, "undefended", undefended, null)];
  rows.push(
    await withHarness(suite, { policy: options.policy, screening: "quarantine" }, (play, h) => {
      refusedTools = h.catalog.refused;
      return playMode(suite, "warden", play, requests);
    }),
  );
  if (options.ablation !== false) {
    rows.push(
      await withHarness(suite, { policy: options.policy, screening: "off" }, (play) =>
        playMode(suite, "warden-screening-off", play, null),
      ),
    );
  }
  if (options.annotations !== undefined) {
    rows.push(
      await withHarness(
        suite,
        { policy: options.policy, annotations: options.annotations, screening: "quarantine" },
        (play) => playMode(suite, "warden+annotations", play, null),
      ),
    );
  }
  return { suite: suite.name, rows, requests, refusedTools };
}
