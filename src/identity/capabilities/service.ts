// Capability tokens (Ari Kernel): issued for one run of one principal, for one tool (or
// tool class and action), within parameter constraints, for a bounded number of uses and
// a short time. `check` verifies a presented token against the call in a fixed order and
// answers with a value: the first failed step's code, or the capability as a policy fact.
// A use is taken by a reservation in the BudgetLedger (under `cap:<jti>`, the token's
// own limit) and committed at once, so concurrent presentations cannot overspend: the
// in-memory ledger serializes on the event loop, a PostgreSQL ledger in one transaction
// (see src/context/ledger.ts), and the same code serves both.
import { randomUUID } from "node:crypto";
import type { BudgetLedger } from "../../context/index.js";
import { CapabilityError } from "../../contracts/index.js";
import { type KeyPair, keyIdOf } from "../../crypto/index.js";
import {
  assertConstraintsSafe,
  type Constraints,
  type ConstraintViolation,
  checkConstraints,
} from "./constraints.js";
import { RevocationFloors } from "./revocations.js";
import { CapabilityPayload, type CapabilityScope, headerFor, openToken, signToken } from "./token.js";

export const DEFAULT_CAPABILITY_TTL_MS = 5 * 60_000;
export const MAX_CAPABILITY_TTL_MS = 24 * 3_600_000;

export interface CapabilityGrant {
  scope: CapabilityScope;
  constraints?: Constraints;
  maxUses: number;
  /** Lifetime in milliseconds (default 5 minutes, at most 24 hours). */
  ttlMs?: number;
}

export interface IssuedCapability {
  token: string;
  id: string;
  runId: string;
  principalId: string;
  scope: CapabilityScope;
  constraints: Constraints;
  maxUses: number;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** The call a token is presented with (typed parameters, after admission). */
export interface PresentedCall {
  token: string;
  runId: string;
  principalId: string;
  toolClass: string;
  action: string;
  tool?: string | undefined;
  parameters: Readonly<Record<string, unknown>>;
  now: number;
}

/** What policy sees of a valid capability. */
export interface CapabilityFact {
  id: string;
  /** The contract name, or `toolClass` / `toolClass:action`. */
  tool: string;
  usesLeft: number;
}

export type CapabilityRefusalCode =
  | "ERR_CAPABILITY_INVALID"
  | "ERR_CAPABILITY_EXPIRED"
  | "ERR_CAPABILITY_EXHAUSTED"
  | "ERR_CAPABILITY_SCOPE"
  | "ERR_CAPABILITY_RUN_ENDED"
  | "ERR_CAPABILITY_CONSTRAINT"
  | "ERR_CAPABILITY_REVOKED";

export type CapabilityCheck =
  | { ok: true; capability: CapabilityFact }
  | { ok: false; code: CapabilityRefusalCode; message: string; violation?: ConstraintViolation };

export interface CapabilityServiceOptions {
  /** The runtime key: signs and verifies tokens. */
  signer: KeyPair;
  /** Where uses are counted (the session store's ledger; a shared store across replicas). */
  ledger: BudgetLedger;
  /** Whether the run is still open and the principal's (an ended run's tokens are replays). */
  runOpen(runId: string, principalId: string): boolean;
  clock?: () => number;
  /**
   * Distributed mode: the revocation floors every replica writes (src/store-pg), read at each
   * check, so a revocation decided on another replica voids a token here at once. A read that
   * fails throws (the check fails closed: the call is refused as unavailable, the use not taken).
   */
  sharedFloors?: { floorOf(principalId: string): Promise<number | undefined> };
}

const refuse = (code: CapabilityRefusalCode, message: string): CapabilityCheck => ({
  ok: false,
  code,
  message,
});

export function scopeName(scope: CapabilityScope): string {
  if ("tool" in scope) return scope.tool;
  return scope.action === undefined ? scope.toolClass : `${scope.toolClass}:${scope.action}`;
}

function inScope(scope: CapabilityScope, call: PresentedCall): boolean {
  if ("tool" in scope) return call.tool === scope.tool;
  return call.toolClass === scope.toolClass && (scope.action === undefined || scope.action === call.action);
}

export class CapabilityService {
  readonly #o: CapabilityServiceOptions;
  readonly #header: string;
  readonly #issuer: string;
  readonly #clock: () => number;
  /** Tokens with counted uses, by run: their ledger entries are dropped when the run goes. */
  readonly #used = new Map<string, { principal: string; keys: Set<string> }>();
  /** Runs tracked at the last sweep of closed ones (runs that end without eviction). */
  #swept = 0;
  /** Principals whose tokens issued up to a time are void (kept for a token's longest life). */
  readonly #revoked = new RevocationFloors({ horizonMs: MAX_CAPABILITY_TTL_MS + 1000 });

  constructor(options: CapabilityServiceOptions) {
    this.#o = options;
    this.#header = headerFor(options.signer.publicKey);
    this.#issuer = keyIdOf(options.signer.publicKey);
    this.#clock = options.clock ?? Date.now;
  }

  /** Issues a token for an open run of `principalId`. Throws ERR_CAPABILITY_GRANT_INVALID. */
  issue(runId: string, principalId: string, grant: CapabilityGrant): IssuedCapability {
    if (!this.#o.runOpen(runId, principalId))
      throw new CapabilityError("ERR_CAPABILITY_GRANT_INVALID", "no open run of this principal with that id");
    const ttl = grant.ttlMs ?? DEFAULT_CAPABILITY_TTL_MS;
    if (!Number.isInteger(ttl) || ttl < 1000 || ttl > MAX_CAPABILITY_TTL_MS)
      throw new CapabilityError("ERR_CAPABILITY_GRANT_INVALID", "ttl must be between 1 s and 24 h");
    const now = this.#clock();
    const payload = CapabilityPayload.safeParse({
      jti: randomUUID(),
      iss: this.#issuer,
      sub: principalId,
      run: runId,
      scope: grant.scope,
      constraints: grant.constraints ?? {},
      max_uses: grant.maxUses,
      iat: Math.floor(now / 1000),
      exp: Math.floor((now + ttl) / 1000),
    });
    if (!payload.success) {
      const issue = payload.error.issues[0];
      throw new CapabilityError("ERR_CAPABILITY_GRANT_INVALID", `invalid grant: ${issue?.message ?? ""}`, {
        details: { path: issue?.path.join(".") ?? "" },
      });
    }
    try {
      assertConstraintsSafe(payload.data.constraints);
    } catch (err) {
      throw new CapabilityError("ERR_CAPABILITY_GRANT_INVALID", "a constraint pattern is unsafe or invalid", {
        cause: err,
      });
    }
    const p = payload.data;
    return {
      token: signToken(this.#o.signer, p),
      id: p.jti,
      runId,
      principalId,
      scope: p.scope,
      constraints: p.constraints,
      maxUses: p.max_uses,
      expiresAt: p.exp * 1000,
    };
  }

  /**
   * Voids every token issued to `principalId` at or before `at` (ms; a token's issue time
   * has a granularity of one second, so a token issued within that second is void too).
   */
  revokePrincipal(principalId: string, at: number): void {
    this.#revoked.revoke(principalId, at, this.#clock());
  }

  /** Voids every token issued at or before `at` (ms), to any principal. */
  revokeAll(at: number): void {
    this.#revoked.revokeAll(at);
  }

  /** Forgets the use counts of a closed run's tokens (safe: a closed run's tokens are refused before their uses are read). */
  async forgetRun(runId: string): Promise<void> {
    const used = this.#used.get(runId);
    this.#used.delete(runId);
    for (const key of used?.keys ?? []) await this.#o.ledger.forgetRun(key);
  }

  /** Forgets closed runs' counts (a run can end without eviction): amortized O(1) per run. */
  async #sweep(): Promise<void> {
    for (const [run, u] of [...this.#used]) if (!this.#o.runOpen(run, u.principal)) await this.forgetRun(run);
    this.#swept = this.#used.size;
  }

  /** Verifies a presented token against its call and, if every check passes, takes one use. */
  async check(call: PresentedCall): Promise<CapabilityCheck> {
    const p = openToken(this.#o.signer.publicKey, this.#header, call.token);
    if (p === undefined) return refuse("ERR_CAPABILITY_INVALID", "capability token is not valid");
    if (call.now >= p.exp * 1000) return refuse("ERR_CAPABILITY_EXPIRED", "capability token has expired");
    if (p.run !== call.runId || p.sub !== call.principalId)
      return refuse("ERR_CAPABILITY_SCOPE", "capability token was issued for another run or principal");
    if (this.#revoked.revoked(p.sub, p.iat * 1000) || (await this.#revokedShared(p.sub, p.iat * 1000)))
      return refuse("ERR_CAPABILITY_REVOKED", "capability token was revoked with its principal's grants");
    if (!this.#o.runOpen(p.run, p.sub))
      return refuse("ERR_CAPABILITY_RUN_ENDED", "capability token's run has ended");
    if (!inScope(p.scope, call))
      return refuse("ERR_CAPABILITY_SCOPE", "capability token does not cover this tool");
    const violation = checkConstraints(p.constraints, call.parameters);
    if (violation !== undefined)
      return {
        ok: false,
        code: "ERR_CAPABILITY_CONSTRAINT",
        message: `parameter ${violation.param} breaks the capability's ${violation.op} constraint`,
        violation,
      };
    return this.#use(p, call.now);
  }

  /** Whether another replica's revocation voids a grant to `principal` issued at `issuedAt` (ms). */
  async #revokedShared(principal: string, issuedAt: number): Promise<boolean> {
    const floor = await this.#o.sharedFloors?.floorOf(principal);
    if (floor === undefined || issuedAt > floor) return false;
    this.#revoked.revoke(principal, floor, this.#clock());
    return true;
  }

  async #use(p: CapabilityPayload, now: number): Promise<CapabilityCheck> {
    const key = usesKey(p.jti);
    const ledger = this.#o.ledger;
    let used = this.#used.get(p.run);
    if (used === undefined) {
      used = { principal: p.sub, keys: new Set() };
      this.#used.set(p.run, used);
      if (this.#used.size >= Math.max(256, 2 * this.#swept)) await this.#sweep();
    }
    used.keys.add(key);
    const r = await ledger.reserve({
      runId: key,
      principalId: p.sub,
      now,
      toolCallLimit: p.max_uses,
      takeRateSlot: false,
    });
    if (!r.ok) return refuse("ERR_CAPABILITY_EXHAUSTED", "capability token has no uses left");
    await ledger.commit(r.reservation, now);
    const u = await ledger.usage(key, now);
    return {
      ok: true,
      capability: {
        id: p.jti,
        tool: scopeName(p.scope),
        usesLeft: Math.max(0, p.max_uses - u.used - u.held),
      },
    };
  }
}

/** The ledger key a token's uses are counted under. */
export function usesKey(id: string): string {
  return `cap:${id}`;
}
