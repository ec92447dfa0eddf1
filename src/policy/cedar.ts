// The Cedar backend (@cedar-policy/cedar-wasm). Policies are validated in strict mode
// against Warden's Cedar schema at load (OATS E7) and preparsed once; each call maps the
// policy input onto Cedar's principal / action / resource / context (docs/policy.md has
// the mapping). Cedar only permits or forbids: a satisfied permit is an allow unless its
// @decision annotation asks for step_up / defer / modify; a satisfied forbid is a deny;
// nothing satisfied means Cedar abstains (and the bundle's default deny applies). A
// policy whose evaluation errors (e.g. a numeric comparison on a parameter that is not
// an integer) denies with CEDAR_EVALUATION_ERROR.
import { createRequire } from "node:module";
import type * as Cedar from "@cedar-policy/cedar-wasm/nodejs";
import { type Decision, PolicyError, sha256Hex } from "../contracts/index.js";
import { TRUST_CONFIDENCE_LEVELS } from "./apae-match.js";
import { DEFAULT_DEFER_TIMEOUT_MS, DEFAULT_STEP_UP } from "./combine.js";
import type { EvalContext } from "./eval-context.js";
import type { RuleOutcome } from "./types.js";
import { ModifyPayload } from "./yaml-schema.js";

// cedar-wasm (a WebAssembly module of several MB) is loaded on first use, i.e. only when a
// Cedar policy is configured: importing the policy layer, or a YAML-only deployment, never
// loads it. Its Node build is CommonJS, so a synchronous require keeps compilation sync.
let cedarModule: typeof Cedar | undefined;
function wasm(): typeof Cedar {
  cedarModule ??= createRequire(import.meta.url)("@cedar-policy/cedar-wasm/nodejs") as typeof Cedar;
  return cedarModule;
}

/** Built-in `toolClass:action` pairs declared as Cedar actions, with their action group. */
export const CEDAR_BUILTIN_ACTIONS: Readonly<Record<string, "read" | "write" | "egress" | "exec">> = {
  "http:get": "read",
  "http:head": "read",
  "http:options": "read",
  "http:post": "egress",
  "http:put": "egress",
  "http:patch": "egress",
  "http:delete": "egress",
  "file:read": "read",
  "file:list": "read",
  "file:write": "write",
  "file:delete": "write",
  "shell:exec": "exec",
  "database:query": "read",
  "database:write": "write",
  "database:exec": "write",
  "database:mutate": "write",
  "retrieval:search": "read",
  "retrieval:fetch": "read",
  "retrieval:query": "read",
  "mcp:call": "exec",
  "memory:read": "read",
  "memory:write": "write",
  "message:send": "egress",
  "delegate:invoke": "exec",
};
export const CEDAR_ACTION_GROUPS = ["read", "write", "egress", "exec"] as const;

const ACTION_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
/**
 * The tag value for a parameter its entity's tag type cannot carry (a non-integer for
 * NumParams, an array / object / null for Params): a record, so `<`, `>`, `like` and
 * arithmetic on it are evaluation errors, which deny. (`==` on it is just false.)
 */
const NOT_EVALUABLE_TAG: Cedar.CedarValueJson = { notEvaluable: true };

/** Warden's Cedar schema (namespace `Warden`) with the built-in actions plus `extraActions`. */
export function cedarSchemaText(extraActions: readonly string[] = []): string {
  const lines = [
    "// Warden's Cedar schema: the entity and context mapping of a Gate request (docs/policy.md).",
    "namespace Warden {",
    "  entity Role;",
    "  entity Principal in [Role];",
    "  entity Tool;",
    "  // Every top-level parameter: scalars as strings (numbers and booleans stringified);",
    "  // arrays, objects and null carry a value that makes string operations error (deny).",
    "  entity Params tags String;",
    "  // Every top-level parameter: safe integers as Longs; any other value makes numeric",
    "  // operations error (deny). Numeric strings are never converted here.",
    "  entity NumParams tags Long;",
    "  type Counters = {",
    "    proposed: Long, allowed: Long, denied: Long, deferred: Long,",
    "    executed: Long, stepUps: Long, modified: Long,",
    "  };",
    "  // The verified agent identity (AgentPin) and an inter-agent message: YAML's identity: and message:.",
    "  type Identity = { agentId: String, domain: String, capabilities: Set<String> };",
    "  type Message = { from: String, to: String, primitive: String, payloadType: String, depth: Long };",
    "  type RequestContext = {",
    "    principalId: String, runId: String, toolClass: String, action: String, tool?: String,",
    "    riskTier?: String, category?: String, humanApproval: Bool,",
    "    taint: Set<String>, params: Params, numParams: NumParams, paramKeys: Set<String>,",
    "    counters: Counters, classifications: Set<String>, classificationLevel: Long,",
    "    quarantined: Bool, trustScore?: Long, trustConfidence?: Long,",
    "    riskScore?: Long, drift?: Long, cumulativeDrift?: Long,",
    "    capability: Bool, identity?: Identity, message?: Message,",
    "  };",
  ];
  for (const g of CEDAR_ACTION_GROUPS) lines.push(`  action ${JSON.stringify(g)};`);
  const applies = "appliesTo { principal: [Principal], resource: [Tool], context: RequestContext }";
  for (const [a, g] of Object.entries(CEDAR_BUILTIN_ACTIONS)) {
    lines.push(`  action ${JSON.stringify(a)} in [${JSON.stringify(g)}] ${applies};`);
  }
  for (const a of [...new Set(extraActions)].sort()) {
    if (Object.hasOwn(CEDAR_BUILTIN_ACTIONS, a)) continue;
    lines.push(`  action ${JSON.stringify(a)} ${applies};`);
  }
  lines.push("}", "");
  return lines.join("\n");
}

export interface CedarSource {
  name: string;
  text: string;
}

interface CedarPolicyMeta {
  id: string;
  effect: "permit" | "forbid";
  outcome: RuleOutcome;
}

export interface CedarTraceEntry {
  id: string;
  effect: "permit" | "forbid";
  decision: Decision;
  satisfied: boolean;
  errored: boolean;
}

/** A validated, preparsed Cedar policy set. */
export class CedarEngine {
  readonly policyIds: readonly string[];
  /** Policies by id, text as written (used in the bundle hash). */
  readonly policies: Readonly<Record<string, string>>;
  readonly schemaText: string;
  /** Number of policies each source contributed. */
  readonly sourceCounts = new Map<string, number>();
  private readonly meta = new Map<string, CedarPolicyMeta>();
  private readonly setId: string;
  private readonly declaredActions: ReadonlySet<string>;

  constructor(sources: readonly CedarSource[], extraActions: readonly string[] = []) {
    for (const a of extraActions) {
      if (!ACTION_NAME.test(a)) {
        throw new PolicyError(
          "ERR_POLICY_CEDAR_SCHEMA",
          `invalid extra Cedar action name ${JSON.stringify(a)}`,
        );
      }
    }
    this.schemaText = cedarSchemaText(extraActions);
    this.declaredActions = new Set([...Object.keys(CEDAR_BUILTIN_ACTIONS), ...extraActions]);
    const policies: Record<string, string> = {};
    for (const src of sources) {
      const parts = wasm().policySetTextToParts(src.text);
      if (parts.type === "failure") {
        throw new PolicyError("ERR_POLICY_CEDAR_PARSE", `${src.name}: ${errorText(parts.errors)}`);
      }
      if (parts.policy_templates.length > 0) {
        throw new PolicyError("ERR_POLICY_CEDAR_PARSE", `${src.name}: policy templates are not supported`);
      }
      for (const [i, text] of parts.policies.entries()) {
        const json = wasm().policyToJson(text);
        if (json.type === "failure") {
          throw new PolicyError("ERR_POLICY_CEDAR_PARSE", `${src.name}: ${errorText(json.errors)}`);
        }
        const ann = json.json.annotations ?? {};
        const id = ann.id ?? `${src.name}#${i}`;
        if (this.meta.has(id)) {
          throw new PolicyError(
            "ERR_POLICY_DUPLICATE_RULE",
            `${src.name}: Cedar policy id ${id} already defined`,
            {
              details: { ruleId: id },
            },
          );
        }
        this.meta.set(id, {
          id,
          effect: json.json.effect,
          outcome: annotationOutcome(id, json.json.effect, ann, src.name),
        });
        policies[id] = text;
        this.sourceCounts.set(src.name, (this.sourceCounts.get(src.name) ?? 0) + 1);
      }
    }
    const schemaCheck = wasm().checkParseSchema(this.schemaText);
    if (schemaCheck.type === "failure") {
      throw new PolicyError("ERR_POLICY_CEDAR_SCHEMA", `Cedar schema: ${errorText(schemaCheck.errors)}`);
    }
    const validation = wasm().validate({
      schema: this.schemaText,
      policies: { staticPolicies: policies },
      validationSettings: { mode: "strict" },
    });
    if (validation.type === "failure") {
      throw new PolicyError("ERR_POLICY_CEDAR_PARSE", errorText(validation.errors));
    }
    if (validation.validationErrors.length > 0) {
      const msgs = validation.validationErrors.slice(0, 5).map((e) => e.error.message);
      throw new PolicyError("ERR_POLICY_CEDAR_VALIDATION", msgs.join("; "), {
        details: { policyIds: validation.validationErrors.map((e) => e.policyId) },
      });
    }
    this.policies = policies;
    this.policyIds = Object.keys(policies);
    const digest = sha256Hex(Buffer.from(JSON.stringify([this.schemaText, policies]))).slice(0, 32);
    this.setId = `warden-pset-${digest}`;
    const pre = wasm().preparsePolicySet(this.setId, { staticPolicies: policies });
    if (pre.type === "failure") throw new PolicyError("ERR_POLICY_CEDAR_PARSE", errorText(pre.errors));
  }

  /** The Cedar request for a call (exported for docs, tests and the raw-call baseline). */
  request(ctx: EvalContext): Cedar.StatefulAuthorizationCall {
    return buildCedarRequest(ctx, this.setId, this.declaredActions);
  }

  /** Outcomes of every satisfied policy; [] when Cedar abstains. Fails closed on evaluation errors. */
  evaluate(ctx: EvalContext): RuleOutcome[] {
    return this.interpret(wasm().statefulIsAuthorized(this.request(ctx))).outcomes;
  }

  explain(ctx: EvalContext): { outcomes: RuleOutcome[]; trace: CedarTraceEntry[] } {
    return this.interpret(wasm().statefulIsAuthorized(this.request(ctx)));
  }

  private interpret(ans: Cedar.AuthorizationAnswer): { outcomes: RuleOutcome[]; trace: CedarTraceEntry[] } {
    if (ans.type === "failure") {
      return { outcomes: [cedarErrorOutcome("request could not be evaluated")], trace: [] };
    }
    const satisfied = new Set(ans.response.diagnostics.reason);
    const errored = new Set(ans.response.diagnostics.errors.map((e) => e.policyId));
    const outcomes: RuleOutcome[] = [];
    const trace: CedarTraceEntry[] = [];
    for (const [id, m] of this.meta) {
      const sat = satisfied.has(id);
      const err = errored.has(id);
      trace.push({ id, effect: m.effect, decision: m.outcome.rule.decision, satisfied: sat, errored: err });
      if (sat) outcomes.push(m.outcome);
      // Cedar skips a policy whose evaluation errors. A policy that cannot be evaluated
      // denies, permit or forbid: skipping a forbid fails open, and skipping a permit
      // lets a broader later permit decide on a value this one could not read.
      else if (err) outcomes.push(cedarErrorOutcome(`${m.effect} policy ${id} could not be evaluated`, id));
    }
    return { outcomes, trace };
  }
}

function cedarErrorOutcome(reason: string, id = "builtin.cedar-error"): RuleOutcome {
  return {
    rule: { id, source: id.startsWith("builtin.") ? "builtin" : "cedar", decision: "deny", reason },
    reasonCode: "CEDAR_EVALUATION_ERROR",
  };
}

function errorText(errors: readonly { message: string }[]): string {
  return errors
    .slice(0, 5)
    .map((e) => e.message)
    .join("; ");
}

const DURATION = /^(\d{1,9})(ms|s|m|h)$/;

function annotationOutcome(
  id: string,
  effect: "permit" | "forbid",
  ann: Record<string, string>,
  source: string,
): RuleOutcome {
  const bad = (msg: string) =>
    new PolicyError("ERR_POLICY_CEDAR_ANNOTATION", `${source}: policy ${id}: ${msg}`, {
      details: { ruleId: id },
    });
  const raw = ann.decision;
  let decision: Decision;
  if (effect === "forbid") {
    if (raw !== undefined && raw !== "deny") throw bad(`a forbid policy can only be @decision("deny")`);
    decision = "deny";
  } else if (raw === undefined || raw === "allow") {
    decision = "allow";
  } else if (raw === "step_up" || raw === "require-approval") {
    decision = "step_up";
  } else if (raw === "defer" || raw === "modify") {
    decision = raw;
  } else {
    throw bad(
      `@decision must be allow, step_up, require-approval, defer or modify (got ${JSON.stringify(raw)})`,
    );
  }
  const outcome: RuleOutcome = {
    rule: { id, source: "cedar", decision, ...(ann.reason !== undefined ? { reason: ann.reason } : {}) },
    reasonCode: ann.reasonCode ?? `CEDAR:${id}`,
  };
  if (ann.reasonCode !== undefined && !/^[A-Z][A-Z0-9_]{0,63}$/.test(ann.reasonCode)) {
    throw bad("@reasonCode must be UPPER_SNAKE_CASE");
  }
  let timeoutMs: number | undefined;
  if (ann.timeout !== undefined) {
    if (decision !== "step_up" && decision !== "defer")
      throw bad("@timeout is only allowed with step_up or defer");
    const m = DURATION.exec(ann.timeout);
    if (m === null) throw bad(`@timeout must be a duration like "30s" (got ${JSON.stringify(ann.timeout)})`);
    timeoutMs = Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
    if (timeoutMs <= 0 || timeoutMs > 7 * 24 * 3_600_000)
      throw bad("@timeout must be between 1 ms and 7 days");
  }
  if (ann.approverRole !== undefined) {
    if (decision !== "step_up") throw bad("@approverRole is only allowed with step_up");
    if (!ACTION_NAME.test(ann.approverRole)) throw bad("@approverRole must be a plain name");
  }
  if (decision === "step_up") {
    outcome.stepUp = {
      approverRole: ann.approverRole ?? DEFAULT_STEP_UP.approverRole,
      timeoutMs: timeoutMs ?? DEFAULT_STEP_UP.timeoutMs,
    };
  }
  if (decision === "defer") outcome.defer = { timeoutMs: timeoutMs ?? DEFAULT_DEFER_TIMEOUT_MS };
  if ((ann.modify !== undefined) !== (decision === "modify")) {
    throw bad('@decision("modify") requires a @modify JSON payload, and only it');
  }
  if (ann.modify !== undefined) {
    let data: unknown;
    try {
      data = JSON.parse(ann.modify);
    } catch {
      throw bad("@modify is not valid JSON");
    }
    const parsed = ModifyPayload.safeParse(data);
    if (!parsed.success) throw bad(`@modify: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    outcome.modify = parsed.data as NonNullable<RuleOutcome["modify"]>;
  }
  if (ann.obligations !== undefined) {
    const names = ann.obligations.split(",").map((s) => s.trim());
    if (names.some((n) => !ACTION_NAME.test(n)))
      throw bad("@obligations must be a comma-separated list of names");
    outcome.obligations = names.map((type) => ({ type }));
  }
  return outcome;
}

/** The Cedar view of one call; see docs/policy.md "Cedar mapping". */
export function buildCedarRequest(
  ctx: EvalContext,
  policySetId: string,
  declaredActions: ReadonlySet<string>,
): Cedar.StatefulAuthorizationCall {
  const tool = ctx.input.tool;
  const actionId = tool?.cedarAction ?? `${ctx.toolClass}:${ctx.action}`;
  const resourceId = tool?.cedarResource ?? ctx.tool ?? ctx.toolClass;
  const params: Record<string, Cedar.CedarValueJson> = {};
  const numParams: Record<string, Cedar.CedarValueJson> = {};
  const keys: string[] = [];
  for (const [k, v] of Object.entries(ctx.params)) {
    keys.push(k);
    const scalar =
      typeof v === "string"
        ? v
        : typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))
          ? String(v)
          : undefined;
    // Every parameter has a tag in both entities; a value the tag's type cannot carry
    // gets NOT_EVALUABLE_TAG, so a comparison or `like` on it errors and the policy
    // denies (fail closed) instead of reading as absent (issue 17 #4).
    params[k] = scalar ?? NOT_EVALUABLE_TAG;
    numParams[k] = typeof v === "number" && Number.isSafeInteger(v) ? v : NOT_EVALUABLE_TAG;
  }
  const rid = "request";
  const context: Cedar.Context = {
    principalId: ctx.principalId,
    runId: ctx.input.session.runId,
    toolClass: ctx.toolClass,
    action: ctx.action,
    humanApproval: ctx.humanApproval,
    taint: [...ctx.taint],
    params: { __entity: { type: "Warden::Params", id: rid } },
    numParams: { __entity: { type: "Warden::NumParams", id: rid } },
    paramKeys: keys,
    counters: { ...ctx.counters },
    classifications: [...ctx.classifications],
    classificationLevel: ctx.classificationLevel,
    quarantined: ctx.quarantined,
    // What YAML's `capability:` matches: a valid capability token came with the call.
    capability: ctx.capability,
  };
  const identity = ctx.input.request.identity;
  if (identity !== undefined)
    context.identity = {
      agentId: identity.agentId,
      domain: identity.domain,
      capabilities: [...identity.capabilities],
    };
  const m = ctx.input.message;
  if (m !== undefined)
    context.message = {
      from: m.from,
      to: m.to,
      primitive: m.primitive,
      payloadType: m.payloadType,
      depth: m.depth,
    };
  if (ctx.tool !== undefined) context.tool = ctx.tool;
  if (ctx.riskTier !== undefined) context.riskTier = ctx.riskTier;
  if (ctx.category !== undefined) context.category = ctx.category;
  if (ctx.trustScore !== undefined) context.trustScore = Math.round(ctx.trustScore * 1000);
  // Thousandths, like trustScore: `context.riskScore > 700`.
  if (ctx.riskScore !== undefined) context.riskScore = Math.round(ctx.riskScore * 1000);
  if (ctx.drift !== undefined) {
    context.drift = Math.round(ctx.drift.action * 1000);
    context.cumulativeDrift = Math.round(ctx.drift.cumulative * 1000);
  }
  // APAE confidence as a level: 0 low, 1 medium, 2 high (`context.trustConfidence >= 1`).
  if (ctx.trustConfidence !== undefined)
    context.trustConfidence = TRUST_CONFIDENCE_LEVELS.indexOf(ctx.trustConfidence);
  const call: Cedar.StatefulAuthorizationCall = {
    principal: { type: "Warden::Principal", id: ctx.principalId },
    action: { type: "Warden::Action", id: actionId },
    resource: { type: "Warden::Tool", id: resourceId },
    context,
    preparsedPolicySetId: policySetId,
    validateRequest: false,
    entities: [
      {
        uid: { type: "Warden::Principal", id: ctx.principalId },
        attrs: {},
        parents: [...ctx.roles].map((r) => ({ type: "Warden::Role", id: r })),
      },
      { uid: { type: "Warden::Tool", id: resourceId }, attrs: {}, parents: [] },
      { uid: { type: "Warden::Params", id: rid }, attrs: {}, parents: [], tags: params },
      { uid: { type: "Warden::NumParams", id: rid }, attrs: {}, parents: [], tags: numParams },
    ],
  };
  // Action groups are passed as the action entity's parents rather than through the
  // preparsed schema: the policies were already validated against the schema at load, and
  // schema-backed evaluation costs ~100 µs more per call in cedar-wasm 4.x.
  const group = Object.hasOwn(CEDAR_BUILTIN_ACTIONS, actionId) ? CEDAR_BUILTIN_ACTIONS[actionId] : undefined;
  if (group !== undefined && declaredActions.has(actionId)) {
    call.entities.push({
      uid: { type: "Warden::Action", id: actionId },
      attrs: {},
      parents: [{ type: "Warden::Action", id: group }],
    });
  }
  return call;
}
