// The record registry: type names (dare.tool.request, gate.ledger.event, ...) to
// schemas, parseRecord for callers that know the kind, and the dare <-> gate
// namespace mapping. A journal validates a body by type via recordSchemaFor.
import type { z } from "zod";
import { ContractError, WardenError } from "../errors.js";
import { parseStrictJson, type StrictJsonOptions } from "../strict-json.js";
import {
  type AgentMessageEnvelope,
  AgentMessageEnvelopeSchema,
  type GateAgentMessageEnvelope,
  GateAgentMessageEnvelopeSchema,
} from "./agent-message.js";
import { type Namespace, type RecordParseResult, safeParseRecord } from "./common.js";
import {
  type GateHITLDecisionRecord,
  GateHITLDecisionRecordSchema,
  type HITLDecisionRecord,
  HITLDecisionRecordSchema,
} from "./hitl-decision.js";
import {
  DARE_RETENTION_ALIASES,
  type GateLedgerEvent,
  GateLedgerEventSchema,
  type LedgerEvent,
  LedgerEventSchema,
} from "./ledger-event.js";
import {
  type GatePolicyDecisionRecord,
  GatePolicyDecisionRecordSchema,
  type PolicyDecisionRecord,
  PolicyDecisionRecordSchema,
} from "./policy-decision.js";
import {
  type GateReplayTrace,
  GateReplayTraceSchema,
  type ReplayTrace,
  ReplayTraceSchema,
} from "./replay-trace.js";
import {
  type GateToolRequestEnvelope,
  GateToolRequestEnvelopeSchema,
  type GateToolResponseEnvelope,
  GateToolResponseEnvelopeSchema,
  type ToolRequestEnvelope,
  ToolRequestEnvelopeSchema,
  type ToolResponseEnvelope,
  ToolResponseEnvelopeSchema,
} from "./tool.js";

/** Record kinds, and the type name suffix each one has in both namespaces. */
export const RECORD_KINDS = {
  tool_request: "tool.request",
  tool_response: "tool.response",
  policy_decision: "policy.decision",
  ledger_event: "ledger.event",
  agent_message: "agent.message",
  replay_trace: "replay.trace",
  hitl_decision: "hitl.decision",
} as const;
export type RecordKind = keyof typeof RECORD_KINDS;

/** Kinds whose wire form carries event_type; the other two are typed by the registry only. */
export const KINDS_WITH_EVENT_TYPE: readonly RecordKind[] = [
  "tool_request",
  "tool_response",
  "policy_decision",
  "ledger_event",
  "agent_message",
];

export interface DareRecordMap {
  tool_request: ToolRequestEnvelope;
  tool_response: ToolResponseEnvelope;
  policy_decision: PolicyDecisionRecord;
  ledger_event: LedgerEvent;
  agent_message: AgentMessageEnvelope;
  replay_trace: ReplayTrace;
  hitl_decision: HITLDecisionRecord;
}

export interface GateRecordMap {
  tool_request: GateToolRequestEnvelope;
  tool_response: GateToolResponseEnvelope;
  policy_decision: GatePolicyDecisionRecord;
  ledger_event: GateLedgerEvent;
  agent_message: GateAgentMessageEnvelope;
  replay_trace: GateReplayTrace;
  hitl_decision: GateHITLDecisionRecord;
}

export type DareRecord = DareRecordMap[RecordKind];
export type GateRecord = GateRecordMap[RecordKind];
export type AnyRecord = DareRecord | GateRecord;

export type RecordType = `${Namespace}.${(typeof RECORD_KINDS)[RecordKind]}`;

const DARE_SCHEMAS: { [K in RecordKind]: z.ZodType<DareRecordMap[K]> } = {
  tool_request: ToolRequestEnvelopeSchema,
  tool_response: ToolResponseEnvelopeSchema,
  policy_decision: PolicyDecisionRecordSchema,
  ledger_event: LedgerEventSchema,
  agent_message: AgentMessageEnvelopeSchema,
  replay_trace: ReplayTraceSchema,
  hitl_decision: HITLDecisionRecordSchema,
};

const GATE_SCHEMAS: { [K in RecordKind]: z.ZodType<GateRecordMap[K]> } = {
  tool_request: GateToolRequestEnvelopeSchema,
  tool_response: GateToolResponseEnvelopeSchema,
  policy_decision: GatePolicyDecisionRecordSchema,
  ledger_event: GateLedgerEventSchema,
  agent_message: GateAgentMessageEnvelopeSchema,
  replay_trace: GateReplayTraceSchema,
  hitl_decision: GateHITLDecisionRecordSchema,
};

function isKind(kind: unknown): kind is RecordKind {
  return typeof kind === "string" && Object.hasOwn(RECORD_KINDS, kind);
}

/** The registry type name of a kind in a namespace, e.g. ("tool_request", "gate") -> "gate.tool.request". */
export function recordTypeOf(kind: RecordKind, ns: Namespace = "dare"): RecordType {
  return `${ns}.${RECORD_KINDS[kind]}`;
}

/** Every registered type name with its schema, both namespaces. */
export const RECORD_SCHEMAS: Readonly<Record<RecordType, z.ZodType<AnyRecord>>> = Object.freeze(
  Object.fromEntries(
    (Object.keys(RECORD_KINDS) as RecordKind[]).flatMap((k) => [
      [recordTypeOf(k, "dare"), DARE_SCHEMAS[k]],
      [recordTypeOf(k, "gate"), GATE_SCHEMAS[k]],
    ]),
  ) as Record<RecordType, z.ZodType<AnyRecord>>,
);

/** Split a type name into kind and namespace; undefined when it is not registered. */
export function recordKindOf(type: string): { kind: RecordKind; namespace: Namespace } | undefined {
  if (!Object.hasOwn(RECORD_SCHEMAS, type)) return undefined;
  const dot = type.indexOf(".");
  const namespace = type.slice(0, dot) as Namespace;
  const suffix = type.slice(dot + 1);
  const kind = (Object.keys(RECORD_KINDS) as RecordKind[]).find((k) => RECORD_KINDS[k] === suffix);
  return kind === undefined ? undefined : { kind, namespace };
}

/** The schema for a registered type name, or undefined for an unknown name. */
export function recordSchemaFor(type: string): z.ZodType<AnyRecord> | undefined {
  return Object.hasOwn(RECORD_SCHEMAS, type) ? RECORD_SCHEMAS[type as RecordType] : undefined;
}

type Failure = Extract<RecordParseResult<unknown>, { ok: false }>;

function failure(code: Failure["code"], message: string, path: (string | number)[] = []): Failure {
  return { ok: false, code, message, issues: [{ path, message, code }] };
}

/**
 * Checks that only make sense before field-level validation: the namespace and
 * record type named by event_type, so that a gate.* record handed to the dare
 * parser says "wrong namespace" rather than "invalid literal".
 */
function precheck(kind: RecordKind, ns: Namespace, value: unknown): Failure | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return failure("ERR_CONTRACT_RECORD_INVALID", "a record must be a JSON object");
  }
  if (!KINDS_WITH_EVENT_TYPE.includes(kind)) return undefined;
  const eventType = (value as { event_type?: unknown }).event_type;
  if (typeof eventType !== "string") return undefined;
  const expected = recordTypeOf(kind, ns);
  if (eventType === expected) return undefined;
  const other = ns === "dare" ? "gate" : "dare";
  if (eventType === recordTypeOf(kind, other)) {
    return failure(
      "ERR_CONTRACT_NAMESPACE",
      `event_type ${eventType} is in the ${other} namespace; expected ${expected}`,
      ["event_type"],
    );
  }
  return failure("ERR_CONTRACT_RECORD_TYPE", `event_type must be ${expected}`, ["event_type"]);
}

function parseIn<K extends RecordKind, T>(
  kind: K,
  ns: Namespace,
  schema: z.ZodType<T>,
  value: unknown,
): RecordParseResult<T> {
  return precheck(kind, ns, value) ?? safeParseRecord(schema, value);
}

function assertKind(kind: unknown): asserts kind is RecordKind {
  if (!isKind(kind)) throw new ContractError("ERR_CONTRACT_RECORD_TYPE", "unknown record kind");
}

/** Parse a dare-namespace record of a known kind. Invalid records are values; only an unknown kind throws. */
export function parseRecord<K extends RecordKind>(
  kind: K,
  value: unknown,
): RecordParseResult<DareRecordMap[K]> {
  assertKind(kind);
  return parseIn(kind, "dare", DARE_SCHEMAS[kind], value);
}

/** Parse a gate-namespace record of a known kind (a record from a GATE implementation). */
export function parseGateRecord<K extends RecordKind>(
  kind: K,
  value: unknown,
): RecordParseResult<GateRecordMap[K]> {
  assertKind(kind);
  return parseIn(kind, "gate", GATE_SCHEMAS[kind], value);
}

/** Parse a record by registry type name (as a journal stores it); an unknown name is ERR_CONTRACT_RECORD_TYPE. */
export function parseRecordOfType(type: string, value: unknown): RecordParseResult<AnyRecord> {
  const found = recordKindOf(type);
  if (found === undefined) return failure("ERR_CONTRACT_RECORD_TYPE", "unknown record type");
  const schema = found.namespace === "dare" ? DARE_SCHEMAS[found.kind] : GATE_SCHEMAS[found.kind];
  return parseIn(found.kind, found.namespace, schema as z.ZodType<AnyRecord>, value);
}

/**
 * Parse a dare-namespace record from JSON text with the strict parser
 * (duplicate keys, __proto__, lone surrogates, depth and size are refused with
 * their ERR_JSON_* / ERR_CANON_* codes).
 */
export function parseRecordJson<K extends RecordKind>(
  kind: K,
  text: string,
  options?: StrictJsonOptions,
): RecordParseResult<DareRecordMap[K]> {
  assertKind(kind);
  let value: unknown;
  try {
    value = parseStrictJson(text, options);
  } catch (err) {
    if (err instanceof WardenError) return failure(err.code, err.message);
    throw err;
  }
  return parseRecord(kind, value);
}

/** The gate form of a dare record (GateOf<DareRecordMap[K]> = GateRecordMap[K]). */
export type GateOf<R> = R extends ToolRequestEnvelope
  ? GateToolRequestEnvelope
  : R extends ToolResponseEnvelope
    ? GateToolResponseEnvelope
    : R extends PolicyDecisionRecord
      ? GatePolicyDecisionRecord
      : R extends LedgerEvent
        ? GateLedgerEvent
        : R extends AgentMessageEnvelope
          ? GateAgentMessageEnvelope
          : R;

/** The dare form of a gate record. */
export type DareOf<R> = R extends GateToolRequestEnvelope
  ? ToolRequestEnvelope
  : R extends GateToolResponseEnvelope
    ? ToolResponseEnvelope
    : R extends GatePolicyDecisionRecord
      ? PolicyDecisionRecord
      : R extends GateLedgerEvent
        ? LedgerEvent
        : R extends GateAgentMessageEnvelope
          ? AgentMessageEnvelope
          : R;

function renamespace(record: object, from: Namespace, to: Namespace): Record<string, unknown> {
  const copy = structuredClone(record) as Record<string, unknown>;
  const eventType = copy.event_type;
  if (eventType === undefined) return copy; // ReplayTrace, HITLDecisionRecord: no field differs
  if (typeof eventType !== "string" || !eventType.startsWith(`${from}.`)) {
    throw new ContractError("ERR_CONTRACT_NAMESPACE", `expected a ${from}.* record`);
  }
  copy.event_type = `${to}.${eventType.slice(from.length + 1)}`;
  return copy;
}

/**
 * Export a dare record in the gate namespace: event_type dare.* -> gate.*, and a
 * ledger event's DARE-only retention class tier_bounded_365d -> prod_hot_365d.
 * Nothing else differs. A record that is not in the dare namespace is misuse.
 */
export function toGateNamespace<R extends DareRecord>(record: R): GateOf<R> {
  const copy = renamespace(record, "dare", "gate");
  if (copy.event_type === "gate.ledger.event") {
    const imm = copy.immutability as { retention_class: string };
    if (Object.hasOwn(DARE_RETENTION_ALIASES, imm.retention_class)) {
      imm.retention_class =
        DARE_RETENTION_ALIASES[imm.retention_class as keyof typeof DARE_RETENTION_ALIASES];
    }
  }
  return copy as GateOf<R>;
}

/** Import a gate record into the dare namespace: event_type gate.* -> dare.*. */
export function fromGateNamespace<R extends GateRecord>(record: R): DareOf<R> {
  return renamespace(record, "gate", "dare") as DareOf<R>;
}
