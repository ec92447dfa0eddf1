// The journal event types the composition root writes itself: one entry per contract
// manifest loaded or refused at start-up (bodies defined by src/tools), and one per run
// evicted for idleness. They are registered once with the journal's default registry,
// so the verifier checks their bodies like any other entry's.
import { z } from "zod";
import type { EvictedRun } from "../context/index.js";
import { isoTime } from "../contracts/index.js";
import type { EventTypeRegistry, Journal } from "../journal/index.js";
import {
  CONTRACT_LOADED_EVENT,
  CONTRACT_REFUSED_EVENT,
  type ContractLoadEvent,
  ContractLoadedBodySchema,
  ContractRefusedBodySchema,
  contractEventType,
} from "../tools/index.js";
import {
  AGENTPIN_PIN_REFUSED_EVENT,
  AGENTPIN_PINNED_EVENT,
  AgentPinPinnedBodySchema,
  AgentPinPinRefusedBodySchema,
} from "./agentpin.js";
import { CAPABILITY_GRANTED_EVENT, CapabilityGrantedBodySchema } from "./capabilities.js";
import {
  DELEGATION_ACCEPTED_EVENT,
  DELEGATION_REFUSED_EVENT,
  DelegationAcceptedBodySchema,
  DelegationRefusedBodySchema,
} from "./delegation.js";
import { PRINCIPAL_LIFT_EVENT, PrincipalLiftBodySchema } from "./principal-lift.js";
import {
  RUN_CLEAN_STARTED_EVENT,
  RUN_TAINT_INHERITED_EVENT,
  RunCleanStartedBodySchema,
  RunTaintInheritedBodySchema,
} from "./run-taint.js";

export const RUN_EVICTED_EVENT = "warden.run.evicted";

const Time = z.string().min(1).max(64);

/** A run dropped for idleness: its owner, when it was last active, when it was evicted. */
export const RunEvictedBodySchema = z.strictObject({
  run_id: z.string().min(1).max(256),
  principal_id: z.string().min(1).max(256),
  last_active: Time,
  evicted_at: Time,
});

export const RUN_ADOPTED_EVENT = "warden.run.adopted";

/**
 * Distributed mode: a run taken over from a replica whose lease expired, with what was
 * rebuilt from its journal (calls that may have run, denials, taint labels carried in).
 */
export const RunAdoptedBodySchema = z.strictObject({
  run_id: z.string().min(1).max(256),
  principal_id: z.string().min(1).max(256),
  from_node: z.string().min(1).max(256),
  node: z.string().min(1).max(256),
  admitted: z.number().int().min(0),
  denied: z.number().int().min(0),
  taint_labels: z.number().int().min(0),
});

export const EXECUTE_REPLAYED_EVENT = "warden.execute.replayed";

/**
 * A /v1/execute retry answered with its Idempotency-Key's stored outcome (nothing decided or
 * executed again): the key (hashed), the first attempt's decision and status, where answered.
 */
export const ExecuteReplayedBodySchema = z.strictObject({
  run_id: z.string().min(1).max(256).nullable(),
  principal_id: z.string().min(1).max(256),
  key_sha256: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  decision_id: z.string().min(1).max(256).nullable(),
  status: z.number().int().min(100).max(599),
  /** The route replayed ("POST /v1/execute", "POST /v1/decide", "POST /v1/messages"; absent before issue 36's second part: /v1/execute). */
  route: z.string().min(1).max(64).optional(),
});

const RUNTIME_EVENT_TYPES: Record<string, z.ZodType> = {
  [CAPABILITY_GRANTED_EVENT]: CapabilityGrantedBodySchema,
  [DELEGATION_ACCEPTED_EVENT]: DelegationAcceptedBodySchema,
  [DELEGATION_REFUSED_EVENT]: DelegationRefusedBodySchema,
  [AGENTPIN_PINNED_EVENT]: AgentPinPinnedBodySchema,
  [AGENTPIN_PIN_REFUSED_EVENT]: AgentPinPinRefusedBodySchema,
  [CONTRACT_LOADED_EVENT]: ContractLoadedBodySchema,
  [CONTRACT_REFUSED_EVENT]: ContractRefusedBodySchema,
  [RUN_EVICTED_EVENT]: RunEvictedBodySchema,
  [RUN_ADOPTED_EVENT]: RunAdoptedBodySchema,
  [RUN_TAINT_INHERITED_EVENT]: RunTaintInheritedBodySchema,
  [RUN_CLEAN_STARTED_EVENT]: RunCleanStartedBodySchema,
  [EXECUTE_REPLAYED_EVENT]: ExecuteReplayedBodySchema,
  [PRINCIPAL_LIFT_EVENT]: PrincipalLiftBodySchema,
};

/** Registers the runtime's event types (idempotent: a type already registered is kept). */
export function registerRuntimeEventTypes(registry: Pick<EventTypeRegistry, "has" | "register">): void {
  for (const [type, schema] of Object.entries(RUNTIME_EVENT_TYPES)) {
    if (!registry.has(type)) registry.register(type, schema);
  }
}

/** Appends one entry per contract load event, in order; resolves when all are durable. */
export async function journalContractEvents(
  journal: Pick<Journal, "append">,
  events: readonly ContractLoadEvent[],
): Promise<void> {
  await Promise.all(events.map((e) => journal.append({ type: contractEventType(e), body: { ...e } })));
}

/** The body of a `warden.run.evicted` entry. */
export function evictedBody(run: EvictedRun): z.infer<typeof RunEvictedBodySchema> {
  return {
    run_id: run.runId,
    principal_id: run.principalId,
    last_active: isoTime(run.lastActive),
    evicted_at: isoTime(run.at),
  };
}
