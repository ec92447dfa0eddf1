// Every active quarantine in one listing (issue 37), for the console and GET /v1/quarantines:
// the principal quarantines (set by a behavioural rule, the denial threshold, the output
// screening, an operator or the trust score — the principal state store's records, every
// replica's in distributed mode) and the APAE trust table's quarantined rows. Each names its
// kind, principal, the run that entered it, the reason, when, the rule and the calls that
// matched, and the lift that ends it: a principal lift (principal-lift.ts) or, for a trust
// quarantine, the APAE early lift (apae-lift.ts). Both need an approver's signed record.
import { z } from "zod";
import type { PrincipalRecord, PrincipalStateStore, Principals } from "../context/index.js";
import { LIFT_SCOPE } from "../trust/index.js";
import type { RuntimeApae } from "./apae.js";
import {
  adoptPrincipalLift,
  liftPrincipal,
  PRINCIPAL_LIFT_SCOPE,
  type PrincipalAdopted,
  type PrincipalLiftDeps,
  type PrincipalLiftOutcome,
  quarantineIdOf,
} from "./principal-lift.js";

const MAX_MATCHED = 10;

export const QuarantineEntrySchema = z.object({
  /** principal: the Gate's quarantine of the principal; trust: an APAE trust table row. */
  kind: z.enum(["principal", "trust"]),
  principalId: z.string(),
  /** behavioral_rule | denial_threshold | output_screening | manual | trust_score; trust rows: trust_table. */
  trigger: z.string(),
  /** The run that entered it (null for a trust row). */
  runId: z.string().nullable(),
  reason: z.string(),
  setAt: z.string().nullable(),
  /** The behavioural or screening rule that set it, when one did. */
  ruleId: z.string().nullable(),
  /** The calls that matched (tool class, action, decision), at most 10. */
  matched: z.array(z.object({ toolClass: z.string(), action: z.string(), decision: z.string().nullable() })),
  /** The id a principal lift names (null for a trust row). */
  quarantineId: z.string().nullable(),
  /** The scope of the signed lift that ends it. */
  liftScope: z.string(),
  /** Trust rows: the truster, the quarantine episode and its end. */
  trust: z
    .object({
      truster: z.string(),
      quarantineCount: z.number().int(),
      until: z.string().nullable(),
      score: z.number(),
    })
    .nullable(),
});
export type QuarantineEntry = z.infer<typeof QuarantineEntrySchema>;

function principalEntry(r: PrincipalRecord): QuarantineEntry | undefined {
  const q = r.quarantine;
  if (q === undefined) return undefined;
  return {
    kind: "principal",
    principalId: r.principalId,
    trigger: q.type,
    runId: q.runId,
    reason: q.reason,
    setAt: q.at ?? null,
    ruleId: q.ruleId ?? null,
    matched: (q.matchedEvents ?? []).slice(0, MAX_MATCHED).map((e) => ({
      toolClass: e.toolClass,
      action: e.action,
      decision: e.decision ?? null,
    })),
    quarantineId: quarantineIdOf(r.principalId, q),
    liftScope: q.type === "trust_score" ? LIFT_SCOPE : PRINCIPAL_LIFT_SCOPE,
    trust: null,
  };
}

async function trustEntries(apae: RuntimeApae | undefined): Promise<QuarantineEntry[]> {
  if (apae === undefined) return [];
  const rows = (await apae.engine.table()).filter((v) => v.status === "quarantined");
  return rows.map((v) => ({
    kind: "trust" as const,
    principalId: v.subject,
    trigger: "trust_table",
    runId: null,
    reason: "trust score below the quarantine floor",
    setAt: null,
    ruleId: null,
    matched: [],
    quarantineId: null,
    liftScope: LIFT_SCOPE,
    trust: {
      truster: v.truster,
      quarantineCount: v.quarantineCount,
      until: v.quarantineUntil === null ? null : new Date(v.quarantineUntil).toISOString(),
      score: v.score,
    },
  }));
}

export interface RuntimeQuarantines {
  /** Every active quarantine: principal ones first (by principal), then trust rows. */
  list(): Promise<QuarantineEntry[]>;
  /** An approver's signed principal lift presented by approver `by` (journaled before it acts). */
  lift(record: unknown, by: string): Promise<PrincipalLiftOutcome>;
  /** Distributed mode: adopts a lift another replica saved, verified here. */
  adopt(principalId: string): Promise<PrincipalAdopted>;
}

export function runtimeQuarantines(
  d: PrincipalLiftDeps & { principals: Principals; store?: PrincipalStateStore },
  apae: RuntimeApae | undefined,
): RuntimeQuarantines {
  return {
    async list() {
      const principal = (await d.principals.listQuarantined()).flatMap((r) => principalEntry(r) ?? []);
      principal.sort((a, b) => (a.principalId < b.principalId ? -1 : a.principalId > b.principalId ? 1 : 0));
      return [...principal, ...(await trustEntries(apae))];
    },
    lift: (record, by) => liftPrincipal(d, record, by),
    adopt: (principalId) => adoptPrincipalLift(d, principalId),
  };
}
