// Event types and the schemas their bodies must satisfy. The journal validates a
// body on append and the verifier validates it again, so an entry that says
// `dare.policy.decision` really holds a PolicyDecisionRecord. Built in: OATS §8.2
// loop events, every DARE/GATE record type, the Gate's warden.gate.* entries (their
// schemas live in src/contracts, so a verifier that never loads the Gate checks them),
// and Warden's system events.
import { z } from "zod";
import {
  GATE_EVENT_SCHEMAS,
  JournalError,
  PayloadRefSchema,
  RECORD_SCHEMAS,
  SHADOW_EVENT_SCHEMAS,
  Sha256HashSchema,
} from "../contracts/index.js";
import { EVENT_TYPE_PATTERN, KEY_ID_PATTERN } from "./entry.js";

/** Key rotation: signed by the outgoing key; later entries are signed by the new key. */
export const KEY_ROTATED = "warden.journal.key_rotated";

/**
 * A cross-chain checkpoint (distributed mode, one chain per replica: docs/distributed.md).
 * Entry 1 of every per-replica chain is one naming the chain; later ones name the heads of
 * the other chains that moved since the replica's previous checkpoint, so the verifier can
 * prove no chain lost an entry that another chain's checkpoint saw.
 */
export const CHECKPOINT = "warden.journal.checkpoint";

/**
 * Torn tail cut back (segment store, docs/journal.md §8): bytes after the last complete
 * batch of a segment — a batch whose write a crash interrupted, never acknowledged —
 * were removed when the journal was opened for writing. Names what was cut.
 */
export const TAIL_CUT = "warden.journal.tail_cut";
export const TailCutSchema = z.strictObject({
  segment: z.string().min(1).max(64),
  offset: z.number().int().min(0),
  bytes: z.number().int().min(0),
  reason: z.string().min(1).max(512),
});
export type TailCutBody = z.infer<typeof TailCutSchema>;
/** A chain's name: printable ASCII without spaces ("" is the global chain of a journal that had one). */
export const CHAIN_NAME_PATTERN = /^[\x21-\x7e]{0,256}$/;
/** Most heads one checkpoint entry names (more are split over several entries). */
export const MAX_CHECKPOINT_HEADS = 512;

export const CheckpointSchema = z.strictObject({
  /** The chain this entry belongs to (never the global chain's ""). */
  chain: z.string().min(1).regex(CHAIN_NAME_PATTERN),
  /** Other chains' committed heads as read when the checkpoint was made, by chain name. */
  heads: z
    .array(
      z.strictObject({
        chain: z.string().regex(CHAIN_NAME_PATTERN),
        seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
        hash: Sha256HashSchema,
      }),
    )
    .max(MAX_CHECKPOINT_HEADS),
});
export type CheckpointBody = z.infer<typeof CheckpointSchema>;

const Str = z.string().min(1).max(4096);
const Count = z.number().int().min(0);
const Usage = z.looseObject({ input_tokens: Count.optional(), output_tokens: Count.optional() });
const Decision = z.enum(["allow", "deny", "modify", "step_up", "defer"]);

/** OATS §8.2: the minimum loop events. Loose objects: the loop may add fields. */
export const OATS_TYPES = {
  LoopStarted: z.looseObject({ agent_id: Str, request: z.json().optional(), config: z.json().optional() }),
  ReasoningComplete: z.looseObject({ proposed_actions: z.array(z.json()), usage: Usage.optional() }),
  PolicyEvaluated: z.looseObject({
    decisions: z.array(
      z.looseObject({
        action: Str,
        decision: Decision,
        policy_ids: z.array(Str).optional(),
        reasons: z.array(Str).optional(),
      }),
    ),
  }),
  ToolsDispatched: z.looseObject({
    tools: z.array(
      z.looseObject({
        name: Str,
        duration_ms: Count.optional(),
        evidence_hash: Sha256HashSchema.optional(),
      }),
    ),
  }),
  ObservationsCollected: z.looseObject({ observation_count: Count, context_size: Count.optional() }),
  LoopTerminated: z.looseObject({
    reason: Str,
    iterations: Count,
    usage: Usage.optional(),
    duration_ms: Count.optional(),
  }),
  RecoveryTriggered: z.looseObject({ strategy: Str, error: z.json() }),
} satisfies Record<string, z.ZodType>;

const Ed25519PublicJwk = z.strictObject({
  kty: z.literal("OKP"),
  crv: z.literal("Ed25519"),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});

const QuarantineSchema = z.looseObject({
  subject: Str,
  trigger: z.enum(["threshold", "behavioral_rule", "manual", "trust_score", "output_screening"]),
  reason: Str,
  rule_id: Str.optional(),
  released: z.boolean().optional(),
});
export type QuarantineBody = z.input<typeof QuarantineSchema>;

const BundleLoadedSchema = z.looseObject({
  policy_bundle_hash: Sha256HashSchema,
  source: Str.optional(),
  version: Str.optional(),
});
export type BundleLoadedBody = z.input<typeof BundleLoadedSchema>;

const SYSTEM_TYPES: Record<string, z.ZodType> = {
  [KEY_ROTATED]: z.strictObject({
    previous_key_id: z.string().regex(KEY_ID_PATTERN),
    new_key_id: z.string().regex(KEY_ID_PATTERN),
    new_public_key: Ed25519PublicJwk,
  }),
  [CHECKPOINT]: CheckpointSchema,
  [TAIL_CUT]: TailCutSchema,
  "warden.system.quarantine": QuarantineSchema,
  "warden.policy.bundle_loaded": BundleLoadedSchema,
  "warden.operator.override": z.looseObject({
    operator: Str,
    action: Str,
    reason: Str,
    target: z.json().optional(),
  }),
  "warden.operator.note": z.looseObject({ operator: Str, note: Str }),
};

/** Bodies replaced by a sensitive reference keep this shape wherever they sit. */
export const SensitiveRefSchema = z.strictObject({
  payload_hash: Sha256HashSchema,
  payload_ref: PayloadRefSchema,
});

export type BodyCheck = { ok: true } | { ok: false; message: string };

/** Type name -> body schema. Registration is explicit and never overwrites. */
export class EventTypeRegistry {
  readonly #schemas = new Map<string, z.ZodType>();

  register(type: string, schema: z.ZodType): void {
    if (!EVENT_TYPE_PATTERN.test(type)) {
      throw new JournalError("ERR_JOURNAL_TYPE_INVALID", `event type must match ${EVENT_TYPE_PATTERN}`);
    }
    if (this.#schemas.has(type)) {
      throw new JournalError("ERR_JOURNAL_TYPE_EXISTS", `event type ${type} is already registered`);
    }
    this.#schemas.set(type, schema);
  }

  has(type: string): boolean {
    return this.#schemas.has(type);
  }

  types(): string[] {
    return [...this.#schemas.keys()].sort();
  }

  /** The body schema registered for `type` (docs and JSON Schemas are generated from it). */
  schemaOf(type: string): z.ZodType | undefined {
    return this.#schemas.get(type);
  }

  /**
   * Checks a body against its type's schema. Unregistered types pass only when
   * `allowUnknown` (the body must still be a JSON object, which the entry shape
   * guarantees). Messages name paths, never values: bodies may hold secrets.
   */
  check(type: string, body: unknown, allowUnknown: boolean): BodyCheck {
    const schema = this.#schemas.get(type);
    if (schema === undefined) {
      return allowUnknown ? { ok: true } : { ok: false, message: `unregistered event type ${type}` };
    }
    const res = schema.safeParse(body);
    if (res.success) return { ok: true };
    const first = res.error.issues[0];
    const path = first === undefined ? "" : first.path.map(String).join(".");
    return {
      ok: false,
      message: `body of ${type} invalid at ${path || "(root)"}: ${first?.message ?? "invalid"}`,
    };
  }
}

/** A fresh registry with every built-in type. */
export function builtinEventTypes(): EventTypeRegistry {
  const r = new EventTypeRegistry();
  for (const [t, s] of Object.entries(OATS_TYPES)) r.register(t, s);
  for (const [t, s] of Object.entries(RECORD_SCHEMAS)) r.register(t, s as z.ZodType);
  for (const [t, s] of Object.entries(GATE_EVENT_SCHEMAS)) r.register(t, s);
  for (const [t, s] of Object.entries(SHADOW_EVENT_SCHEMAS)) r.register(t, s);
  for (const [t, s] of Object.entries(SYSTEM_TYPES)) r.register(t, s);
  return r;
}

/** The process-wide registry used when a journal or verifier is given none. */
export const defaultEventTypes: EventTypeRegistry = builtinEventTypes();

/** Registers an extension type in the process-wide registry. */
export function registerEventType(type: string, schema: z.ZodType): void {
  defaultEventTypes.register(type, schema);
}
