// What a session keeps per prepared call (its state between prepare and result, keyed by the
// Prepared object so that no other session can settle it), and the run's per-tool counts
// (`perToolCalls`), bounded by `limits.maxToolsPerRun` distinct tools.
import { ContextError, type Decision, type GateRequest } from "../contracts/index.js";
import type { WindowEvent } from "./behaviour.js";
import type { Prepared } from "./facts.js";
import type { HoldSlot } from "./run-ledger.js";

export interface CallState {
  /** The session that prepared the call (a Session; typed loosely to keep this file below it). */
  session: object;
  call?: number;
  decision?: Decision;
  resolved?: boolean;
  admitted?: boolean;
  resulted?: boolean;
  signals: WindowEvent["signals"];
  /** The call holds one network request unit (NETWORK_TOOL_CLASSES), settled by its result. */
  netHold?: boolean;
  /** The effective rate limit the call was checked against (its override included). */
  rateLimit: number | undefined;
  /** The call's reservation; `refused` when reserve said no. */
  reservation?: HoldSlot;
}

const calls = new WeakMap<Prepared, CallState>();

/** Remembers a freshly prepared call's state. */
export function trackCall(prepared: Prepared, state: CallState): void {
  calls.set(prepared, state);
}

/** The state of a call `session` prepared; a call prepared elsewhere is refused. */
export function callStateOf(session: object, prepared: Prepared): CallState {
  const state = calls.get(prepared);
  if (state === undefined || state.session !== session) {
    throw new ContextError("ERR_CONTEXT_FOREIGN_PREPARATION", "the call was not prepared by this session");
  }
  return state;
}

/** The key a call is counted under in `perToolCalls`. */
const toolKey = (request: GateRequest) => request.tool ?? `${request.toolClass}:${request.action}`;

/** Admissions per tool key. A Map: a key may be any tool name, `__proto__` included. */
export class ToolCounts {
  readonly #counts = new Map<string, number>();

  /** Counts an admitted call. */
  admit(request: GateRequest): void {
    const key = toolKey(request);
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  /** A call naming a tool beyond `max` distinct ones is refused (counts stay exact). */
  check(request: GateRequest, max: number): void {
    if (this.#counts.size < max || this.#counts.has(toolKey(request))) return;
    throw new ContextError(
      "ERR_RUN_FULL",
      "the run has called its limit of distinct tools; start a new run",
      {
        details: { limit: max, kind: "tools" },
      },
    );
  }

  /**
   * The counts as the facts carry them: fromEntries defines members (never sets a prototype)
   * and, unlike spreading a null-prototype dictionary, is cheap — this runs on every call.
   */
  facts(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }
}

/** A new call's size limits: the run's canonical request bytes with it, and its distinct tools. */
export function checkRunSize(
  limits: { maxBytesPerRun: number; maxToolsPerRun: number },
  bytesWithCall: number,
  tools: ToolCounts,
  request: GateRequest,
): void {
  if (bytesWithCall > limits.maxBytesPerRun) {
    throw new ContextError("ERR_RUN_FULL", "the run has reached its byte limit; start a new run", {
      details: { limit: limits.maxBytesPerRun, kind: "bytes" },
    });
  }
  tools.check(request, limits.maxToolsPerRun);
}
