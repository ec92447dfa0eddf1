// The HookHost's ask port over the runtime's approval queue (src/gate approvals): an ask
// verdict becomes a pending approval an approver answers like a Gate step-up (`GET
// /v1/approvals` on the sidecar, `approvals.decide` in process). The approver sees the
// structured verdict — hook point, category, rule, artifacts — never the model's text.
// approve → "approved"; deny, modify (a host cannot apply a rewrite), timeout, a full
// queue or a cancellation → "denied": no answer is a denial.
import { GateRequest, uuidv7 } from "../contracts/index.js";
import type { Approvals } from "../gate/index.js";
import type { AskPort, AskRequest } from "./host.js";
import type { Resolution } from "./schema-base.js";

export interface ApprovalAskOptions {
  principalId: string;
  runId: string;
  /** The role that may answer (default "approver"). */
  approverRole?: string;
  /** Default 5 minutes; no answer by then is a denial. */
  timeoutMs?: number;
  clock?: () => number;
}

function parameters(req: AskRequest): Record<string, string | string[]> {
  const v = req.verdict;
  return {
    hook_point: req.hookPoint,
    session_id: req.sessionId.slice(0, 256),
    category: v.category.slice(0, 64),
    rule: (v.matched_rule_id ?? "").slice(0, 256),
    artifacts: (v.artifacts ?? []).slice(0, 16).map((a) => a.slice(0, 512)),
    reasons: (v.reasons ?? []).slice(0, 8).map((r) => r.slice(0, 512)),
  };
}

export function approvalQueueAsk(approvals: Approvals, o: ApprovalAskOptions): AskPort {
  const timeoutMs = o.timeoutMs ?? 300_000;
  return {
    async ask(req: AskRequest): Promise<Resolution> {
      const now = (o.clock ?? Date.now)();
      const request = GateRequest.parse({
        principalId: o.principalId,
        runId: o.runId,
        toolClass: "aarts",
        action: req.hookPoint,
        parameters: parameters(req),
      });
      const verdict = await approvals.request(
        {
          id: uuidv7(),
          decisionId: `aarts-ask-${uuidv7()}`,
          runId: o.runId,
          principalId: o.principalId,
          approverRole: o.approverRole ?? "approver",
          request,
          reasonCodes: req.verdict.matched_rule_id ? [req.verdict.matched_rule_id.slice(0, 256)] : [],
          matchedRules: req.verdict.matched_rule_id ? [req.verdict.matched_rule_id.slice(0, 256)] : [],
          createdAt: new Date(now).toISOString(),
          expiresAt: new Date(now + timeoutMs).toISOString(),
        },
        timeoutMs,
      );
      return verdict.outcome === "approve" ? "approved" : "denied";
    },
  };
}
