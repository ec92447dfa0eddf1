// The journal entries of the replay recorder. `warden.evidence.bundle` pins the bundle
// that decides from here on: its hash (the sha-256 of the canonical bundle document in the
// evidence store) and the policy bundle hash that every later decision record carries, so
// a decision finds its bundle through the journal, never through a file that could be
// swapped. Registered with the journal's default registry (append and verify check it).
import { z } from "zod";
import { Sha256HashSchema } from "../contracts/index.js";
import { defaultEventTypes } from "../journal/index.js";

export const EVIDENCE_BUNDLE_EVENT = "warden.evidence.bundle";

export const EvidenceBundleBody = z.strictObject({
  bundle_hash: Sha256HashSchema,
  policy_bundle_hash: Sha256HashSchema,
  bundle_uri: z.string().min(1).max(512),
});
export type EvidenceBundleBody = z.infer<typeof EvidenceBundleBody>;

if (!defaultEventTypes.has(EVIDENCE_BUNDLE_EVENT))
  defaultEventTypes.register(EVIDENCE_BUNDLE_EVENT, EvidenceBundleBody);

/** The URI of a stored bundle. */
export function bundleUri(hash: string): string {
  return `immutable://bundles/${hash.slice("sha256:".length)}`;
}
