// LedgerEvent (DARE "Control Plane Contracts"; GATE audit_ledger_event.schema.json):
// one hash-chained, signed entry of the audit ledger. event_hash is computed over
// the GATE-namespace form so that the DARE and GATE renderings of one event share
// one hash (and one signature), and a GATE verifier can recompute it.
import { z } from "zod";
import { type Sha256Hash, sha256Of } from "../canonical-json.js";
import { uuidv7 } from "../ids.js";
import {
  addWardenIssue,
  checkBuilt,
  EnvironmentSchema,
  hashOrIssue,
  type Namespace,
  NonEmptyString,
  nowTimestamp,
  SCHEMA_VERSION,
  SchemaVersionSchema,
  Sha256HashSchema,
  SignatureTextSchema,
  TimestampSchema,
  TraceIdSchema,
  UuidSchema,
} from "./common.js";

/** GATE's retention classes. */
export const GATE_RETENTION_CLASSES = [
  "sandbox_hot_30d",
  "prod_hot_365d",
  "prod_cold_6y_worm",
  "regulated_cold_7y_plus",
] as const;

/**
 * The DARE text's example value, which GATE's enum does not have. It means the
 * bounded (production) tier kept hot for 365 days, i.e. GATE's prod_hot_365d,
 * and is exported as that (the one lossy field of the namespace mapping).
 */
export const DARE_RETENTION_ALIASES = { tier_bounded_365d: "prod_hot_365d" } as const;

export const GENESIS = "GENESIS";

export const SignatureAlgorithmSchema = z.enum(["ES256", "ES384", "RS256", "EdDSA"]);
export type SignatureAlgorithm = z.infer<typeof SignatureAlgorithmSchema>;

export const LedgerActionTypeSchema = z.enum([
  "tool.invoke",
  "memory.read",
  "memory.write",
  "hitl.decision",
  "breaker.trigger",
  "agent.lifecycle",
]);

export const GateRetentionClassSchema = z.enum(GATE_RETENTION_CLASSES);
export const DareRetentionClassSchema = z.enum([...GATE_RETENTION_CLASSES, "tier_bounded_365d"]);

function ledgerEventShape<N extends Namespace, R extends z.ZodType<string>>(ns: N, retention: R) {
  return z.strictObject({
    schema_version: SchemaVersionSchema,
    event_type: z.literal(`${ns}.ledger.event` as const),
    time: TimestampSchema,
    ledger_event_id: UuidSchema,
    run_id: UuidSchema,
    trace_id: TraceIdSchema.optional(),
    tenant_id: NonEmptyString,
    environment: EnvironmentSchema,
    sequence_number: z.int().min(0).optional(),
    governed_action: z
      .strictObject({
        action_type: LedgerActionTypeSchema.optional(),
        tool_name: NonEmptyString.optional(),
        agent_instance_id: NonEmptyString.optional(),
      })
      .optional(),
    references: z.strictObject({
      trace_id: TraceIdSchema,
      policy_decision_id: UuidSchema,
      tool_request_hash: Sha256HashSchema.optional(),
      tool_response_hash: Sha256HashSchema.optional(),
      replay_trace_step_id: NonEmptyString.optional(),
      hitl_approval_id: UuidSchema.optional(),
      invariant_bundle_hash: Sha256HashSchema.optional(),
    }),
    hash_chain: z
      .strictObject({
        prev_event_hash: z.union([Sha256HashSchema, z.literal(GENESIS)]),
        event_hash: Sha256HashSchema,
      })
      .meta({
        description:
          "event_hash: sha256 of the canonical JSON of the gate-namespace form of the event without hash_chain.event_hash and signatures.",
      }),
    signatures: z.strictObject({
      signing_key_id: NonEmptyString,
      algorithm: SignatureAlgorithmSchema.optional(),
      signature: SignatureTextSchema,
      timestamp_authority: NonEmptyString.optional(),
    }),
    immutability: z.strictObject({
      sink_uri: NonEmptyString,
      retention_class: retention,
      committed_at: TimestampSchema.optional(),
    }),
  });
}

const dareShape = () => ledgerEventShape("dare", DareRetentionClassSchema);
const gateShape = () => ledgerEventShape("gate", GateRetentionClassSchema);
type LedgerShape<N extends Namespace> = z.infer<
  N extends "dare" ? ReturnType<typeof dareShape> : ReturnType<typeof gateShape>
>;

/** Map a dare-namespace ledger event to its gate form (the form the hash covers). */
export function ledgerEventToGate(event: LedgerShape<"dare">): LedgerShape<"gate"> {
  const rc = event.immutability.retention_class;
  const retention_class = rc === "tier_bounded_365d" ? DARE_RETENTION_ALIASES[rc] : rc;
  return {
    ...structuredClone(event),
    event_type: "gate.ledger.event",
    immutability: { ...structuredClone(event.immutability), retention_class },
  };
}

/**
 * GATE: "SHA256 of this event in canonical JSON (excluding the event_hash field
 * and the signatures block)", taken over the gate-namespace form.
 */
export function ledgerEventHash(event: LedgerShape<"dare"> | LedgerShape<"gate">): Sha256Hash {
  return sha256Of(ledgerHashInput(event));
}

function ledgerHashInput(event: LedgerShape<"dare"> | LedgerShape<"gate">): unknown {
  const gate =
    event.event_type === "dare.ledger.event" ? ledgerEventToGate(event) : (event as LedgerShape<"gate">);
  const { signatures: _signatures, hash_chain, ...rest } = gate;
  return { ...rest, hash_chain: { prev_event_hash: hash_chain.prev_event_hash } };
}

/** The bytes a ledger signature covers: the UTF-8 text of event_hash ("sha256:<hex>"). */
export function ledgerSigningInput(eventHash: Sha256Hash): Uint8Array {
  return new TextEncoder().encode(eventHash);
}

function checkEventHash(v: LedgerShape<"dare"> | LedgerShape<"gate">, ctx: z.core.$RefinementCtx): void {
  const expected = hashOrIssue(ledgerHashInput(v), ctx, []);
  if (expected !== undefined && expected !== v.hash_chain.event_hash) {
    addWardenIssue(ctx, "ERR_CONTRACT_HASH_MISMATCH", "event_hash does not match the event", [
      "hash_chain",
      "event_hash",
    ]);
  }
}

const LEDGER_META = { title: "LedgerEvent", description: "One hash-chained, signed audit ledger entry." };

export const LedgerEventSchema = dareShape().superRefine(checkEventHash).meta(LEDGER_META);
export const GateLedgerEventSchema = gateShape().superRefine(checkEventHash).meta(LEDGER_META);
export type LedgerEvent = z.infer<typeof LedgerEventSchema>;
export type GateLedgerEvent = z.infer<typeof GateLedgerEventSchema>;
export type RetentionClass = LedgerEvent["immutability"]["retention_class"];

export interface LedgerSigner {
  signing_key_id: string;
  algorithm?: SignatureAlgorithm;
  /** Signs ledgerSigningInput(event_hash); returns base64url. Synchronous by design. */
  sign(message: Uint8Array): string;
}

export type BuildLedgerEventInput = Omit<
  LedgerEvent,
  "schema_version" | "event_type" | "time" | "ledger_event_id" | "hash_chain" | "signatures"
> & {
  time?: string | undefined;
  ledger_event_id?: string | undefined;
  /** Hash of the previous event in the partition, or "GENESIS". */
  prev_event_hash: Sha256Hash | typeof GENESIS;
  signer: LedgerSigner;
};

const LEDGER_FIXED = { schema_version: SCHEMA_VERSION, event_type: "dare.ledger.event" } as const;

/** Build, seal (event_hash) and sign a dare.ledger.event. Throws on invalid input. */
export function buildLedgerEvent(input: BuildLedgerEventInput): LedgerEvent {
  const { time, ledger_event_id, prev_event_hash, signer, ...rest } = input;
  const unsealed = {
    ...LEDGER_FIXED,
    time: time ?? nowTimestamp(),
    ledger_event_id: ledger_event_id ?? uuidv7(),
    ...rest,
    ...LEDGER_FIXED, // after rest: a caller cannot override them
    hash_chain: { prev_event_hash, event_hash: "" as Sha256Hash },
    signatures: { signing_key_id: signer.signing_key_id, signature: "" },
  };
  const event_hash = ledgerEventHash(unsealed);
  return checkBuilt(LedgerEventSchema, {
    ...unsealed,
    hash_chain: { prev_event_hash, event_hash },
    signatures: {
      signing_key_id: signer.signing_key_id,
      ...(signer.algorithm !== undefined ? { algorithm: signer.algorithm } : {}),
      signature: signer.sign(ledgerSigningInput(event_hash)),
    },
  });
}
