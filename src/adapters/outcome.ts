// The one outcome of a governed tool call, whichever mode served it (library or HTTP):
// allowed (the result, with the taint Warden recorded for it), denied (a structured tool
// error the model can reason about) or a coded fault. A step-up is waited for, bounded:
// approved, it is allowed; not approved in time, it is denied with its own code. `toolErrorOf` is the only view of a refusal the model gets: a stable code,
// the reason codes and the decision id — never rule texts, approver names or policy files.
import { agentErrorText, type TaintLabel } from "../contracts/index.js";

export type GovernedOutcome =
  | {
      kind: "allowed";
      /** The journaled decision (allow, or modify when policy or an approver rewrote the parameters). */
      decisionId: string;
      decision: "allow" | "modify";
      /** The contract-validated output, as the framework hands it to the model. */
      output: unknown;
      /** The output's taint, as Warden's session recorded it (later calls are judged with it). */
      taint: TaintLabel[];
      /** The parameters that were executed (a modify rewrites them). */
      parameters: Record<string, unknown>;
    }
  | {
      kind: "denied";
      /** ERR_ADAPTER_DENIED, ERR_ADAPTER_STEP_UP_TIMEOUT, or the contract's ERR_TOOL_* code before the Gate. */
      code: string;
      reasonCodes: string[];
      /** null when the contract check refused the call before the Gate. */
      decisionId: string | null;
    }
  | {
      kind: "fault";
      code: string;
      /** Cleaned for the agent (`agentErrorText`): no paths, stack frames or secret names. */
      message: string;
      decisionId: string | null;
      /** Taint of text in the message that came from the tool (an HTTP error body), as recorded. */
      taint: TaintLabel[];
    };

/** The structured tool error the model sees for anything but an allowed call. */
export interface ToolErrorView {
  error: { code: string; reason: string; decisionId: string | null };
}

/** Reason codes only: a code is `[A-Za-z0-9_.:-]`, anything else (a rule's prose) is dropped. */
export function reasonCodesOnly(codes: readonly unknown[]): string[] {
  return codes
    .filter((c): c is string => typeof c === "string" && /^[A-Za-z0-9_.:-]{1,128}$/.test(c))
    .slice(0, 16);
}

const STEP_UP_ENDED = new Set([
  "approval_timeout",
  "approval_cancelled",
  "approval_queue_full",
  "defer_timeout",
  "defer_cancelled",
  "defer_queue_full",
]);

/** A Gate denial as an outcome: a step-up or deferral that ran out is its own code. */
export function deniedOutcome(decisionId: string | null, reasonCodes: readonly unknown[]): GovernedOutcome {
  const codes = reasonCodesOnly(reasonCodes);
  const ranOut = codes.some((c) => STEP_UP_ENDED.has(c));
  return {
    kind: "denied",
    code: ranOut ? "ERR_ADAPTER_STEP_UP_TIMEOUT" : "ERR_ADAPTER_DENIED",
    reasonCodes: codes,
    decisionId,
  };
}

export function faultOutcome(
  code: string,
  message: string,
  extra: { decisionId?: string | null; taint?: TaintLabel[] } = {},
): GovernedOutcome {
  return {
    kind: "fault",
    code: /^ERR_[A-Z0-9_]{1,64}$/.test(code) ? code : "ERR_ADAPTER_GATE_FAULT",
    message: agentErrorText(message),
    decisionId: extra.decisionId ?? null,
    taint: extra.taint ?? [],
  };
}

/** What the model reads for a refusal or a fault. */
export function toolErrorOf(o: Exclude<GovernedOutcome, { kind: "allowed" }>): ToolErrorView {
  if (o.kind === "fault") return { error: { code: o.code, reason: o.message, decisionId: o.decisionId } };
  const reason = o.reasonCodes.length > 0 ? o.reasonCodes.join(", ") : "denied";
  return { error: { code: o.code, reason, decisionId: o.decisionId } };
}

/** The model-facing value of any outcome: the output when allowed, the structured error otherwise. */
export function modelValueOf(o: GovernedOutcome): unknown {
  return o.kind === "allowed" ? o.output : toolErrorOf(o);
}

/** The model-facing text of any outcome (JSON for anything that is not already a string). */
export function modelTextOf(o: GovernedOutcome): string {
  const v = modelValueOf(o);
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v) ?? "null";
  } catch {
    return JSON.stringify({ error: { code: "ERR_ADAPTER_GATE_FAULT", reason: "unserialisable output" } });
  }
}
