// Journal hygiene: parameters are journaled verbatim only up to a size cap. Beyond it an
// entry carries `parameters: {}` and `parameters_elided: { sha256, bytes, prefix }`, so a
// call (allowed or denied) cannot write megabytes into the signed, never-pruned journal;
// the hash still binds the entry to the exact parameters (the request_hash binds the
// whole request).

import type { ElidedParameters, GATE_DECISION } from "../contracts/index.js";
import type { BuiltinBodies } from "../journal/index.js";

/** Parameters as a journal body types them (they are JSON: they passed the request schema). */
type JournalParams = BuiltinBodies[typeof GATE_DECISION]["parameters"];

import { canonicalJson, sha256Hex } from "../contracts/index.js";

/** Default cap on journaled parameters, in bytes of canonical JSON. */
export const JOURNAL_PARAMETERS_MAX_BYTES = 4096;
const PREFIX_CHARS = 256;

/** The journal fields for `params`: verbatim under the cap, else `{}` plus the elision. */
export function journaledParameters(
  params: Record<string, unknown>,
  maxBytes: number = JOURNAL_PARAMETERS_MAX_BYTES,
): { parameters: JournalParams; parameters_elided?: ElidedParameters } {
  // A string is at most 3 bytes per UTF-16 unit: small parameters skip the byte count.
  const text = canonicalJson(params);
  if (text.length * 3 <= maxBytes) return { parameters: params as JournalParams };
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return { parameters: params as JournalParams };
  let prefix = text.slice(0, Math.min(PREFIX_CHARS, maxBytes));
  // never end on half a surrogate pair
  const last = prefix.charCodeAt(prefix.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) prefix = prefix.slice(0, -1);
  return { parameters: {}, parameters_elided: { sha256: sha256Hex(text), bytes, prefix } };
}

/**
 * `params` without its members at a default (`false` or `""`), for callers whose requests
 * carry a fixed set of derived facts that are mostly unset (the hooks engine's shell and file
 * facts): undefined when no member is at a default (nothing to leave out).
 */
export function withoutDefaults(params: Record<string, unknown>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const k in params) {
    const v = params[k];
    if (v === false || v === "") {
      out ??= { ...params };
      delete out[k];
    }
  }
  return out;
}
