// Trust in the journal: one `warden.trust.step` entry per derivation step (an event's
// adjustment, decay, expiry, lift, assertion) with its before/after and source ECT, one
// `warden.trust.emitted` entry per protocol ECT the engine asked for. `explainTrust`
// reads them back into a subject's derivation and checks that the steps chain (each
// step starts where the previous one ended), so a score is re-derivable from the journal.
import { z } from "zod";
import { isoTime } from "../contracts/index.js";
import type { EventTypeRegistry, Journal, JournalEntry } from "../journal/index.js";
import type { TrustChange } from "./engine.js";

export const TRUST_STEP_EVENT = "warden.trust.step";
export const TRUST_EMITTED_EVENT = "warden.trust.emitted";
/** A notification to a peer that every bounded retry failed to deliver (given up). */
export const TRUST_DELIVERY_FAILED_EVENT = "warden.trust.delivery_failed";

const Id = z.string().min(1).max(1024);
const Score = z.number().min(0).max(1);
const Time = z.string().min(1).max(64);

export const TrustStepBodySchema = z.strictObject({
  truster: Id,
  subject: Id,
  kind: z.enum([
    "task_success",
    "task_partial",
    "task_failure",
    "task_timeout",
    "policy_violation",
    "attestation_invalid",
    "rollback_triggered",
    "decay",
    "quarantine_expired",
    "quarantine_lifted",
    "quarantine_notice",
    "trust_assertion",
  ]),
  time: Time,
  ect: z.string().min(1).max(256).nullable(),
  before: Score,
  after: Score,
  note: z.string().max(1024).optional(),
});
export type TrustStepBody = z.infer<typeof TrustStepBodySchema>;

export const TrustEmittedBodySchema = z.strictObject({
  truster: Id,
  subject: Id,
  exec_act: z.enum(["apae:quarantine", "apae:trust_revoke"]),
  time: Time,
  ext: z.record(z.string(), z.union([z.string().max(2048), z.number()])),
});

export const TrustDeliveryFailedBodySchema = z.strictObject({
  peer: Id,
  jti: z.string().min(1).max(256),
  exec_act: z.string().min(1).max(256),
  attempts: z.number().int().min(1).max(100),
  /** The peer's last HTTP status, or null when it could not be reached. */
  last_status: z.number().int().nullable(),
});
export type TrustDeliveryFailedBody = z.infer<typeof TrustDeliveryFailedBodySchema>;

/** Registers the trust event types (idempotent). */
export function registerTrustEventTypes(registry: Pick<EventTypeRegistry, "has" | "register">): void {
  if (!registry.has(TRUST_DELIVERY_FAILED_EVENT))
    registry.register(TRUST_DELIVERY_FAILED_EVENT, TrustDeliveryFailedBodySchema);
  if (!registry.has(TRUST_STEP_EVENT)) registry.register(TRUST_STEP_EVENT, TrustStepBodySchema);
  if (!registry.has(TRUST_EMITTED_EVENT)) registry.register(TRUST_EMITTED_EVENT, TrustEmittedBodySchema);
}

/** The journal bodies of one change, in order: its steps, then its emissions. */
export function trustChangeBodies(change: TrustChange): { type: string; body: Record<string, unknown> }[] {
  const { truster, subject } = change.view;
  const steps = change.steps.map((s) => {
    const body: TrustStepBody = {
      truster,
      subject,
      kind: s.kind,
      time: isoTime(s.time),
      ect: s.ect,
      before: s.before,
      after: s.after,
    };
    if (s.note !== undefined) body.note = s.note;
    return { type: TRUST_STEP_EVENT, body };
  });
  const emitted = change.emitted.map((e) => ({
    type: TRUST_EMITTED_EVENT,
    body: {
      truster: e.truster,
      subject: e.subject,
      exec_act: e.execAct,
      time: isoTime(e.time),
      ext: { ...e.ext },
    },
  }));
  return [...steps, ...emitted];
}

/** Appends a change's entries; resolves when they are durable. */
export async function journalTrustChange(
  journal: Pick<Journal, "append">,
  change: TrustChange,
): Promise<void> {
  for (const e of trustChangeBodies(change)) await journal.append(e);
}

export interface Derivation {
  truster: string;
  subject: string;
  steps: (TrustStepBody & { seq: number })[];
  /** The score after the last step, or null when the journal holds none. */
  score: number | null;
  /** Places where a step does not start where the previous ended (a gap in the journal). */
  breaks: { seq: number; expected: number; found: number }[];
}

/** A subject's derivation from journal entries (in seq order), for one truster. */
export function explainTrust(entries: Iterable<JournalEntry>, subject: string, truster: string): Derivation {
  const out: Derivation = { truster, subject, steps: [], score: null, breaks: [] };
  for (const entry of entries) {
    if (entry.type !== TRUST_STEP_EVENT) continue;
    const parsed = TrustStepBodySchema.safeParse(entry.body);
    if (!parsed.success || parsed.data.subject !== subject || parsed.data.truster !== truster) continue;
    const step = parsed.data;
    if (out.score !== null && step.before !== out.score) {
      out.breaks.push({ seq: entry.seq, expected: out.score, found: step.before });
    }
    out.steps.push({ ...step, seq: entry.seq });
    out.score = step.after;
  }
  return out;
}
