// Delegated sub-agent runs at the composition root. `startDelegatedRun` verifies a
// delegation chain against the configured roots and depth, checks that it delegates to
// the principal starting the run (and, with `parentRun`, that the parent run is the
// delegator's), starts the run, and records the chain's last grant as the run's ceiling:
// the Gate then denies before policy any call outside it (ERR_DELEGATION_CEILING): a tool
// the grant does not cover, a call after the grant expired, any call once the run has
// seen data of a class outside the grant's `dataClasses`, or more calls than its
// `budgets.toolCalls` (counted by reservation in the budget ledger, like capability uses).
// Acceptance and refusal are journaled; a refusal throws the chain's coded error.
// `revokePrincipal` (wired to APAE's `apae:trust_revoke`) voids the delegate's chains
// issued at or before the revocation: every call in a run on such a chain, started
// before or after, is denied before policy (ERR_DELEGATION_CEILING).
import { z } from "zod";
import type { Session, SessionStore } from "../context/index.js";
import { DelegationError, isoTime } from "../contracts/index.js";
import type { CeilingVerdict, GrantedCall, RunCeilings } from "../gate/index.js";
import { RevocationFloors } from "../identity/capabilities/index.js";
import {
  callCovered,
  type DelegatedGrant,
  type DelegationRefusalCode,
  DelegatedGrant as GrantSchema,
  verifyChain,
} from "../identity/delegation/index.js";
import type { Journal } from "../journal/index.js";
import type { RuntimeDelegationConfig } from "./config.js";

export const DELEGATION_ACCEPTED_EVENT = "warden.delegation.accepted";
export const DELEGATION_REFUSED_EVENT = "warden.delegation.refused";

const Str = z.string().min(1).max(256);
export const DelegationAcceptedBodySchema = z.strictObject({
  run_id: Str,
  principal_id: Str,
  parent_run: Str.optional(),
  delegator: Str,
  depth: z.number().int().min(1),
  chain_hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  grant: GrantSchema,
  at: Str,
});
export const DelegationRefusedBodySchema = z.strictObject({
  principal_id: Str,
  code: Str,
  link: z.number().int().nonnegative(),
  field: Str.optional(),
  at: Str,
});

const CEILING_REFUSED: CeilingVerdict = { ok: false, code: "ERR_DELEGATION_CEILING" };

/** The ceilings of the runtime's delegated runs (the Gate's `ceilings` port). */
/** A delegated run's grant and whose chain it came from. */
interface Ceiling {
  grant: DelegatedGrant;
  delegate: string;
  /** The chain's last link's issue time (ms). */
  issuedAt: number;
}

export class DelegatedRuns implements RunCeilings {
  readonly #grants = new Map<string, Ceiling>();
  readonly #sessions: SessionStore;
  readonly #revoked = new RevocationFloors();
  #swept = 0;

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
  }

  set(runId: string, ceiling: Ceiling): void {
    this.#grants.set(runId, ceiling);
    // A run can end without eviction: closed runs' ceilings are swept, amortized O(1) per run.
    if (this.#grants.size >= Math.max(256, 2 * this.#swept)) {
      for (const id of [...this.#grants.keys()]) if (this.#sessions.get(id) === undefined) this.forget(id);
      this.#swept = this.#grants.size;
    }
  }

  grantOf(runId: string): DelegatedGrant | undefined {
    return this.#grants.get(runId)?.grant;
  }

  /** Voids the chains delegating to `principal` issued at or before `at` (ms). */
  revokePrincipal(principal: string, at: number): void {
    this.#revoked.revoke(principal, at);
  }

  /** Voids every chain issued at or before `at` (ms), whoever it delegates to. */
  revokeAll(at: number): void {
    this.#revoked.revokeAll(at);
  }

  forget(runId: string): void {
    this.#grants.delete(runId);
    void Promise.resolve(this.#sessions.ledger.forgetRun(ceilingKey(runId))).catch(() => undefined);
  }

  check(call: GrantedCall): CeilingVerdict | Promise<CeilingVerdict> | undefined {
    const c = this.#grants.get(call.runId);
    if (c === undefined) return undefined;
    if (this.#revoked.revoked(c.delegate, c.issuedAt)) return CEILING_REFUSED;
    const g = c.grant;
    if (call.now >= g.expiresAt * 1000 || !callCovered(g.tools, call)) return CEILING_REFUSED;
    // Data above the grant's classes reached the run (an unclassified result counts as the
    // highest level): the sub-agent may not act on it, so nothing more is admitted.
    const seen = this.#sessions.get(call.runId)?.snapshot(call.now).dataClassificationsSeen ?? [];
    if (seen.some((c) => !g.dataClasses.includes(c))) return CEILING_REFUSED;
    const limit = g.budgets.toolCalls;
    if (limit === undefined) return { ok: true };
    return this.#take(call, limit);
  }

  async #take(call: GrantedCall, limit: number): Promise<CeilingVerdict> {
    const ledger = this.#sessions.ledger;
    const key = ceilingKey(call.runId);
    const r = await ledger.reserve({
      runId: key,
      principalId: call.principalId,
      now: call.now,
      toolCallLimit: limit,
      takeRateSlot: false,
    });
    if (!r.ok) return CEILING_REFUSED;
    await ledger.commit(r.reservation, call.now);
    return { ok: true };
  }
}

const ceilingKey = (runId: string) => `deleg:${runId}`;

export interface DelegatedRunRequest {
  /** The chain, as parsed JSON (untrusted: verified here). */
  chain: unknown;
  /** The delegator's run this sub-agent works for (must be the last link's delegator's). */
  parentRun?: string;
}

interface Parts {
  config: RuntimeDelegationConfig | undefined;
  sessions: SessionStore;
  journal: Pick<Journal, "append">;
  runs: DelegatedRuns;
  clock: () => number;
}

async function refuse(
  p: Parts,
  principalId: string,
  e: { code: DelegationRefusalCode; link: number; field?: string; message: string },
): Promise<never> {
  await p.journal.append({
    type: DELEGATION_REFUSED_EVENT,
    body: {
      principal_id: principalId,
      code: e.code,
      link: e.link,
      ...(e.field !== undefined ? { field: e.field } : {}),
      at: isoTime(p.clock()),
    },
  });
  throw new DelegationError(e.code, e.message, {
    details: { link: e.link, ...(e.field !== undefined ? { field: e.field } : {}) },
  });
}

export async function startDelegatedRun(
  p: Parts,
  principalId: string,
  req: DelegatedRunRequest,
): Promise<Session> {
  if (p.config === undefined)
    return refuse(p, principalId, {
      code: "ERR_DELEGATION_BROKEN",
      link: 0,
      message: "no delegation roots configured",
    });
  const now = p.clock();
  const v = verifyChain(req.chain, {
    roots: p.config.roots,
    now: Math.floor(now / 1000),
    ...(p.config.maxDepth !== undefined ? { maxDepth: p.config.maxDepth } : {}),
  });
  if (!v.ok) return refuse(p, principalId, v);
  if (v.delegate !== principalId)
    return refuse(p, principalId, {
      code: "ERR_DELEGATION_BROKEN",
      link: v.depth,
      message: "the chain delegates to another principal",
    });
  const parent = req.parentRun === undefined ? undefined : p.sessions.get(req.parentRun);
  if (req.parentRun !== undefined && parent?.principalId !== v.delegator)
    return refuse(p, principalId, {
      code: "ERR_DELEGATION_BROKEN",
      link: v.depth,
      message: "the parent run is not the delegator's",
    });
  // The sub-agent works for the parent run: its taint and data classifications come along,
  // so a tainted delegator cannot launder them through a fresh sub-agent run.
  // The grant's tokens, cost and wall-time budgets become the run's own (each can only
  // lower the configured one), enforced by the session on every call; tool calls are
  // counted against the ceiling (check above).
  const { tokens, cost, wallTimeMs } = v.grant.budgets;
  const budgets = {
    ...(tokens !== undefined ? { tokens } : {}),
    ...(cost !== undefined ? { cost } : {}),
    ...(wallTimeMs !== undefined ? { wallTimeMs } : {}),
  };
  const session = await p.sessions.startRun(principalId, {
    budgets,
    ...(parent === undefined
      ? {}
      : {
          delegation: {
            fromRun: parent.runId,
            taint: parent.taintSeen(),
            classifications: [...parent.snapshot(now).dataClassificationsSeen],
          },
        }),
  });
  p.runs.set(session.runId, { grant: v.grant, delegate: principalId, issuedAt: v.issuedAt * 1000 });
  await p.journal.append({
    type: DELEGATION_ACCEPTED_EVENT,
    run_id: session.runId,
    body: {
      run_id: session.runId,
      principal_id: principalId,
      ...(req.parentRun !== undefined ? { parent_run: req.parentRun } : {}),
      delegator: v.delegator,
      depth: v.depth,
      chain_hash: v.hash,
      grant: v.grant,
      at: isoTime(now),
    },
  });
  return session;
}
