// Step-up approvals (OATS §7.5): a blocked action waits for a human decision that
// arrives through this interface. In-process here; the sidecar exposes the same
// queue over HTTP. Approvers are checked against the role the policy asked for;
// no decision before the timeout means deny. The queue is bounded, in all and per
// principal, so one agent cannot park unlimited calls on the approvers (beyond either
// bound the request is answered `queue_full` at once and the Gate denies).
import type { GateRequest } from "../contracts/index.js";

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
  | { outcome: "approve"; approver: Approver; justification: string }
  | { outcome: "deny"; approver: Approver; justification: string }
  | { outcome: "modify"; approver: Approver; justification: string; parameters: Record<string, unknown> }
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
      code: "ERR_APPROVAL_NOT_FOUND" | "ERR_APPROVAL_FORBIDDEN" | "ERR_APPROVAL_INVALID";
      message: string;
    };

export interface Approvals {
  /** Registers a pending approval and resolves with the verdict (or timeout/cancel). */
  request(req: ApprovalRequest, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalVerdict>;
  pending(): ApprovalRequest[];
  decide(id: string, verdict: DecideVerdict): DecideResult;
}

export interface ApprovalQueueOptions {
  /** Requests pending at once, in all (default 64). */
  maxPending?: number;
  /** Requests one principal may have pending at once (default a quarter of maxPending, at least 1). */
  maxPendingPerPrincipal?: number;
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

  constructor(opts: ApprovalQueueOptions = {}) {
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

  decide(id: string, verdict: DecideVerdict): DecideResult {
    const p = this.#pending.get(id);
    if (!p) return { ok: false, code: "ERR_APPROVAL_NOT_FOUND", message: "no pending approval with that id" };
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
    p.resolve(verdict);
    return { ok: true };
  }
}
