// What append() accepts, checked before anything queues: the type, the ids, the
// body (a private canonical copy, schema-checked, sensitive members replaced,
// credentials masked). Bodies of built-in types the runtime builds itself come in
// through appendBuilt(): their TypeScript type is the schema's, checked when the
// code is compiled, so they are not parsed by zod again here (the verifier still
// checks every body it reads back). Any body that masking or a sensitive reference
// changed is checked again, whichever way it came in.
import type { z } from "zod";
import {
  canonicalJson,
  type GATE_DECISION,
  type GATE_RESOLUTION,
  type GATE_RESULT,
  type GateDecisionBody,
  type GateResolutionBody,
  type GateResultBody,
  isPlainObject,
  JournalError,
  type POLICY_SHADOW_DIFF,
  type POLICY_SHADOW_DROPPED,
  type POLICY_SHADOW_PROMOTED,
  type ShadowDiffBody,
  type ShadowDroppedBody,
  type ShadowPromotedBody,
  TRACE_ID_PATTERN,
} from "../contracts/index.js";
import { EVENT_TYPE_PATTERN, RUN_ID_PATTERN } from "./entry.js";
import {
  type BundleLoadedBody,
  type EventTypeRegistry,
  KEY_ROTATED,
  type OATS_TYPES,
  type QuarantineBody,
  type TailCutBody,
} from "./event-types.js";
import { CREDENTIAL_HINT, type PreparedBody, prepareBody } from "./prepare.js";
import { type Redaction, redactCredentials } from "./redact.js";
import type { Unchained } from "./sealer.js";
import { applySensitive, type SensitiveMark } from "./sensitive.js";

export interface AppendInput {
  type: string;
  run_id?: string | null;
  trace_id?: string | null;
  body: Record<string, unknown>;
  /** Members to keep out of the entry, replaced by their hash and a reference. */
  sensitive?: readonly SensitiveMark[];
}

type Oats = typeof OATS_TYPES;

/** Body type of every built-in event type the runtime writes, from its schema. */
export interface BuiltinBodies {
  [GATE_DECISION]: z.input<typeof GateDecisionBody>;
  [GATE_RESOLUTION]: z.input<typeof GateResolutionBody>;
  [GATE_RESULT]: z.input<typeof GateResultBody>;
  "warden.policy.bundle_loaded": BundleLoadedBody;
  [POLICY_SHADOW_DIFF]: z.input<typeof ShadowDiffBody>;
  [POLICY_SHADOW_DROPPED]: z.input<typeof ShadowDroppedBody>;
  [POLICY_SHADOW_PROMOTED]: z.input<typeof ShadowPromotedBody>;
  "warden.system.quarantine": QuarantineBody;
  "warden.journal.tail_cut": TailCutBody;
  LoopStarted: z.input<Oats["LoopStarted"]>;
  ReasoningComplete: z.input<Oats["ReasoningComplete"]>;
  PolicyEvaluated: z.input<Oats["PolicyEvaluated"]>;
  ToolsDispatched: z.input<Oats["ToolsDispatched"]>;
  ObservationsCollected: z.input<Oats["ObservationsCollected"]>;
  LoopTerminated: z.input<Oats["LoopTerminated"]>;
  RecoveryTriggered: z.input<Oats["RecoveryTriggered"]>;
}

/** An append of a built-in type whose body the compiler checked against its schema. */
export type BuiltAppend = {
  [T in keyof BuiltinBodies]: Omit<AppendInput, "type" | "body"> & { type: T; body: BuiltinBodies[T] };
}[keyof BuiltinBodies];

export interface InputRules {
  registry: EventTypeRegistry;
  allowUnknown: boolean;
  onRedaction?: ((type: string, redactions: Redaction[]) => void) | undefined;
}

function checkIds(input: AppendInput): { run_id: string | null; trace_id: string | null } {
  const run_id = input.run_id ?? null;
  if (run_id !== null && (typeof run_id !== "string" || !RUN_ID_PATTERN.test(run_id))) {
    throw new JournalError("ERR_JOURNAL_ENTRY_INVALID", "run_id must be 1-256 printable ASCII characters");
  }
  const trace_id = input.trace_id ?? null;
  if (trace_id !== null && (typeof trace_id !== "string" || !TRACE_ID_PATTERN.test(trace_id))) {
    throw new JournalError("ERR_JOURNAL_ENTRY_INVALID", "trace_id must be a W3C trace-id (32 lowercase hex)");
  }
  return { run_id, trace_id };
}

function checkType(type: unknown, rules: InputRules): asserts type is string {
  if (typeof type !== "string" || !EVENT_TYPE_PATTERN.test(type)) {
    throw new JournalError("ERR_JOURNAL_TYPE_INVALID", `event type must match ${EVENT_TYPE_PATTERN}`);
  }
  if (type === KEY_ROTATED) {
    throw new JournalError("ERR_JOURNAL_TYPE_INVALID", `${KEY_ROTATED} entries are written by rotateKey()`);
  }
  if (!rules.allowUnknown && !rules.registry.has(type)) {
    throw new JournalError("ERR_JOURNAL_TYPE_UNKNOWN", `event type ${type} is not registered`);
  }
}

/**
 * The canonical text of a body the runtime built itself (appendBuilt, no sensitive
 * marks), without the private copy append() makes: the runtime builds each such body
 * for the one append and does not change it after, and masking copies before it
 * changes anything. canonicalJson refuses what prepareBody refuses, but for a
 * `__proto__` member (which `"__proto__":` in canonical text can only be: a quote
 * inside a string is escaped); either goes through prepareBody for its coded error.
 */
function builtBody(body: Record<string, unknown>): PreparedBody {
  let json: string | null;
  try {
    json = canonicalJson(body);
  } catch {
    json = null;
  }
  return json === null || json.includes('"__proto__":') ? prepareBody(body) : { body, json };
}

/**
 * Checks an append and makes its body fit to seal. `typed`: the body's type was
 * checked at compile time against a built-in schema (appendBuilt), so the zod parse
 * of the body as given is skipped; a body changed by masking is parsed either way.
 */
export function prepareAppend(input: AppendInput, rules: InputRules, typed: boolean): Unchained {
  const { type } = input;
  checkType(type, rules);
  if (typed && !rules.registry.has(type)) {
    throw new JournalError("ERR_JOURNAL_TYPE_UNKNOWN", `event type ${type} is not registered`);
  }
  const { run_id, trace_id } = checkIds(input);
  if (!isPlainObject(input.body)) {
    throw new JournalError("ERR_JOURNAL_BODY_INVALID", "an entry body must be a JSON object");
  }
  const sensitive = input.sensitive !== undefined && input.sensitive.length > 0;
  // append(): a private, plain-data copy and its canonical text, in one walk — the
  // caller's object is never mutated or retained. appendBuilt(): the text alone.
  let { body, json: bodyJson } = typed && !sensitive ? builtBody(input.body) : prepareBody(input.body);
  if (!typed) {
    const clear = rules.registry.check(type, body, true);
    if (!clear.ok) throw new JournalError("ERR_JOURNAL_BODY_INVALID", clear.message, { details: { type } });
  }
  if (sensitive) applySensitive(body, input.sensitive!);
  let masked = 0;
  // The full scan only when the text could hold a credential (CREDENTIAL_HINT), or
  // when sensitive references (caller-supplied URIs) were added to it.
  if (sensitive || CREDENTIAL_HINT.test(bodyJson)) {
    const m = redactCredentials(body);
    masked = m.redactions.length;
    if (masked > 0) {
      body = m.value;
      rules.onRedaction?.(type, m.redactions);
    }
  }
  if (sensitive || masked > 0) {
    bodyJson = canonicalJson(body);
    // What is stored must still be a valid body, or the verifier would reject it.
    const stored = rules.registry.check(type, body, true);
    if (!stored.ok) {
      throw new JournalError(
        sensitive ? "ERR_JOURNAL_SENSITIVE_PATH" : "ERR_JOURNAL_BODY_INVALID",
        `after ${sensitive ? "sensitive references" : "credential masking"} ${stored.message}`,
        { details: { type } },
      );
    }
  }
  // Unchanged by masking, the copy's canonical text is the one built with it.
  return { type, run_id, trace_id, body, bodyJson };
}
