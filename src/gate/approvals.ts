// Step-up approvals (OATS §7.5): a blocked action waits for a human decision that
// arrives through this interface. In-process here; the sidecar exposes the same
// queue over HTTP. Approvers are checked against the role the policy asked for;
// no decision before the timeout means deny.
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
  | { outcome: "cancelled" };

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
  decide(
    id: string,
    verdict: Exclude<ApprovalVerdict, { outcome: "timeout" } | { outcome: "cancelled" }>,
  ): DecideResult;
}

interface Pending {
  req: ApprovalRequest;
  resolve: (v: ApprovalVerdict) => void;
  timer: NodeJS.Timeout;
}

const MIN_JUSTIFICATION = 10;

export class InProcessApprovals implements Approvals {
  readonly #pending = new Map<string, Pending>();

  request(req: ApprovalRequest, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalVerdict> {
    return new Promise((resolve) => {
      const finish = (v: ApprovalVerdict) => {
        const p = this.#pending.get(req.id);
        if (!p) return;
        clearTimeout(p.timer);
        this.#pending.delete(req.id);
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

  decide(
    id: string,
    verdict: Exclude<ApprovalVerdict, { outcome: "timeout" } | { outcome: "cancelled" }>,
  ): DecideResult {
    const p = this.#pending.get(id);
    if (!p) return { ok: false, code: "ERR_APPROVAL_NOT_FOUND", message: "no pending approval with that id" };
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
