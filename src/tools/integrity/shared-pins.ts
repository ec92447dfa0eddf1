// TOFU pins shared by several replicas (distributed mode, docs/distributed.md): the port
// through which the composition root hands this layer the shared table (src/store-pg
// tofu-pins.ts; this layer never imports it). Checks stay synchronous on an in-memory
// PinStore seeded from the table; every pin a check creates is then offered to the table,
// where the first pin of a (tool, domain) wins on every replica. A replica whose pin lost
// takes the winner's into its memory, so judging again refuses its key as `changed`.
import type { PinEntry, PinStore } from "./pin-store.js";

/** The shared pins of one kind (contract keys, or hook sources). */
export interface SharedPins {
  /** Every pin held. */
  load(): Promise<PinEntry[]>;
  /** Pins `entry` unless its (tool, domain) is pinned already; resolves with the pin that holds. */
  pinFirst(entry: PinEntry): Promise<PinEntry>;
}

/**
 * Offers `created` (pins the local store just made) to the shared store, in order. Every
 * pin that lost to another replica's is replaced in `local` by the winner, and returned.
 */
export async function offerPins(
  local: PinStore,
  created: readonly PinEntry[],
  shared: SharedPins,
): Promise<PinEntry[]> {
  const lost: PinEntry[] = [];
  for (const entry of created) {
    const winner = await shared.pinFirst(entry);
    if (winner.fingerprint === entry.fingerprint) continue;
    local.pin(winner.toolId, winner.domain, winner.fingerprint, { replace: true });
    lost.push(winner);
  }
  return lost;
}
