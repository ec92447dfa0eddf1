// §9.1 failure policy, engine side. Any fault — malformed or unknown event, no handshake,
// a timeout, an evaluation that threw, a journal that could not record — is answered by the
// policy, never by a crash: fail-closed (deny) by default; fail-open (allow) only for the
// hooks the deployment lists, and only `max` times in this engine's life, after which it
// is closed again (an attacker who can make the engine fail cannot open it for good).
import { HookError } from "../contracts/index.js";
import type { Verdict } from "./schema-base.js";
import type { HookPoint } from "./schema-points.js";

export interface FailurePolicy {
  /** Hooks answered allow when the engine fails, at most `max` times in all. */
  failOpen?: { hooks: readonly HookPoint[]; max: number };
}

export function failureVerdict(
  policy: FailurePolicy | undefined,
  hook: HookPoint | undefined,
  used: { open: number },
  code: string,
  message: string,
): Verdict & { error_code: string } {
  const open = policy?.failOpen;
  const mayOpen = hook && open?.hooks.includes(hook) && used.open < open.max;
  if (mayOpen) used.open++;
  return {
    decision: mayOpen ? "allow" : "deny",
    category: "engine_failure",
    severity: mayOpen ? "warning" : "critical",
    source: "failure_policy",
    matched_rule_id: code,
    reasons: [`${code}: ${message.slice(0, 512)} (${mayOpen ? "fail-open" : "fail-closed"})`],
    error_code: code,
  };
}

/** Resolves with the promise, or rejects with ERR_HOOK_TIMEOUT after `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HookError("ERR_HOOK_TIMEOUT", `no verdict within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}
