// The approval queue shared by every replica (docs/distributed.md, "Step-up across
// replicas"). A call that waits on a human waits on the replica that holds it (its local
// InProcessApprovals: bounds, timeout, cancellation), and its request is also a row of
// `approvals`, so an operator on any replica lists it and answers it:
//   decide  = the verdict is checked on the answering replica (role, not the principal
//             itself, justification, the approver's signature) and claimed by one
//             statement, `UPDATE … SET verdict WHERE verdict IS NULL AND expires_at > now`,
//             which NOTIFYs `warden_approvals` at COMMIT: one verdict per request, ever,
//             whichever replicas answer at once;
//   resume  = the holder LISTENs; on the notification (or, when notifications are lost,
//             its poll every `pollMs`) it reads the verdict, checks it again itself and
//             resumes the call, which the Gate journals there, once.
// A request whose row could not be stored is cancelled (the Gate denies it: fail closed);
// a row is deleted when its wait ends (verdict, timeout, cancel), so it cannot be answered late.
import type pg from "pg";
import { z } from "zod";
import type {
  ApprovalQueue,
  ApprovalRequest,
  Approvals,
  ApprovalVerdict,
  ApproverVerdict,
  DecideResult,
  DecideVerdict,
  InProcessApprovals,
} from "../gate/index.js";
import { type SharedQueueOptions, VerdictRows } from "./verdict-rows.js";
import type { PgListener } from "./watch.js";

export const APPROVAL_CHANNEL = "warden_approvals";

/** `local`: this replica's own queue (the waits, their bounds and every verdict check). */
export type PgApprovalOptions = SharedQueueOptions<InProcessApprovals>;

const Approver = z.strictObject({ id: z.string().min(1), roles: z.array(z.string()) });
const Signed = z.strictObject({
  decisionId: z.string(),
  keyId: z.string(),
  signature: z.string(),
  time: z.string(),
});
const Common = { approver: Approver, justification: z.string(), signed: Signed.optional() };
const StoredVerdict = z.discriminatedUnion("outcome", [
  z.strictObject({ outcome: z.literal("approve"), ...Common }),
  z.strictObject({ outcome: z.literal("deny"), ...Common }),
  z.strictObject({ outcome: z.literal("modify"), parameters: z.record(z.string(), z.unknown()), ...Common }),
]);

/**
 * What of a request is stored for the other replicas: never the capability token (a bearer
 * credential), nor the model's rationale or the original request (free text an approver
 * never sees, views.ts); the approvers' view and every verdict check need none of them.
 */
function storable(req: ApprovalRequest): ApprovalRequest {
  const { capability: _token, rationale: _why, originalRequest: _asked, ...request } = req.request;
  return { ...req, request: request as ApprovalRequest["request"] };
}

const NOT_FOUND: DecideResult = {
  ok: false,
  code: "ERR_APPROVAL_NOT_FOUND",
  message: "no pending approval with that id",
};

export class PgApprovalQueue implements Approvals {
  readonly #o: PgApprovalOptions;
  readonly #rows: VerdictRows<ApprovalRequest>;

  constructor(pool: pg.Pool, options: PgApprovalOptions) {
    this.#o = options;
    this.#rows = new VerdictRows(pool, {
      table: "approvals",
      column: "request",
      channel: APPROVAL_CHANNEL,
      what: "approval queue",
      node: options.node,
      parse: (text) => JSON.parse(text) as ApprovalRequest,
      apply: (id, verdict) => this.#resume(id, verdict),
      pollMs: options.pollMs,
      clock: options.clock ?? Date.now,
    });
  }

  /** Connects the notifications (the poll covers their absence). */
  listen(open: (onPayload: (id: string) => void) => Promise<PgListener>): Promise<void> {
    return this.#rows.listen(open);
  }

  request(req: ApprovalRequest, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalVerdict> {
    const ctl = new AbortController();
    const abort = () => ctl.abort();
    if (signal?.aborted) ctl.abort();
    else signal?.addEventListener("abort", abort, { once: true });
    const waiting = this.#o.local.request(req, timeoutMs, ctl.signal);
    if (!this.#o.local.pending().some((p) => p.id === req.id)) return waiting; // queue_full
    // No row, no approver anywhere: cancelled, the Gate denies.
    this.#rows.stored(req, storable(req), timeoutMs).catch(() => ctl.abort());
    return waiting.finally(() => {
      signal?.removeEventListener("abort", abort);
      this.#rows.ended(req.id);
    });
  }

  /** This replica's waiting requests (the Approvals view; `list` has every replica's). */
  pending(): ApprovalRequest[] {
    return this.#o.local.pending();
  }

  /** In-process verdicts (no HTTP): this replica's requests only, as before distributed mode. */
  decide(id: string, verdict: DecideVerdict): DecideResult {
    return this.#o.local.decide(id, verdict);
  }

  list(): Promise<ApprovalRequest[]> {
    return this.#rows.list(new Map(this.#o.local.pending().map((r) => [r.id, r])));
  }

  /** The operators' queue: every replica's requests, answered from here. */
  queue(): ApprovalQueue {
    return { list: () => this.list(), decide: (id, verdict) => this.decideAnywhere(id, verdict) };
  }

  /** A verdict given on this replica for a request waiting on any replica. */
  async decideAnywhere(id: string, verdict: DecideVerdict): Promise<DecideResult> {
    const here = this.#o.local.pending().find((p) => p.id === id);
    const req = here ?? (await this.#rows.load(id));
    if (req === undefined) return NOT_FOUND;
    const checked = this.#o.local.check(req, verdict);
    if (!checked.ok) return checked;
    const by = "approver" in verdict ? verdict.approver.id : "";
    if (!(await this.#rows.claim(id, verdict, by))) return NOT_FOUND;
    if (here !== undefined && !this.#o.local.settle(id, verdict as ApproverVerdict)) return NOT_FOUND;
    return { ok: true };
  }

  close(): Promise<void> {
    return this.#rows.close();
  }

  /** Resumes this replica's wait whose verdict another replica stored (checked again here). */
  #resume(id: string, text: string): void {
    const req = this.#o.local.pending().find((p) => p.id === id);
    if (req === undefined) return;
    let verdict: ApproverVerdict;
    try {
      verdict = StoredVerdict.parse(JSON.parse(text)) as ApproverVerdict;
    } catch {
      return; // unreadable: never resumes anything (the wait times out: deny)
    }
    if (this.#o.local.check(req, verdict).ok) this.#o.local.settle(id, verdict);
  }
}
