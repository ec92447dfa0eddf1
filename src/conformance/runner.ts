// Runs the selected specifications' checks against one target and collects the pass table.
// A check runs its scenario for the target's kind; one without a scenario for that kind is
// not-implemented with the reason (a library-only check on a URL says "needs library mode");
// one whose scenario finds the feature it exercises not configured is not-configured.
// A scenario that throws is a failure showing the error: a fault is never a pass.
import { aartsChecks, type EngineOpener } from "./aarts.js";
import { APAE_CHECKS } from "./apae.js";
import { DARE_CHECKS } from "./dare.js";
import { oatsChecks } from "./oats-checks.js";
import { probeOf, withScenario } from "./scenario.js";
import {
  type Check,
  type CheckResult,
  type ConformanceSummary,
  type Observation,
  RESULTS,
  SPECS,
  type Spec,
  type Target,
} from "./types.js";

export interface RunOptions {
  specs?: readonly Spec[];
  /** Only these check ids (tests). */
  only?: readonly string[];
  /** The loop module C1 compiles against (tests: a loop without the typestate). */
  loopModule?: string;
  /** The AARTS engine in library mode (tests: a broken engine). */
  aartsEngine?: EngineOpener;
}

/** Every check of the four specifications, in table order. */
export function allChecks(o: Pick<RunOptions, "loopModule" | "aartsEngine"> = {}): Check[] {
  return [
    ...DARE_CHECKS,
    ...oatsChecks(o.loopModule !== undefined ? { loopModule: o.loopModule } : {}),
    ...aartsChecks(o.aartsEngine),
    ...APAE_CHECKS,
  ];
}

function message(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const text = typeof e?.message === "string" ? e.message : String(err);
  return (
    `${typeof e?.code === "string" ? `${e.code}: ` : ""}${text}`.split("\n")[0]?.slice(0, 300) ?? "error"
  );
}

async function observe(c: Check, t: Target): Promise<Observation | { notImplemented: string }> {
  const runner = t.kind === "library" ? c.library : c.url;
  if (runner === undefined) {
    if (c.notImplemented !== undefined) return { notImplemented: c.notImplemented };
    return { notImplemented: t.kind === "url" ? "needs library mode (--config)" : "no library scenario" };
  }
  try {
    return await (runner as (x: Target) => Promise<Observation>)(t);
  } catch (err) {
    return { pass: false, observed: `scenario error: ${message(err)}` };
  }
}

async function resolveProbe(t: Target): Promise<Target> {
  if (t.kind === "url" || t.probe !== undefined) return t;
  try {
    return { ...t, probe: await withScenario(t, async (s) => probeOf(t, s.rt)) };
  } catch {
    return t; // the scenarios that need a probe say so themselves
  }
}

export async function runChecks(target: Target, o: RunOptions = {}): Promise<ConformanceSummary> {
  const specs = o.specs?.length ? [...o.specs] : [...SPECS];
  const t = await resolveProbe(target);
  const chosen = allChecks(o).filter(
    (c) => specs.includes(c.spec) && (o.only === undefined || o.only.includes(c.id)),
  );
  const results: CheckResult[] = [];
  for (const c of chosen) {
    const r = await observe(c, t);
    const base = { spec: c.spec, id: c.id, title: c.title, section: c.section };
    if ("notImplemented" in r)
      results.push({ ...base, result: "not-implemented", observed: r.notImplemented });
    else if (r.skipped !== undefined)
      results.push({ ...base, result: "not-configured", observed: r.skipped });
    else results.push({ ...base, result: r.pass ? "pass" : "fail", observed: r.observed });
  }
  const counts = Object.fromEntries(
    RESULTS.map((k) => [k, results.filter((r) => r.result === k).length]),
  ) as ConformanceSummary["counts"];
  return {
    target: target.kind === "library" ? target.label : target.url,
    mode: target.kind,
    specs,
    results,
    counts,
    passed: counts.fail === 0,
  };
}
