// v0.3 DNS TXT cross-check (`_agentpin.{domain}`: `v=agentpin1; kid=…; fp=sha256:<pin hash>`):
// the parser and the match against a discovery document. Keys are case-insensitive and
// unknown fields ignored (forward compatibility), as upstream. Warden does no DNS lookups
// itself; a caller that has the record can check it with `dnsTxtMatches`.
import { done, fail, type Step } from "./codes.js";
import { pinHashOf } from "./jwk.js";
import type { DiscoveryDocument } from "./schemas.js";

export interface DnsTxtRecord {
  version: string;
  kid: string | null;
  fingerprint: string;
}

export function parseDnsTxt(value: string): Step<DnsTxtRecord> {
  const bad = (why: string) => fail("DISCOVERY_INVALID", `DNS TXT record: ${why}`);
  let version: string | null = null;
  let kid: string | null = null;
  let fp: string | null = null;
  for (const raw of value.split(";")) {
    const part = raw.trim();
    if (part === "") continue;
    const eq = part.indexOf("=");
    if (eq === -1) return bad("a field has no '='");
    const k = part.slice(0, eq).trim().toLowerCase();
    const v = part.slice(eq + 1).trim();
    if (k === "v") version = v;
    else if (k === "kid") kid = v;
    else if (k === "fp") fp = v.toLowerCase();
  }
  if (version === null) return bad("missing v");
  if (version !== "agentpin1") return bad(`unsupported version ${version}`);
  if (fp === null) return bad("missing fp");
  if (!fp.startsWith("sha256:")) return bad("fp must be sha256:<hex>");
  return done({ version, kid, fingerprint: fp });
}

/** The record name for a domain (a trailing dot dropped). */
export function dnsTxtName(domain: string): string {
  return `_agentpin.${domain.replace(/\.$/, "")}`;
}

/** True when a discovery key has the record's fingerprint (and its kid, when the record names one). */
export function dnsTxtMatches(doc: DiscoveryDocument, txt: DnsTxtRecord): boolean {
  return doc.public_keys.some(
    (k) => `sha256:${pinHashOf(k)}` === txt.fingerprint && (txt.kid === null || k.kid === txt.kid),
  );
}
