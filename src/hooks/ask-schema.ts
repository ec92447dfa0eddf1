// The format of the engine's ask records (ask-record.ts) in the hook state (state.ts), and
// how two invocations' records merge.
import { z } from "zod";

/** An ask is resolved within an hour or not at all. */
export const ASK_TTL_MS = 60 * 60 * 1000;
export const MAX_ASKS = 256;

export const AskRecordSchema = z.strictObject({
  id: z.string().regex(/^ask_[A-Za-z0-9_-]{22,64}$/),
  session: z.string().min(1).max(256),
  hook: z.string().min(1).max(64),
  artifacts: z.array(z.string().max(4096)).max(64),
  issuedAt: z.string().max(64),
  resolved: z.boolean().default(false),
  mac: z.string().regex(/^[0-9a-f]{64}$/),
});
export type AskRecord = z.infer<typeof AskRecordSchema>;

/** Two invocations' records: a union by id; resolved in either is resolved. */
export function mergeAsks(disk: readonly AskRecord[], mine: readonly AskRecord[]): AskRecord[] {
  const byId = new Map<string, AskRecord>();
  for (const a of [...disk, ...mine]) {
    const d = byId.get(a.id);
    byId.set(a.id, d ? { ...a, resolved: a.resolved || d.resolved } : a);
  }
  return [...byId.values()].slice(-MAX_ASKS);
}
