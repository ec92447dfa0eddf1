// Obligations are enforced, not advisory: a decision's obligations ride on its ticket and
// the executor path refuses to complete an action whose obligations it cannot meet
// (ERR_EXEC_OBLIGATION_UNMET, fail closed; an unknown type is unmet). Before the attempt:
// `require_hitl` (also DARE's `hitl_approval`) needs the signed HITL approval that released
// the ticket; `rate_limit` {max, window_ms} counts executions per run and tool in a
// sliding window; `notify` {channel} needs the runtime's notifier to accept the notice;
// `log` {level} and `audit_log` are met by the journal entry below. After the attempt:
// `mask_fields` {fields} replaces those JSON fields of the output before the caller sees
// it (an output that is not a JSON object cannot be masked: refused, output withheld).
// Every check is journaled (`warden.executor.obligations`: fulfilled or unmet) before the
// action completes.
import { z } from "zod";
import type { ExecutionTicket, TicketObligation } from "../gate/index.js";

export const OBLIGATIONS_EVENT = "warden.executor.obligations";

const LEVELS = ["debug", "info", "warn", "error"] as const;

export const ObligationsBody = z.strictObject({
  decision_id: z.string().min(1).max(256),
  tool: z.string().min(1).max(256),
  fulfilled: z.array(z.strictObject({ type: z.string(), detail: z.string().max(512) })),
  unmet: z.strictObject({ type: z.string(), reason: z.string().max(512) }).optional(),
});
export type ObligationsBody = z.infer<typeof ObligationsBody>;

/** A notice an obligation asks for; the runtime's notifier delivers it (or throws). */
export interface ObligationNotice {
  channel: string;
  decisionId: string;
  runId: string;
  tool: string;
}

export interface ObligationPorts {
  notify?: (n: ObligationNotice) => void | Promise<void>;
  /** Shared by all executions of a runtime (rate_limit windows). */
  windows?: RateWindows;
  now?: () => number;
}

/** Sliding-window counters per (run, tool, obligation); bounded by the number of keys kept. */
export class RateWindows {
  readonly #hits = new Map<string, number[]>();
  take(key: string, max: number, windowMs: number, now: number): boolean {
    const kept = (this.#hits.get(key) ?? []).filter((t) => t > now - windowMs);
    if (kept.length >= max) {
      this.#hits.set(key, kept);
      return false;
    }
    kept.push(now);
    if (!this.#hits.has(key) && this.#hits.size >= 10_000)
      this.#hits.delete(this.#hits.keys().next().value as string);
    this.#hits.set(key, kept);
    return true;
  }
}

export type PreCheck =
  | { ok: true; fulfilled: ObligationsBody["fulfilled"]; mask: string[] }
  | { ok: false; fulfilled: ObligationsBody["fulfilled"]; unmet: { type: string; reason: string } };

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

type Step = { detail: string } | { reason: string } | { mask: string[] };

async function one(o: TicketObligation, t: ExecutionTicket, tool: string, p: ObligationPorts): Promise<Step> {
  const params = o.params ?? {};
  switch (o.type) {
    case "require_hitl":
    case "hitl_approval": {
      const a = t.approval;
      if (a === undefined || a.signature === "") return { reason: "no HITL approval released this action" };
      if (!a.approverSigned) return { reason: "the approval was not signed by the approver's key" };
      return { detail: `approval ${a.approvalId} by ${a.approver}, signed by key ${a.signingKeyId}` };
    }
    case "log":
    case "audit_log": {
      const level = params.level ?? "info";
      if (!LEVELS.includes(level as (typeof LEVELS)[number]))
        return { reason: `unknown log level ${String(level)}` };
      return { detail: `journaled at level ${String(level)}` };
    }
    case "rate_limit": {
      const max = num(params.max);
      const windowMs = num(params.window_ms) ?? 60_000;
      if (max === undefined || max < 0 || windowMs <= 0)
        return { reason: "rate_limit needs max and window_ms" };
      const ok = (p.windows ?? SHARED).take(`${t.runId}\u0000${tool}`, max, windowMs, (p.now ?? Date.now)());
      return ok
        ? { detail: `within ${max} per ${windowMs} ms` }
        : { reason: `more than ${max} per ${windowMs} ms` };
    }
    case "notify": {
      const channel = typeof params.channel === "string" ? params.channel : "default";
      if (p.notify === undefined) return { reason: "no notifier is configured" };
      try {
        await p.notify({ channel, decisionId: t.decisionId, runId: t.runId, tool });
      } catch {
        return { reason: `the notifier refused channel ${channel}` };
      }
      return { detail: `notified ${channel}` };
    }
    case "mask_fields": {
      const fields = params.fields;
      if (!Array.isArray(fields) || fields.some((f) => typeof f !== "string"))
        return { reason: "mask_fields needs fields: string[]" };
      return { mask: fields as string[] };
    }
    default:
      return { reason: `unknown obligation type ${o.type}` };
  }
}

const SHARED = new RateWindows();

/** The obligations that can be met before the attempt; the fields to mask after it. */
export async function checkObligations(
  t: ExecutionTicket,
  tool: string,
  p: ObligationPorts,
): Promise<PreCheck> {
  const fulfilled: ObligationsBody["fulfilled"] = [];
  const mask: string[] = [];
  for (const o of t.obligations) {
    const r = await one(o, t, tool, p);
    if ("reason" in r) return { ok: false, fulfilled, unmet: { type: o.type, reason: r.reason } };
    if ("mask" in r) mask.push(...r.mask);
    else fulfilled.push({ type: o.type, detail: r.detail });
  }
  return { ok: true, fulfilled, mask };
}

function maskJson(value: unknown, fields: readonly string[]): number {
  let n = 0;
  for (const f of fields) {
    const path = f.split(".");
    let cur: unknown = value;
    for (const k of path.slice(0, -1))
      cur = cur && typeof cur === "object" ? (cur as Record<string, unknown>)[k] : undefined;
    const last = path[path.length - 1] as string;
    if (cur && typeof cur === "object" && Object.hasOwn(cur, last)) {
      (cur as Record<string, unknown>)[last] = "[MASKED]";
      n++;
    }
  }
  return n;
}

/**
 * The output with the fields masked in its JSON bytes (the `body`, `stdout` or `content`
 * buffer of the http, process and file outputs); undefined when it cannot be masked.
 */
export function maskOutput<O>(
  output: O,
  fields: readonly string[],
): { output: O; masked: number } | undefined {
  if (output === null || typeof output !== "object") return undefined;
  for (const key of ["body", "stdout", "content"]) {
    const buf = (output as Record<string, unknown>)[key];
    if (!Buffer.isBuffer(buf)) continue;
    let json: unknown;
    try {
      json = JSON.parse(buf.toString("utf8"));
    } catch {
      return undefined;
    }
    if (json === null || typeof json !== "object") return undefined;
    const masked = maskJson(json, fields);
    return { output: { ...output, [key]: Buffer.from(JSON.stringify(json)) } as O, masked };
  }
  return undefined;
}
