// The facts one evaluation reads, computed once per call and shared by every source so
// the YAML and Cedar backends see exactly the same input.
import type { TaintSource } from "../contracts/index.js";
import type { Counters, PolicyInput } from "./types.js";

/** Default ordered data classification levels; a label outside the list counts as the highest. */
export const DEFAULT_CLASSIFICATION_LEVELS = ["public", "internal", "confidential", "secret"] as const;

export interface EvalContext {
  input: PolicyInput;
  toolClass: string;
  action: string;
  tool: string | undefined;
  principalId: string;
  roles: ReadonlySet<string>;
  taint: ReadonlySet<TaintSource>;
  params: Record<string, unknown>;
  riskTier: string | undefined;
  category: string | undefined;
  humanApproval: boolean;
  classifications: ReadonlySet<string>;
  /** Index in the configured levels of the highest classification seen; -1 when none. */
  classificationLevel: number;
  counters: Counters;
  perToolCalls: Record<string, number>;
  trustScore: number | undefined;
  trustConfidence: PolicyInput["trustConfidence"];
  quarantined: boolean;
  /** Whether a valid capability token came with the call. */
  capability: boolean;
  riskScore: number | undefined;
  drift: PolicyInput["drift"];
}

export function buildEvalContext(input: PolicyInput, levels: readonly string[]): EvalContext {
  const req = input.request;
  const taint = new Set<TaintSource>();
  for (const t of input.taint) taint.add(t.source);
  const classifications = new Set(input.session.dataClassificationsSeen);
  if (input.session.highestClassification !== undefined)
    classifications.add(input.session.highestClassification);
  let level = -1;
  for (const c of classifications) {
    const i = levels.indexOf(c);
    // Fail closed: a label the configuration does not know counts as the highest level.
    level = Math.max(level, i === -1 ? levels.length - 1 : i);
  }
  return {
    input,
    toolClass: req.toolClass,
    action: req.action,
    tool: req.tool ?? input.tool?.name,
    principalId: input.principal.id,
    roles: new Set(input.principal.roles),
    taint,
    params: req.parameters as Record<string, unknown>,
    riskTier: input.tool?.riskTier,
    category: input.tool?.category,
    humanApproval: input.tool?.humanApproval === true,
    classifications,
    classificationLevel: level,
    counters: input.session.counters,
    perToolCalls: input.session.perToolCalls,
    trustScore: input.trustScore,
    trustConfidence: input.trustConfidence,
    quarantined: input.session.quarantined,
    capability: input.capability !== undefined,
    riskScore: input.riskScore,
    drift: input.drift,
  };
}

/** Own-property read: a parameter named `__proto__` or `constructor` never reaches the prototype. */
export function paramValue(params: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(params, key) ? params[key] : undefined;
}
