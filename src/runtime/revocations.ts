// APAE's revocation floor at the composition root (issue 19): every `apae:trust_revoke` in
// the deployment's table voids the subject's capability tokens and delegation chains issued
// up to then. The floors live in memory, so at start they are rebuilt from the journal's
// `warden.trust.emitted` entries (the newest REPLAY_LIMIT of them; past that, the oldest one
// read becomes a floor for every principal, over-revoking rather than forgetting).
import type { JournalStore } from "../journal/index.js";
import { TRUST_EMITTED_EVENT } from "../trust/index.js";
import type { RuntimeApae } from "./apae.js";

export const REPLAY_LIMIT = 10_000;

/** What a revocation voids (the capability service and the delegated runs). */
export interface Revocable {
  revokePrincipal(principal: string, at: number): void;
  revokeAll?(at: number): void;
}

function revocationOf(
  body: Record<string, unknown>,
  self: string,
): { subject: string; at: number } | undefined {
  if (body.exec_act !== "apae:trust_revoke" || body.truster !== self) return undefined;
  const at = typeof body.time === "string" ? Date.parse(body.time) : Number.NaN;
  if (typeof body.subject !== "string" || !Number.isFinite(at)) return undefined;
  return { subject: body.subject, at };
}

/**
 * Replays the journaled revocations, then subscribes to new ones. Returns the unsubscribe.
 * `durable` (distributed mode: the shared floors) is written in the hook, which the trust
 * update awaits, so the floor is in the shared store before the answer that caused it.
 */
export async function wireRevocations(
  apae: RuntimeApae,
  store: Pick<JournalStore, "query">,
  targets: readonly Revocable[],
  durable?: { save(principal: string, at: number): Promise<void> },
): Promise<() => void> {
  const self = apae.engine.config.self_id;
  const entries = await store.query({ type: TRUST_EMITTED_EVENT, descending: true, limit: REPLAY_LIMIT });
  for (const e of entries) {
    const r = revocationOf(e.body, self);
    if (r !== undefined) for (const t of targets) t.revokePrincipal(r.subject, r.at);
  }
  const oldest = entries[entries.length - 1];
  if (entries.length >= REPLAY_LIMIT && oldest !== undefined) {
    // Older revocations were not read: everything issued by the oldest one read is void.
    const at = Date.parse(oldest.time);
    for (const t of targets) t.revokeAll?.(Number.isFinite(at) ? at : Number.POSITIVE_INFINITY);
  }
  return apae.onRevoke(async (r) => {
    for (const t of targets) t.revokePrincipal(r.subject, r.at);
    await durable?.save(r.subject, r.at);
  });
}
