// Capability grants at the composition root: the runtime's CapabilityService (tokens
// signed by the journal key, uses counted in the session store's budget ledger, a token
// valid only while its run is open) and `grant`, which issues a token for a run and makes
// the grant durable in the journal before the token is handed out. The journal keeps the
// grant's terms and id, never the token itself (it is a bearer credential for its run).
import { z } from "zod";
import type { BudgetLedger, SessionStore } from "../context/index.js";
import { CapabilityError, isoTime } from "../contracts/index.js";
import type { KeyPair } from "../crypto/index.js";
import {
  type CapabilityGrant,
  CapabilityScope,
  CapabilityService,
  type CapabilityServiceOptions,
  Constraints,
  type IssuedCapability,
} from "../identity/capabilities/index.js";
import type { Journal } from "../journal/index.js";

export const CAPABILITY_GRANTED_EVENT = "warden.capability.granted";

export const CapabilityGrantedBodySchema = z.strictObject({
  capability_id: z.uuid(),
  run_id: z.string().min(1).max(256),
  principal_id: z.string().min(1).max(256),
  scope: CapabilityScope,
  constraints: Constraints,
  max_uses: z.number().int().min(1),
  expires_at: z.string().min(1).max(64),
  granted_by: z.string().min(1).max(256),
});

/** What `runtime.grant` takes: one contract (`tool`) or a tool class (and action). */
export interface RuntimeGrant {
  tool?: string;
  toolClass?: string;
  action?: string;
  constraints?: Constraints;
  maxUses: number;
  /** Lifetime in milliseconds (default 5 minutes, at most 24 hours). */
  ttlMs?: number;
}

export function openCapabilities(
  sessions: SessionStore,
  signer: KeyPair,
  clock: () => number,
  /** Where uses are counted: default the session store's ledger; the shared one across replicas. */
  ledger: BudgetLedger = sessions.ledger,
  /** Distributed mode: the revocation floors every replica writes. */
  sharedFloors?: CapabilityServiceOptions["sharedFloors"],
): CapabilityService {
  return new CapabilityService({
    signer,
    ledger,
    clock,
    ...(sharedFloors !== undefined ? { sharedFloors } : {}),
    runOpen(runId, principalId) {
      try {
        sessions.run(runId, principalId);
        return true;
      } catch {
        return false;
      }
    },
  });
}

function scopeOf(g: RuntimeGrant): CapabilityGrant["scope"] {
  if (g.tool !== undefined && g.toolClass === undefined && g.action === undefined) return { tool: g.tool };
  if (g.tool === undefined && g.toolClass !== undefined)
    return g.action === undefined ? { toolClass: g.toolClass } : { toolClass: g.toolClass, action: g.action };
  throw new CapabilityError(
    "ERR_CAPABILITY_GRANT_INVALID",
    "a grant names either `tool`, or `toolClass` (and `action`)",
  );
}

/**
 * Issues a capability for an open run (its owner is the token's principal) and journals
 * the grant. Throws ERR_CAPABILITY_GRANT_INVALID for a run that is not open or bad terms.
 */
export async function grantCapability(
  parts: { service: CapabilityService; sessions: SessionStore; journal: Pick<Journal, "append"> },
  runId: string,
  grant: RuntimeGrant,
  grantedBy: string,
): Promise<IssuedCapability> {
  const owner = parts.sessions.get(runId)?.principalId;
  if (owner === undefined)
    throw new CapabilityError("ERR_CAPABILITY_GRANT_INVALID", "no open run with that id");
  const issued = parts.service.issue(runId, owner, {
    scope: scopeOf(grant),
    maxUses: grant.maxUses,
    ...(grant.constraints !== undefined ? { constraints: grant.constraints } : {}),
    ...(grant.ttlMs !== undefined ? { ttlMs: grant.ttlMs } : {}),
  });
  await parts.journal.append({
    type: CAPABILITY_GRANTED_EVENT,
    run_id: runId,
    body: {
      capability_id: issued.id,
      run_id: runId,
      principal_id: owner,
      scope: issued.scope,
      constraints: issued.constraints,
      max_uses: issued.maxUses,
      expires_at: isoTime(issued.expiresAt),
      granted_by: grantedBy,
    },
  });
  return issued;
}
