// OATS §9.2 run budgets: tokens, wall time, iterations (ORGA loop turns), tool calls,
// network (requests, bytes) and filesystem (bytes written, files written), plus cost.
// Limits come from the context configuration and may be lowered — never raised — per run
// (`startRun(principal, { budgets })`). Usage other than tool calls, tokens, cost and wall
// time is metered by whoever observes it (the loop counts iterations, executors report
// network and filesystem use with a call's result, `Session.recordResult`'s `usage`) or
// through `Session.recordUsage`. A network call (NETWORK_TOOL_CLASSES) holds one request
// at reserve, so concurrent calls cannot overrun the network-requests budget. A spent budget denies the
// next call before policy, with one reason code per exhausted budget.
import { ContextError } from "../contracts/index.js";
import type { ContextConfig } from "./config.js";

/** Resources metered through `recordUsage` (besides tokens and cost). */
export const METERED_RESOURCES = [
  "iterations",
  "networkRequests",
  "networkBytes",
  "fsBytesWritten",
  "fsFilesWritten",
] as const;
export type MeteredResource = (typeof METERED_RESOURCES)[number];
export type ResourceUsage = Partial<Record<MeteredResource, number>>;

export type BudgetLimits = ContextConfig["budgets"];
export type BudgetName = keyof BudgetLimits;

export interface BudgetUse {
  used: number;
  limit: number;
}

export type BudgetFacts = Partial<Record<BudgetName, BudgetUse>>;

/** The reason code of each budget, in the fixed order they are reported. */
export const BUDGET_REASONS: Readonly<Record<BudgetName, string>> = {
  toolCalls: "budget_tool_calls_exhausted",
  tokens: "budget_tokens_exhausted",
  wallTimeMs: "budget_wall_time_exhausted",
  cost: "budget_cost_exhausted",
  iterations: "budget_iterations_exhausted",
  networkRequests: "budget_network_requests_exhausted",
  networkBytes: "budget_network_bytes_exhausted",
  fsBytesWritten: "budget_fs_bytes_exhausted",
  fsFilesWritten: "budget_fs_files_exhausted",
};

const NAMES = Object.keys(BUDGET_REASONS) as BudgetName[];

/** The run's limits: each the lower of the configured one and the run's own. */
export function runBudgetLimits(
  configured: BudgetLimits,
  run: Partial<BudgetLimits> | undefined,
): BudgetLimits {
  if (run === undefined) return configured;
  const out: BudgetLimits = { ...configured };
  for (const n of NAMES) {
    const r = run[n];
    if (r === undefined) continue;
    if (typeof r !== "number" || !Number.isFinite(r) || r < 0) {
      throw new ContextError(
        "ERR_CONTEXT_INPUT_INVALID",
        `run budget ${n} must be a finite non-negative number`,
      );
    }
    const c = configured[n];
    out[n] = c === undefined ? r : Math.min(c, r);
  }
  return out;
}

/** Tool classes whose every admitted call is a network request (one unit held at reserve). */
export const NETWORK_TOOL_CLASSES: ReadonlySet<string> = new Set(["http"]);

/** Checks reported usage: every value a finite non-negative number (ERR_CONTEXT_INPUT_INVALID). */
export function checkUsage(usage: ResourceUsage): void {
  for (const k of METERED_RESOURCES) {
    const v = usage[k];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new ContextError("ERR_CONTEXT_INPUT_INVALID", `${k} must be a finite non-negative number`);
    }
  }
}

/**
 * Counts of the metered resources of one run, plus the network requests held by admitted
 * calls whose result is not reported yet: a network call takes its unit atomically at
 * reserve (so concurrent calls cannot all pass one check), and its reported usage settles it.
 */
export class RunMeter {
  readonly #used = new Map<MeteredResource, number>();
  #heldRequests = 0;

  /** Adds usage; every value must be a finite non-negative number (ERR_CONTEXT_INPUT_INVALID). */
  add(usage: ResourceUsage): void {
    checkUsage(usage);
    for (const k of METERED_RESOURCES) {
      const v = usage[k];
      if (v !== undefined) this.#used.set(k, (this.#used.get(k) ?? 0) + v);
    }
  }

  /** Used so far; network requests include the ones held by calls still running. */
  used(k: MeteredResource): number {
    const held = k === "networkRequests" ? this.#heldRequests : 0;
    return (this.#used.get(k) ?? 0) + held;
  }

  /** Takes one network request unit unless `limit` is reached; false when it is. */
  holdRequest(limit: number | undefined): boolean {
    if (limit !== undefined && this.used("networkRequests") >= limit) return false;
    this.#heldRequests++;
    return true;
  }

  /** Gives back a held unit (the call was denied, or its usage is being settled). */
  releaseRequest(): void {
    if (this.#heldRequests > 0) this.#heldRequests--;
  }
}

/**
 * Meters one call's reported usage (only the metered resources are kept). A call that held
 * a network request settles it: it counts as at least one request even if it reports none
 * (fail closed). Returns what was metered, or undefined when nothing was.
 */
export function settleCallUsage(
  meter: RunMeter,
  heldRequest: boolean,
  usage: ResourceUsage | undefined,
): ResourceUsage | undefined {
  const out: ResourceUsage = {};
  for (const k of METERED_RESOURCES) {
    const v = usage?.[k];
    if (v !== undefined) out[k] = v;
  }
  checkUsage(out);
  if (heldRequest) {
    out.networkRequests = Math.max(1, out.networkRequests ?? 0);
    meter.releaseRequest();
  }
  meter.add(out);
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The run's budgets as the policy sees them: the limits that are set, with what is used. */
export function budgetFacts(
  limits: BudgetLimits,
  used: { toolCalls: number; tokens: number; wallTimeMs: number; cost: number; meter: RunMeter },
): BudgetFacts {
  const budgets: BudgetFacts = {};
  for (const n of NAMES) {
    const limit = limits[n];
    if (limit === undefined) continue;
    const u =
      n === "toolCalls" || n === "tokens" || n === "wallTimeMs" || n === "cost"
        ? used[n]
        : used.meter.used(n);
    budgets[n] = { used: u, limit };
  }
  return budgets;
}

/** Reason codes of the budgets that are used up, in a fixed order. */
export function exhaustedBudgets(b: BudgetFacts): string[] {
  const reasons: string[] = [];
  for (const n of NAMES) {
    const use = b[n];
    if (use !== undefined && use.used >= use.limit) reasons.push(BUDGET_REASONS[n]);
  }
  return reasons;
}
