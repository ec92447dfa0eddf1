// Stage 1, admission: is this a well-formed proposal from a known principal, naming a
// contract it satisfies? Parse (unless parseGateRequest already did), the id grammar, the
// principal (from configuration), the contract (lookup, class and action, typed
// parameters), and the run's owner. Nothing here touches the session or policy; the first
// failed check is the admission's one reason, and judgement turns it into a denial.

import type { Session } from "../context/index.js";
import {
  type DecisionId,
  type GateRequest,
  isParsedGateRequest,
  newDecisionId,
  type PrincipalId,
  parseId,
  type RunId,
  safeParseGateRequest,
} from "../contracts/index.js";
import type { PolicyTool } from "../policy/index.js";
import { type CompiledTool, classifyContract, validateArgs } from "../tools/index.js";
import type { CapabilityFact } from "./capability.js";
import { runTraceId } from "./dare-mapping.js";
import type { GateDeps, PrincipalConfig } from "./options.js";
import { contractViolation, type GateReasonCode } from "./reasons.js";

/** A parsed proposal, whether or not it passed admission. */
export interface Admission {
  kind: "parsed";
  request: GateRequest;
  /** The request with the contract's typed parameters (defaults applied). */
  checked: GateRequest;
  runId: RunId;
  principalId: PrincipalId;
  decisionId: DecisionId;
  traceId: string;
  now: number;
  principal?: PrincipalConfig;
  tool?: CompiledTool;
  policyTool?: PolicyTool;
  /** The runtime-created run (with `runs: "runtime"`); judgement opens a caller-named one. */
  session?: Session;
  /** A valid capability token presented with the call (capability.ts). */
  capability?: CapabilityFact;
  /** The classification's target arguments (flow.ts), when the call names a contract. */
  targets?: readonly string[];
  /** The parameter holding the call's data values (`Gate.evaluate`'s `valuesIn`; context PrepareOptions). */
  valuesIn?: string;
  /** Why admission refused the call; absent when admitted. */
  refused?: GateReasonCode;
}

/**
 * `invalid`: not a GateRequest, or a run id outside the id grammar — either way there is no
 * run id to journal the decision under, so the refusal is returned, not recorded.
 */
export type AdmissionResult = { kind: "invalid"; reason: "request_invalid" | "run_id_invalid" } | Admission;

export function admit(deps: GateDeps, raw: unknown): AdmissionResult {
  // A request from parseGateRequest was parsed at the edge and cannot have changed since
  // (deep-frozen, unforgeable mark); anything else is parsed here.
  const parsed = isParsedGateRequest(raw) ? { success: true as const, data: raw } : safeParseGateRequest(raw);
  if (!parsed.success) return { kind: "invalid", reason: "request_invalid" };
  const request = parsed.data;
  const run = parseId("run", request.runId);
  if (!run.ok) return { kind: "invalid", reason: "run_id_invalid" };
  // The principal id's own schema (Name) is narrower than the id grammar.
  const principalId = request.principalId as PrincipalId;
  const a: Admission = {
    kind: "parsed",
    request,
    checked: request,
    runId: run.id,
    principalId,
    decisionId: newDecisionId(),
    traceId: request.traceId ?? runTraceId(request.runId),
    now: deps.clock(),
  };
  const principal = deps.principal(principalId);
  if (!principal || principal.id !== request.principalId) return refuse(a, "principal_unknown");
  a.principal = principal;
  if (request.tool !== undefined) {
    const refused = admitContract(deps, a, request.tool);
    if (refused !== undefined) return refuse(a, refused);
  } else if (deps.o.requireContract) return refuse(a, "contract_required");
  if (deps.o.runs === "runtime") {
    // One answer for unknown, ended, evicted and foreign runs, so run ids cannot be probed.
    try {
      a.session = deps.sessions.run(request.runId, request.principalId);
    } catch {
      return refuse(a, "run_unknown");
    }
    return a;
  }
  // A run belongs to the principal that opened it. Another principal's call is refused
  // here, before the session, so it cannot move that run's counters towards quarantine.
  const owner = deps.sessions.get(request.runId)?.principalId;
  if (owner !== undefined && owner !== request.principalId) return refuse(a, "run_principal_mismatch");
  return a;
}

function refuse(a: Admission, reason: GateReasonCode): AdmissionResult {
  a.refused = reason;
  return a;
}

/** The contract named by the call: it must exist, match class and action, and accept the parameters. */
function admitContract(deps: GateDeps, a: Admission, name: string): GateReasonCode | undefined {
  const tool = deps.o.contracts?.get(name);
  if (!tool) return "tool_unknown";
  a.tool = tool;
  a.policyTool = toPolicyTool(tool);
  const cls = (deps.o.classify ?? classifyContract)(tool);
  if (cls.toolClass !== a.request.toolClass || cls.action !== a.request.action)
    return "contract_class_mismatch";
  if (cls.targets !== undefined) a.targets = cls.targets;
  const v = validateArgs(tool, a.request.parameters, deps.o.validateOptions ?? {});
  if (!v.ok) return contractViolation("contract_param_invalid", v);
  a.checked = { ...a.request, parameters: { ...v.args } as GateRequest["parameters"] };
  return undefined;
}

export function toPolicyTool(tool: CompiledTool): PolicyTool {
  const t = tool.contract.tool;
  const out: PolicyTool = {
    name: tool.name,
    version: t.version,
    riskTier: t.risk_tier,
    humanApproval: t.human_approval,
  };
  if (t.category !== undefined) out.category = t.category;
  if (t.cedar !== undefined) {
    out.cedarResource = t.cedar.resource;
    out.cedarAction = t.cedar.action;
  }
  return out;
}
