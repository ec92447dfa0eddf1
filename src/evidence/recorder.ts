// The replay recorder (DARE Replay Recorder): an entry point opens the evidence store
// beside its journal, hands it to composeRuntime as `deps.snapshots` (the executors put
// every response's raw bytes there, named by the output_hash they journal), and pins the
// bundle once the runtime is up. Nothing here is on a decision's path: the Gate decides
// and journals exactly as without the recorder; an execution adds one file write.
import type { Sha256Hash } from "../contracts/index.js";
import type { Journal } from "../journal/index.js";
import { type BundleSources, bundleBytes, collectBundle } from "./bundle.js";
import { bundleUri, EVIDENCE_BUNDLE_EVENT, type EvidenceBundleBody } from "./events.js";
import { EvidenceStore, type EvidenceStoreOptions } from "./store.js";

/** Opens (0700) the evidence store of a journal file: pass it as `deps.snapshots`. */
export function openRecorder(journalPath: string, o: EvidenceStoreOptions = {}): EvidenceStore {
  return EvidenceStore.open(journalPath, o);
}

/**
 * Stores the bundle (content-addressed, once) and journals `warden.evidence.bundle`
 * binding it to the runtime's policy bundle hash; resolves to the bundle hash once durable.
 */
export async function pinBundle(
  journal: Pick<Journal, "append">,
  store: EvidenceStore,
  sources: BundleSources,
  policyBundleHash: Sha256Hash,
): Promise<Sha256Hash> {
  const hash = store.putBundle(bundleBytes(collectBundle(sources)));
  const body: EvidenceBundleBody = {
    bundle_hash: hash,
    policy_bundle_hash: policyBundleHash,
    bundle_uri: bundleUri(hash),
  };
  await journal.append({ type: EVIDENCE_BUNDLE_EVENT, body });
  return hash;
}
