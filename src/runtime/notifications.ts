// Approvals anywhere (docs/console.md#approvals-anywhere): the runtime's notifier and the
// one-time approval links it hands out. A step-up the Gate parks on the approval queue (or a
// deferred action it holds) is told to the configured notifiers (after it is queued, off the decision path: a notifier
// that hangs or fails delays nothing and changes nothing), with a link to the console's
// approval page for that one item. A link is a random 256-bit token, kept only as its hash,
// bound to one approval and valid until the approval expires; opening it still needs the
// approver's sign-in and key, and the first valid answer anywhere wins. The `notify`
// obligation uses the same notifier.
import { createHash, randomBytes } from "node:crypto";
import { Notifier, type NotifierTarget, type ObligationNotice } from "../executors/index.js";
import type { ApprovalRequest, Approvals, ApprovalVerdict, DeferredItem } from "../gate/index.js";
import type { Journal } from "../journal/index.js";

export interface RuntimeNotificationsConfig {
  targets: readonly NotifierTarget[];
  /** The console's public base URL (e.g. `https://warden.example.com`); links need it. */
  publicUrl?: string;
  attempts?: number;
  backoffMs?: number;
  timeoutMs?: number;
  maxQueue?: number;
}

const MAX_LINKS = 4096;

interface LinkTarget {
  approvalId: string;
  decisionId: string;
  expiresAt: number;
}

/** One-time approval links: token → one approval, until it expires (bounded, oldest dropped). */
export class ApprovalLinks {
  readonly #byHash = new Map<string, LinkTarget>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  issue(approvalId: string, decisionId: string, expiresAt: number): string {
    const token = randomBytes(32).toString("base64url");
    if (this.#byHash.size >= MAX_LINKS) this.#byHash.delete(this.#byHash.keys().next().value as string);
    this.#byHash.set(hashOf(token), { approvalId, decisionId, expiresAt });
    return token;
  }

  /** The approval a token names, unless unknown, malformed or expired. */
  resolve(token: string): { approvalId: string; decisionId: string } | undefined {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const t = this.#byHash.get(hashOf(token));
    if (t === undefined || t.expiresAt <= this.#clock()) return undefined;
    return { approvalId: t.approvalId, decisionId: t.decisionId };
  }
}

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

export interface RuntimeNotifications {
  notifier: Notifier;
  links: ApprovalLinks;
  /** The `notify` obligation's port. */
  obligation(n: ObligationNotice): void;
  /** `approvals` telling the notifiers about every request it queues. */
  wrap(approvals: Approvals): Approvals;
  /** Tells the notifiers of a deferred action as it is held. */
  deferred(item: DeferredItem): void;
}

export function openNotifications(
  config: RuntimeNotificationsConfig | undefined,
  journal: Journal,
  clock: () => number,
): RuntimeNotifications | undefined {
  if (config === undefined) return undefined;
  const notifier = new Notifier({
    targets: config.targets,
    journal,
    clock,
    ...(config.attempts !== undefined ? { attempts: config.attempts } : {}),
    ...(config.backoffMs !== undefined ? { backoffMs: config.backoffMs } : {}),
    ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    ...(config.maxQueue !== undefined ? { maxQueue: config.maxQueue } : {}),
  });
  const links = new ApprovalLinks(clock);
  const base = config.publicUrl?.replace(/\/+$/, "");
  const tell = (req: ApprovalRequest) => {
    const expires = Date.parse(req.expiresAt);
    const link =
      base === undefined ? undefined : `${base}/console/a/${links.issue(req.id, req.decisionId, expires)}`;
    notifier.notify({
      kind: "approval_pending",
      decisionId: req.decisionId,
      runId: req.runId,
      principalId: req.principalId,
      tool: req.tool?.name ?? req.request.tool ?? `${req.request.toolClass}.${req.request.action}`,
      toolClass: req.request.toolClass,
      action: req.request.action,
      parameters: req.request.parameters,
      reasonCodes: req.reasonCodes,
      matchedRules: req.matchedRules,
      expiresAt: req.expiresAt,
      ...(link !== undefined ? { link } : {}),
    });
  };
  const deferred = (item: DeferredItem) => {
    const link =
      base === undefined
        ? undefined
        : `${base}/console/a/${links.issue(item.id, item.decisionId, Date.parse(item.expiresAt))}`;
    notifier.notify({
      kind: "deferred",
      decisionId: item.decisionId,
      runId: item.runId,
      ...(item.principalId !== undefined ? { principalId: item.principalId } : {}),
      tool: item.summary.tool ?? `${item.summary.toolClass}.${item.summary.action}`,
      toolClass: item.summary.toolClass,
      action: item.summary.action,
      expiresAt: item.expiresAt,
      ...(link !== undefined ? { link } : {}),
    });
  };
  return {
    notifier,
    links,
    deferred,
    obligation: (n) => notifier.notify({ kind: "obligation", ...n }),
    wrap: (inner) => ({
      request(req: ApprovalRequest, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalVerdict> {
        const waiting = inner.request(req, timeoutMs, signal);
        // Told only once it is queued (a full queue answers at once and is not told).
        if (inner.pending().some((p) => p.id === req.id)) {
          try {
            tell(req);
          } catch {
            // The notifier's queue is full: the approval waits in the console as always.
          }
        }
        return waiting;
      },
      pending: () => inner.pending(),
      decide: (id, verdict) => inner.decide(id, verdict),
    }),
  };
}
