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
import { storeError } from "./connect.js";
import type { PgListener } from "./watch.js";

export const APPROVAL_CHANNEL = "warden_approvals";

/** How often a replica deletes expired rows (those of replicas that died waiting). */
const PRUNE_MS = 60_000;

export interface PgApprovalOptions {
  node: string;
  /** This replica's own queue: the waits, their bounds and every verdict check. */
  local: InProcessApprovals;
  /** Catch-up period when notifications are lost (default 1 s). */
  pollMs?: number;
  clock?: () => number;
}

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
  readonly #pool: pg.Pool;
  readonly #o: PgApprovalOptions;
  readonly #clock: () => number;
  /** Requests waiting on this replica whose row is stored. */
  readonly #mine = new Set<string>();
  readonly #poll: NodeJS.Timeout;
  #listener: PgListener | undefined;
  #pruned = 0;

  constructor(pool: pg.Pool, options: PgApprovalOptions) {
    this.#pool = pool;
    this.#o = options;
    this.#clock = options.clock ?? Date.now;
    this.#poll = setInterval(() => void this.#catchUp(), options.pollMs ?? 1000);
    this.#poll.unref();
  }

  /** Connects the notifications (the poll covers their absence). */
  async listen(open: (onPayload: (id: string) => void) => Promise<PgListener>): Promise<void> {
    this.#listener = await open((id) => {
      if (this.#mine.has(id)) void this.#resume([id]).catch(() => undefined);
    });
  }

  request(req: ApprovalRequest, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalVerdict> {
    const ctl = new AbortController();
    const abort = () => ctl.abort();
    if (signal?.aborted) ctl.abort();
    else signal?.addEventListener("abort", abort, { once: true });
    const waiting = this.#o.local.request(req, timeoutMs, ctl.signal);
    if (!this.#o.local.pending().some((p) => p.id === req.id)) return waiting; // queue_full
    const stored = this.#insert(req, timeoutMs).then(
      () => {
        this.#mine.add(req.id);
        return true;
      },
      () => {
        ctl.abort(); // no row, no approver anywhere: cancelled, the Gate denies
        return false;
      },
    );
    return waiting.finally(() => {
      signal?.removeEventListener("abort", abort);
      this.#mine.delete(req.id);
      void stored.then((ok) => (ok ? this.#remove(req.id) : undefined)).catch(() => undefined);
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

  async list(): Promise<ApprovalRequest[]> {
    const out = new Map(this.#o.local.pending().map((r) => [r.id, r]));
    try {
      const r = await this.#pool.query<{ id: string; request: string }>(
        "SELECT id, request FROM approvals WHERE verdict IS NULL AND expires_at > $1 ORDER BY expires_at LIMIT 1000",
        [this.#clock()],
      );
      for (const row of r.rows)
        if (!out.has(row.id)) out.set(row.id, JSON.parse(row.request) as ApprovalRequest);
    } catch (err) {
      throw storeError("approval queue", err);
    }
    return [...out.values()];
  }

  /** The operators' queue: every replica's requests, answered from here. */
  queue(): ApprovalQueue {
    return { list: () => this.list(), decide: (id, verdict) => this.decideAnywhere(id, verdict) };
  }

  /** A verdict given on this replica for a request waiting on any replica. */
  async decideAnywhere(id: string, verdict: DecideVerdict): Promise<DecideResult> {
    const here = this.#o.local.pending().find((p) => p.id === id);
    const req = here ?? (await this.#load(id));
    if (req === undefined) return NOT_FOUND;
    const checked = this.#o.local.check(req, verdict);
    if (!checked.ok) return checked;
    if (!(await this.#claim(id, verdict))) return NOT_FOUND;
    if (here !== undefined && !this.#o.local.settle(id, verdict as ApproverVerdict)) return NOT_FOUND;
    return { ok: true };
  }

  async close(): Promise<void> {
    clearInterval(this.#poll);
    await this.#listener?.close();
  }

  async #insert(req: ApprovalRequest, timeoutMs: number): Promise<void> {
    await this.#pool.query(
      "INSERT INTO approvals (id, decision_id, run_id, principal_id, node, request, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      [
        req.id,
        req.decisionId,
        req.runId,
        req.principalId,
        this.#o.node,
        JSON.stringify(storable(req)),
        this.#clock() + timeoutMs,
      ],
    );
  }

  async #remove(id: string): Promise<void> {
    await this.#pool.query("DELETE FROM approvals WHERE id = $1", [id]);
  }

  async #load(id: string): Promise<ApprovalRequest | undefined> {
    try {
      const r = await this.#pool.query<{ request: string }>(
        "SELECT request FROM approvals WHERE id = $1 AND verdict IS NULL AND expires_at > $2",
        [id, this.#clock()],
      );
      const text = r.rows[0]?.request;
      return text === undefined ? undefined : (JSON.parse(text) as ApprovalRequest);
    } catch (err) {
      throw storeError("approval queue", err);
    }
  }

  /** The one verdict of a request: true when this call stored it. */
  async #claim(id: string, verdict: DecideVerdict): Promise<boolean> {
    const by = "approver" in verdict ? verdict.approver.id : "";
    try {
      const r = await this.#pool.query(
        "WITH claimed AS (UPDATE approvals SET verdict = $2, decided_by = $3, decided_at = $4 " +
          "WHERE id = $1 AND verdict IS NULL AND expires_at > $4 RETURNING id) " +
          `SELECT pg_notify('${APPROVAL_CHANNEL}', id) FROM claimed`,
        [id, JSON.stringify(verdict), by, this.#clock()],
      );
      return r.rowCount === 1;
    } catch (err) {
      throw storeError("approval queue", err);
    }
  }

  /** Resumes this replica's waits whose verdict another replica stored (checked again here). */
  async #resume(ids: string[]): Promise<void> {
    const r = await this.#pool.query<{ id: string; verdict: string }>(
      "SELECT id, verdict FROM approvals WHERE id = ANY($1::text[]) AND verdict IS NOT NULL",
      [ids],
    );
    for (const row of r.rows) {
      const req = this.#o.local.pending().find((p) => p.id === row.id);
      if (req === undefined) continue;
      let verdict: ApproverVerdict;
      try {
        verdict = StoredVerdict.parse(JSON.parse(row.verdict)) as ApproverVerdict;
      } catch {
        continue; // unreadable: never resumes anything (the wait times out: deny)
      }
      if (this.#o.local.check(req, verdict).ok) this.#o.local.settle(row.id, verdict);
    }
  }

  async #catchUp(): Promise<void> {
    const now = this.#clock();
    if (now - this.#pruned >= PRUNE_MS) {
      this.#pruned = now;
      // Rows of replicas that died with a call waiting: past their expiry nobody can answer them.
      await this.#pool.query("DELETE FROM approvals WHERE expires_at <= $1", [now]).catch(() => undefined);
    }
    if (this.#mine.size === 0) return;
    await this.#resume([...this.#mine]).catch(() => undefined);
  }
}
