// Whether a journal's last record of the enforcing policy bundle already names a hash: a
// Gate composed again and again on the same journal (one-shot hook processes, one per host
// event) then journals its bundle only when it changed. The last few
// `warden.policy.bundle_loaded` entries are read through the index (newest first); shadow
// loads (`source: "shadow"`) are not the enforcing bundle's record and are passed over.
// Anything unexpected answers false: the bundle is journaled again, never lost.
import type { Sha256Hash } from "../contracts/index.js";
import type { JournalStore } from "../journal/index.js";

export const BUNDLE_LOADED = "warden.policy.bundle_loaded";
/** Bundle entries looked at, newest first, for the enforcing bundle's last one. */
const LOOK_BACK = 16;

export async function bundleRecorded(store: JournalStore, hash: Sha256Hash): Promise<boolean> {
  const recent = await store.query({ type: BUNDLE_LOADED, descending: true, limit: LOOK_BACK });
  for (const e of recent) {
    if (e.body.source === "shadow") continue;
    return e.body.policy_bundle_hash === hash;
  }
  return false;
}
