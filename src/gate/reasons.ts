// The reason codes the Gate itself writes into an outcome and its journal entries (policy
// rules add their own codes beside these; the session context adds the ones in
// CONTEXT_REASON_CODES). Their meanings are tabled in docs/gate.md.

/** Codes without a parameter, in the order the Gate's stages can produce them. */
export const GATE_REASON_CODES = [
  // admission
  "request_invalid",
  "run_id_invalid",
  "principal_unknown",
  "tool_unknown",
  "contract_class_mismatch",
  "contract_required",
  "run_principal_mismatch",
  "run_unknown",
  // judgement
  "session_unavailable",
  "policy_error",
  "contract_requires_approval",
  "drift_unavailable",
  "drift_exceeded",
  "drift_cumulative_exceeded",
  // decision record
  "journal_unavailable",
  // resolution
  "no_approver_configured",
  "approval_timeout",
  "approval_cancelled",
  "approval_queue_full",
  "approval_denied",
  "approval_modified",
  "approval_granted",
  "defer_queue_full",
  "defer_timeout",
  "defer_cancelled",
  "defer_released",
  "defer_denied",
] as const;

/** Codes the session context puts in a pre-policy denial (src/context decides them). */
export const CONTEXT_REASON_CODES = [
  "quarantined",
  "rate_limited",
  "budget_tool_calls_exhausted",
  "budget_tokens_exhausted",
  "budget_wall_time_exhausted",
  "budget_cost_exhausted",
  "budget_iterations_exhausted",
  "budget_network_requests_exhausted",
  "budget_network_bytes_exhausted",
  "budget_fs_bytes_exhausted",
  "budget_fs_files_exhausted",
] as const;

/**
 * Every reason code the Gate stages produce: the fixed ones, plus the parametrised ones —
 * `contract_param_invalid:ARG:RULE` (the request, or an approver's rewrite, breaks the
 * contract), `contract_modify_invalid:ARG:RULE` (the policy's rewrite does) and
 * `behavior_RULE` (a behavioural rule of the session context matched).
 */
export type GateReasonCode =
  | (typeof GATE_REASON_CODES)[number]
  | (typeof CONTEXT_REASON_CODES)[number]
  | `contract_param_invalid:${string}:${string}`
  | `contract_modify_invalid:${string}:${string}`
  | `behavior_${string}`
  // a refused capability token (src/gate/capability.ts): its ERR_CAPABILITY_* code
  | `ERR_CAPABILITY_${string}`
  // a call outside its delegated run's grant (capability.ts)
  | "ERR_DELEGATION_CEILING";

/** The reason for a contract violation found by `validateArgs`. */
export function contractViolation(
  prefix: "contract_param_invalid" | "contract_modify_invalid",
  v: { arg?: string | undefined; rule: string },
): GateReasonCode {
  return `${prefix}:${v.arg ?? "*"}:${v.rule}`;
}
