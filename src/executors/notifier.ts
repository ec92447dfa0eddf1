// Notifiers (docs/console.md#approvals-anywhere): tell operators, outside the console, that a
// call waits for them (a step-up or a deferral) or that a `notify` obligation fired. Targets
// are operator-configured: a generic webhook (JSON, HMAC-SHA256 signed) or a Slack-compatible
// incoming webhook. Delivery never blocks a decision: `notify` only queues (bounded; a full
// queue is refused, which a `notify` obligation turns into a refusal of its action), and a
// background loop posts each notice with a timeout, retries with doubling backoff, and
// journals every attempt (`warden.notify.delivery`). What a notice carries is what the
// console shows — tool, parameters marked as agent-controlled, reason codes, never the
// model's rationale — and a one-time link to the approval page.
import { createHmac, randomUUID } from "node:crypto";
import { z } from "zod";
import { abortScope } from "../contracts/index.js";
import { type Notice, renderNotice } from "./notice-render.js";

export type { Notice } from "./notice-render.js";

export const NOTIFY_DELIVERY_EVENT = "warden.notify.delivery";

export const NotifyDeliveryBody = z.strictObject({
  notice_id: z.string().min(1).max(128),
  kind: z.string().min(1).max(64),
  decision_id: z.string().min(1).max(256),
  target: z.string().min(1).max(128),
  attempt: z.number().int().min(1),
  ok: z.boolean(),
  final: z.boolean(),
  status: z.number().int().optional(),
  error: z.string().max(300).optional(),
});

export interface NotifierTarget {
  /** Named in the delivery journal (never the URL: an incoming-webhook URL is a secret). */
  name: string;
  kind: "webhook" | "slack";
  url: string;
  /** HMAC-SHA256 key of the `x-warden-signature` header (webhooks; required for them). */
  secret?: string;
  /** The `notify` obligation channels this target takes (default: every channel). */
  channels?: readonly string[];
}

export interface NotifierOptions {
  targets: readonly NotifierTarget[];
  /** Where every attempt is journaled. */
  journal: {
    append(input: { type: string; run_id?: string; body: Record<string, unknown> }): Promise<unknown>;
  };
  /** Attempts per notice and target (default 4). */
  attempts?: number;
  /** First retry delay, doubled each time (default 1 s). */
  backoffMs?: number;
  /** Per attempt (default 5 s): a target that hangs is abandoned, then retried. */
  timeoutMs?: number;
  /** Deliveries waiting at once (default 256); beyond it `notify` throws. */
  maxQueue?: number;
  fetch?: typeof fetch;
  clock?: () => number;
}

export class Notifier {
  readonly #o: Required<Omit<NotifierOptions, "fetch" | "clock">> & {
    fetch: typeof fetch;
    clock: () => number;
  };
  #inFlight = 0;
  readonly #running = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  constructor(o: NotifierOptions) {
    for (const t of o.targets)
      if (t.kind === "webhook" && (t.secret === undefined || t.secret.length < 16))
        throw new RangeError(`notifier ${t.name}: a webhook needs a secret of at least 16 characters`);
    this.#o = {
      targets: o.targets,
      journal: o.journal,
      attempts: o.attempts ?? 4,
      backoffMs: o.backoffMs ?? 1000,
      timeoutMs: o.timeoutMs ?? 5000,
      maxQueue: o.maxQueue ?? 256,
      fetch: o.fetch ?? fetch,
      clock: o.clock ?? Date.now,
    };
  }

  /** Queues `n` for every target that takes it; throws when the queue is full (nothing queued). */
  notify(n: Notice): void {
    const targets = this.#o.targets.filter(
      (t) => n.channel === undefined || t.channels === undefined || t.channels.includes(n.channel),
    );
    if (targets.length === 0) throw new Error(`no notifier takes channel ${n.channel ?? "(none)"}`);
    if (this.#inFlight + targets.length > this.#o.maxQueue) throw new Error("the notifier's queue is full");
    const id = randomUUID();
    for (const t of targets) {
      this.#inFlight++;
      const p = this.#deliver(id, t, n).finally(() => {
        this.#inFlight--;
        this.#running.delete(p);
      });
      this.#running.add(p);
    }
  }

  /** Resolves when every queued delivery has ended (tests); `close` abandons retries. */
  async settle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.settle();
  }

  async #deliver(id: string, t: NotifierTarget, n: Notice): Promise<void> {
    const body = renderNotice(t.kind, id, n);
    for (let attempt = 1; attempt <= this.#o.attempts; attempt++) {
      const r = await this.#post(id, t, body);
      const final = r.ok || attempt === this.#o.attempts || this.#stop.signal.aborted;
      await this.#o.journal
        .append({
          type: NOTIFY_DELIVERY_EVENT,
          run_id: n.runId,
          body: {
            notice_id: id,
            kind: n.kind,
            decision_id: n.decisionId,
            target: t.name,
            attempt,
            ok: r.ok,
            final,
            ...(r.status !== undefined ? { status: r.status } : {}),
            ...(r.error !== undefined ? { error: r.error.slice(0, 300) } : {}),
          },
        })
        .catch(() => undefined);
      if (final) return;
      await sleep(this.#o.backoffMs * 2 ** (attempt - 1), this.#stop.signal);
    }
  }

  async #post(
    id: string,
    t: NotifierTarget,
    body: string,
  ): Promise<{ ok: boolean; status?: number; error?: string }> {
    const ts = String(Math.floor(this.#o.clock() / 1000));
    const headers: Record<string, string> = { "content-type": "application/json", "x-warden-delivery": id };
    if (t.secret !== undefined) {
      headers["x-warden-timestamp"] = ts;
      headers["x-warden-signature"] = `v1=${signNotice(t.secret, ts, body)}`;
    }
    // Follows the notifier's stop signal only while this delivery runs (abortScope).
    const scope = abortScope(this.#stop.signal);
    const timer = setTimeout(
      () => scope.abort(new DOMException("timed out", "TimeoutError")),
      this.#o.timeoutMs,
    );
    try {
      const res = await this.#o.fetch(t.url, {
        method: "POST",
        headers,
        body,
        redirect: "error",
        signal: scope.signal,
      });
      await res.body?.cancel().catch(() => undefined);
      return res.ok ? { ok: true, status: res.status } : { ok: false, status: res.status };
    } catch (err) {
      return { ok: false, error: (err as Error).name === "TimeoutError" ? "timeout" : "unreachable" };
    } finally {
      clearTimeout(timer);
      scope.release();
    }
  }
}

/** The `x-warden-signature` value (without `v1=`): HMAC-SHA256 over `<timestamp>.<body>`, hex. */
export function signNotice(secret: string, timestamp: string, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    t.unref();
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
