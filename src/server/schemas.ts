// Wire schemas of the HTTP API: request bodies and query strings are parsed with these
// at the edge (strict: unknown members are refused), and the OpenAPI document is
// generated from the same schemas, so the documentation cannot drift from the parser.
import { z } from "zod";
import { DECISIONS, GateRequest, ID_MAX_LENGTH, ID_PATTERN, TaintLabel } from "../contracts/index.js";

/** The one id grammar (src/contracts/ids.ts): printable ASCII without space, 1..128 characters. */
export const IdString = z
  .string()
  .max(ID_MAX_LENGTH)
  .regex(ID_PATTERN, "ids are printable ASCII without space, 1..128 characters");

/**
 * POST /v1/execute and /v1/decide: a Gate request whose principal comes from the
 * credential. For a contract-named call, toolClass and action come from the contract
 * (http → http/<method>, exec → shell/exec); stating different ones is refused. The
 * verified agent identity comes from an AgentPin credential, never from the body.
 */
export const CallBody = GateRequest.omit({ identity: true })
  .extend({
    /** A run the runtime created for this principal (POST /v1/runs); anything else is 404 ERR_RUN_UNKNOWN. */
    runId: IdString,
    /** Optional; when present it must name the authenticated principal (else 403). */
    principalId: GateRequest.shape.principalId.optional(),
    toolClass: GateRequest.shape.toolClass.optional(),
    action: GateRequest.shape.action.optional(),
  })
  .strict();
export type CallBody = z.infer<typeof CallBody>;

export const ApprovalDecisionBody = z
  .strictObject({
    outcome: z.enum(["approve", "deny", "modify"]),
    justification: z.string().min(10).max(4096),
    /** Rewritten parameters (modify only); validated against the tool contract again. */
    parameters: z.record(z.string().max(256), z.json()).optional(),
    /** The approver's own signature over the decision (required when approver keys are configured). */
    signature: z
      .strictObject({
        decisionId: z.string().min(1).max(128),
        keyId: z.string().min(1).max(128),
        sig: z.string().min(1).max(256),
        time: z.string().min(1).max(64),
      })
      .optional(),
  })
  .refine((b) => (b.outcome === "modify") === (b.parameters !== undefined), {
    message: "parameters are required for modify and allowed only for modify",
    path: ["parameters"],
  });
export type ApprovalDecisionBody = z.infer<typeof ApprovalDecisionBody>;

const Rfc3339 = z.iso.datetime({ offset: true });

export const JournalQueryString = z.strictObject({
  run_id: z.string().min(1).max(256).optional(),
  type: z.string().min(1).max(128).optional(),
  since: Rfc3339.optional(),
  until: Rfc3339.optional(),
  decision: z.enum(DECISIONS).optional(),
  order: z.enum(["asc", "desc"]).default("asc"),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export type JournalQueryString = z.infer<typeof JournalQueryString>;

export const VerifyBody = z.strictObject({
  /** A signed head (from GET /v1/journal/head, kept elsewhere) the journal must still reach. */
  expectHead: z.record(z.string(), z.json()).optional(),
});

export const RunIdParam = z.strictObject({ id: IdString });
export const ApprovalIdParam = z.strictObject({ id: IdString });

/** POST /v1/runs: a new run for the authenticated principal, optionally carrying a parent's taint. */
export const RunCreateBody = z.strictObject({
  /** One of the principal's own runs (open or ended) whose taint the new run inherits. */
  parentRun: IdString.optional(),
  /**
   * The user's request the run works for: the trusted origin of flow control (values found in
   * it are the user's, docs/threat-model.md#flow-control). Pinned for the run's life.
   */
  originalRequest: z.string().max(1_000_000).optional(),
});
/** POST /v1/runs/clean: an operator starts a run of `principalId` without the taint carried at the principal. */
export const RunCleanBody = z.strictObject({
  principalId: IdString,
});
export const RunCreateResponse = z.object({
  runId: z.string(),
  principalId: z.string(),
  parentRun: z.string().optional(),
});

// ---------------------------------------------------------------------------------
// Responses (documentation; the server builds them from the Gate's values)

const MatchedRuleView = z.object({
  id: z.string(),
  source: z.string(),
  decision: z.string(),
  reason: z.string().optional(),
});

export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const DecideResponse = z.object({
  decisionId: z.string().nullable(),
  decision: z.enum(DECISIONS),
  policyDecision: z.enum(DECISIONS),
  reasonCodes: z.array(z.string()),
  matchedRules: z.array(MatchedRuleView),
  obligations: z.array(z.record(z.string(), z.unknown())),
  parameters: z.record(z.string(), z.unknown()),
  originalParameters: z.record(z.string(), z.unknown()).optional(),
  changes: z.array(z.record(z.string(), z.unknown())).optional(),
  stepUp: z.object({ approverRole: z.string(), timeoutMs: z.number() }).optional(),
  defer: z.object({ timeoutMs: z.number() }).optional(),
  taint: z.array(TaintLabel),
  journalSeqs: z.array(z.number().int()),
  /** Distributed mode, one chain per replica: the chain `journalSeqs` belong to. */
  journalChain: z.string().optional(),
  policyBundleHash: z.string().optional(),
});

export const ExecutionView = z.union([
  z.object({
    ok: z.literal(true),
    /** The output parsed and validated against the contract's output schema. */
    output: z.unknown(),
    outputHash: z.string().nullable(),
    durationMs: z.number(),
    exitCode: z.number().nullable().optional(),
    httpStatus: z.number().nullable().optional(),
  }),
  z.object({
    ok: z.literal(false),
    code: z.string(),
    message: z.string(),
    status: z.string().optional(),
    exitCode: z.number().nullable().optional(),
    httpStatus: z.number().nullable().optional(),
  }),
]);

export const ExecuteResponse = DecideResponse.extend({
  decision: z.enum(["allow", "modify", "deny"]),
  approval: z
    .object({ outcome: z.string(), approver: z.string().optional(), hitlId: z.string().optional() })
    .optional(),
  /** Present when the call was executed (allow / modify). */
  result: ExecutionView.optional(),
  /** Present when it was not. */
  denial: z.object({ reasonCodes: z.array(z.string()), message: z.string() }).optional(),
  /** The evidence envelope id of the execution (journaled as warden.executor.evidence). */
  evidenceId: z.string().nullable(),
});

const BudgetView = z.object({ used: z.number(), limit: z.number(), remaining: z.number() });

export const RunStateResponse = z.object({
  runId: z.string(),
  principalId: z.string(),
  quarantined: z.boolean(),
  quarantineReason: z.string().optional(),
  counters: z.record(z.string(), z.number()),
  perToolCalls: z.record(z.string(), z.number()),
  budgets: z.record(z.string(), BudgetView),
  taintSeen: z.array(z.string()),
  /** Taint sources carried in at the start (from a parent run or the principal's runs). */
  inheritedTaint: z.array(z.string()).optional(),
  /** The principal's runs the carried taint came from (`taint.carry: principal`). */
  inheritedFrom: z.array(z.string()).optional(),
  /**
   * The run's value provenance went into merged mode at this output (session sequence number):
   * the run reached `provenance.maxOutputs` outputs; later ones fail closed as one record.
   */
  provenanceMergedFrom: z.number().int().optional(),
  dataClassificationsSeen: z.array(z.string()),
});

/**
 * A pending item as an approver sees it: the structured action only. The model's
 * rationale and the original request are never part of it (they can carry injected
 * instructions aimed at the approver); the journal keeps the rationale's hash.
 */
export const PendingItem = z.strictObject({
  id: z.string(),
  kind: z.enum(["step_up", "defer"]),
  decisionId: z.string(),
  runId: z.string(),
  principalId: z.string().optional(),
  approverRole: z.string(),
  action: z
    .strictObject({
      toolClass: z.string(),
      action: z.string(),
      tool: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()),
      taintLabels: z.array(TaintLabel),
    })
    .optional(),
  /** The contract: name, risk tier, category (step-up); tool class/action/name (defer). */
  tool: z.record(z.string(), z.unknown()).optional(),
  reasonCodes: z.array(z.string()).optional(),
  matchedRules: z.array(z.string()).optional(),
  createdAt: z.string(),
  expiresAt: z.string(),
});

export const ApprovalListResponse = z.object({ pending: z.array(PendingItem) });
export const ApprovalDecideResponse = z.object({ ok: z.literal(true), id: z.string(), outcome: z.string() });

export const JournalEntryView = z.object({
  seq: z.number().int(),
  time: z.string(),
  type: z.string(),
  run_id: z.string().nullable(),
  trace_id: z.string().nullable(),
  body: z.record(z.string(), z.unknown()),
  prev_hash: z.string(),
  hash: z.string(),
  key_id: z.string(),
  signature: z.string(),
});
export const JournalListResponse = z.object({ entries: z.array(JournalEntryView) });
export const JournalHeadResponse = z.object({
  head: z.object({ seq: z.number(), hash: z.string(), time: z.string(), key_id: z.string() }).nullable(),
  signed: z.record(z.string(), z.unknown()).nullable(),
  publicKey: z.record(z.string(), z.unknown()),
});
export const VerifyResponse = z.record(z.string(), z.unknown());
export const HealthResponse = z.object({ status: z.string() });
