// Step-up approvals (OATS §7.5): a blocked action waits for a human decision that
// arrives through this interface. In-process here; the sidecar exposes the same
// queue over HTTP. Approvers are checked against the role the policy asked for;
// no decision before the timeout means deny. The queue is bounded, in all and per
// principal, so one agent cannot park unlimited calls on the approvers (beyond either
// bound the request is answered `queue_full` at once and the Gate denies). With approver
// keys configured, a verdict must also carry the approver's own signature over the
// decision it answers (src/journal approval-signatures.ts): a non-approver key, a
// signature for another decision, a stale or reused one is refused, coded.
import { type GateRequest, sha256Of } from "../contracts/index.js";
import {
  type ApprovalStatement,
  type ApproverKeyring,
  checkApprovalSignature,
  type SignedApproval,
} from "../journal/index.js";

export interface ApprovalRequest {
  id: string;
  decisionId: string;
  runId: string;
  principalId: string;
  approverRole: string;
  /** The full action context the approver needs (the model's free text is not included). */
  request: GateRequest;
  tool?: { name: string; riskTier?: string; category?: string };
  reasonCodes: string[];
  matchedRules: string[];
  createdAt: string;
  expiresAt: string;
}

export interface Approver {
  id: string;
  roles: string[];
}

export type ApprovalVerdict =
  | { outcome: "approve"; approver: Approver; justification: string; signed?: SignedApproval }
  | { outcome: "deny"; approver: Approver; justification: string; signed?: SignedApproval }
  | {
      outcome: "modify";
      approver: Approver;
      justification: string;
      parameters: Record<string, unknown>;
      signed?: SignedApproval;
    }
  | { outcome: "timeout" }
  | { outcome: "cancelled" }
  /** The queue, or the principal's share of it, was full: nothing was queued. */
  | { outcome: "queue_full" };

/** A verdict an approver gives. */
export type ApproverVerdict = Extract<ApprovalVerdict, { approver: Approver }>;
/** What `decide` accepts (the type callers have long used); anything without an approver is refused. */
export type DecideVerdict = Exclude<ApprovalVerdict, { outcome: "timeout" } | { outcome: "cancelled" }>;

export type DecideResult =
  | { ok: true }
  | {
      ok: false;
      code:
        | "ERR_APPROVAL_NOT_FOUND"
        | "ERR_APPROVAL_FORBIDDEN"
        | "ERR_APPROVAL_INVALID"
        | "ERR_APPROVAL_UNSIGNED"
        | "ERR_APPROVAL_SIGNATURE_INVALID"
        | "ERR_APPROVAL_WRONG_DECISION"
        | "ERR_APPROVAL_REPLAYED"
        | "ERR_APPROVAL_ALREADY_DECIDED";
      message: string;
    };

export interface Approvals {
  /** Registers a pending approval and resolves with the verdict (or timeout/cancel). */
  request(req: ApprovalRequest, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalVerdict>;
  pending(): ApprovalRequest[];
  decide(id: string, verdict: DecideVerdict): DecideResult;
}

/**
 * The operators' side of the queue, as the approvals API drives it. In-process it is the
 * Approvals itself (`localApprovalQueue`); in distributed mode (src/store-pg approvals.ts)
 * it lists every replica's pending items and a verdict given on any replica resumes the
 * call waiting on the replica that holds it.
 */
export interface ApprovalQueue {
  list(): Promise<ApprovalRequest[]>;
  decide(id: string, verdict: DecideVerdict): Promise<DecideResult>;
}

export function localApprovalQueue(approvals: Approvals): ApprovalQueue {
  return {
    list: async () => approvals.pending(),
    decide: async (id, verdict) => approvals.decide(id, verdict),
  };
}

export interface ApprovalQueueOptions {
  /** Requests pending at once, in all (default 64). */
  maxPending?: number;
  /** Requests one principal may have pending at once (default a quarter of maxPending, at least 1). */
  maxPendingPerPrincipal?: number;
  /** Approver public keys: when set, every verdict must be signed by one of its approver's keys. */
  approverKeys?: ApproverKeyring;
  /** How far a signature's time may be from the clock (default 5 minutes). */
  signatureSkewMs?: number;
  clock?: () => number;
}

/** Signatures remembered against reuse (each decision id is answered once anyway). */
const SEEN_SIGNATURES = 4096;
/** Answered items remembered so that a later answer is told who answered first. */
const DECIDED_REMEMBERED = 4096;

/** How an answered item ended: who answered it first and how, or that it timed out / was cancelled. */
export interface DecidedItem {
  outcome: ApprovalVerdict["outcome"];
  approverId?: string;
  at: string;
}

interface Pending {
  req: ApprovalRequest;
  resolve: (v: ApprovalVerdict) => void;
  timer: NodeJS.Timeout;
}

const MIN_JUSTIFICATION = 10;

export class InProcessApprovals implements Approvals {
  readonly #pending = new Map<string, Pending>();
  /** Pending requests per principal (entries removed at zero). */
  readonly #byPrincipal = new Map<string, number>();
  readonly maxPending: number;
  readonly maxPendingPerPrincipal: number;
  readonly #ring: ApproverKeyring | undefined;
  readonly #skewMs: number;
  readonly #clock: () => number;
  readonly #seen = new Set<string>();
  readonly #decided = new Map<string, DecidedItem>();

  constructor(opts: ApprovalQueueOptions = {}) {
    this.#ring = opts.approverKeys;
    this.#skewMs = opts.signatureSkewMs ?? 5 * 60_000;
    this.#clock = opts.clock ?? Date.now;
    this.maxPending = opts.maxPending ?? 64;
    this.maxPendingPerPrincipal = opts.maxPendingPerPrincipal ?? Math.max(1, Math.ceil(this.maxPending / 4));
    for (const n of [this.maxPending, this.maxPendingPerPrincipal])
      if (!Number.isSafeInteger(n) || n < 1)
        throw new RangeError("approval queue bounds must be integers >= 1");
    if (this.maxPendingPerPrincipal > this.maxPending)
      throw new RangeError("maxPendingPerPrincipal cannot exceed maxPending");
  }

  request(req: ApprovalRequest, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalVerdict> {
    const mine = this.#byPrincipal.get(req.principalId) ?? 0;
    if (
      this.#pending.has(req.id) ||
      this.#pending.size >= this.maxPending ||
      mine >= this.maxPendingPerPrincipal
    )
      return Promise.resolve({ outcome: "queue_full" });
    this.#byPrincipal.set(req.principalId, mine + 1);
    return new Promise((resolve) => {
      const finish = (v: ApprovalVerdict) => {
        const p = this.#pending.get(req.id);
        if (!p) return;
        clearTimeout(p.timer);
        this.#pending.delete(req.id);
        this.#remember(req.id, v);
        const n = (this.#byPrincipal.get(req.principalId) ?? 1) - 1;
        if (n > 0) this.#byPrincipal.set(req.principalId, n);
        else this.#byPrincipal.delete(req.principalId);
        resolve(v);
      };
      const timer = setTimeout(() => finish({ outcome: "timeout" }), Math.max(0, timeoutMs));
      this.#pending.set(req.id, { req, resolve: finish, timer });
      if (signal) {
        if (signal.aborted) finish({ outcome: "cancelled" });
        else signal.addEventListener("abort", () => finish({ outcome: "cancelled" }), { once: true });
      }
    });
  }

  pending(): ApprovalRequest[] {
    return [...this.#pending.values()].map((p) => p.req);
  }

  /** How an item no longer pending ended, while remembered (the last 4096). */
  decided(id: string): DecidedItem | undefined {
    return this.#decided.get(id);
  }

  /** The refusal of an answer to an item that is not pending: who answered first, or not found. */
  notPending(id: string): DecideResult {
    const d = this.#decided.get(id);
    if (d === undefined)
      return { ok: false, code: "ERR_APPROVAL_NOT_FOUND", message: "no pending approval with that id" };
    const how = d.approverId !== undefined ? `by ${d.approverId} (${d.outcome})` : `(${d.outcome})`;
    return { ok: false, code: "ERR_APPROVAL_ALREADY_DECIDED", message: `already decided ${how} at ${d.at}` };
  }

  #remember(id: string, v: ApprovalVerdict): void {
    if (this.#decided.size >= DECIDED_REMEMBERED)
      this.#decided.delete(this.#decided.keys().next().value as string);
    this.#decided.set(id, {
      outcome: v.outcome,
      ...("approver" in v ? { approverId: v.approver.id } : {}),
      at: new Date(this.#clock()).toISOString(),
    });
  }

  /** Whether verdicts must carry the approver's signature. */
  get signaturesRequired(): boolean {
    return this.#ring !== undefined;
  }

  decide(id: string, verdict: DecideVerdict): DecideResult {
    if ("signed" in verdict && verdict.signed !== undefined && this.#seen.has(verdict.signed.signature))
      return { ok: false, code: "ERR_APPROVAL_REPLAYED", message: "this approver signature was used before" };
    const p = this.#pending.get(id);
    if (!p) return this.notPending(id);
    const checked = this.check(p.req, verdict);
    if (checked.ok) p.resolve(verdict);
    return checked;
  }

  /**
   * Every check `decide` makes of a verdict on `req` (role, not the principal itself,
   * justification, the approver's signature, which is remembered against reuse), without
   * resolving anything: a replica validates a verdict for a call another replica holds.
   */
  check(req: ApprovalRequest, verdict: DecideVerdict): DecideResult {
    if ("signed" in verdict && verdict.signed !== undefined && this.#seen.has(verdict.signed.signature))
      return { ok: false, code: "ERR_APPROVAL_REPLAYED", message: "this approver signature was used before" };
    const p = { req };
    if (!("approver" in verdict))
      return { ok: false, code: "ERR_APPROVAL_INVALID", message: "a verdict names its approver" };
    if (!verdict.approver.roles.includes(p.req.approverRole)) {
      return {
        ok: false,
        code: "ERR_APPROVAL_FORBIDDEN",
        message: `approver lacks role ${p.req.approverRole}`,
      };
    }
    if (verdict.approver.id === p.req.principalId) {
      return {
        ok: false,
        code: "ERR_APPROVAL_FORBIDDEN",
        message: "a principal cannot approve its own action",
      };
    }
    if (verdict.justification.trim().length < MIN_JUSTIFICATION) {
      return {
        ok: false,
        code: "ERR_APPROVAL_INVALID",
        message: `justification must be at least ${MIN_JUSTIFICATION} characters`,
      };
    }
    return this.#checkSignature(p.req, verdict);
  }

  /** Resolves a pending request with a verdict already checked (and claimed in a shared queue). */
  settle(id: string, verdict: ApproverVerdict): boolean {
    const p = this.#pending.get(id);
    if (!p) return false;
    p.resolve(verdict);
    return true;
  }

  #checkSignature(req: ApprovalRequest, verdict: ApproverVerdict): DecideResult {
    const ring = this.#ring;
    if (ring === undefined) return { ok: true };
    const sig = verdict.signed;
    if (sig === undefined)
      return {
        ok: false,
        code: "ERR_APPROVAL_UNSIGNED",
        message: "approver keys are configured: sign the decision",
      };
    if (sig.decisionId !== req.decisionId)
      return {
        ok: false,
        code: "ERR_APPROVAL_WRONG_DECISION",
        message: "the signature is for another decision",
      };
    const at = Date.parse(sig.time);
    if (!Number.isFinite(at) || Math.abs(this.#clock() - at) > this.#skewMs)
      return {
        ok: false,
        code: "ERR_APPROVAL_REPLAYED",
        message: "the signature's time is outside the allowed window",
      };
    const statement: ApprovalStatement = {
      decision_id: req.decisionId,
      action: verdict.outcome,
      approver_id: verdict.approver.id,
      justification: verdict.justification,
      time: sig.time,
      ...(verdict.outcome === "modify" ? { parameters_hash: sha256Of(verdict.parameters) } : {}),
    };
    const c = checkApprovalSignature(ring, statement, sig.keyId, sig.signature);
    if (!c.ok) return c;
    if (this.#seen.size >= SEEN_SIGNATURES) this.#seen.delete(this.#seen.values().next().value as string);
    this.#seen.add(sig.signature);
    return { ok: true };
  }
}
