// Capabilities (§5.4, §6.5, §10) and constraints (§5.5): `action:resource` strings,
// matched as every SDK does (same action; declared resource `*`, equal, or a dot-scoped
// parent), plus the one rule the SDKs skip (§10.3): `admin` is never granted by a
// wildcard, it must be declared explicitly.
import { sha256HexOf } from "./jwk.js";
import type { Constraints } from "./schemas.js";

/** `[action, resource]` split at the first `:`; null without one. */
export function parseCapability(cap: string): [string, string] | null {
  const i = cap.indexOf(":");
  return i === -1 ? null : [cap.slice(0, i), cap.slice(i + 1)];
}

/** The SDKs' `Capability.matches`: does the declared capability cover the requested one? */
export function capabilityMatches(declared: string, requested: string): boolean {
  const d = parseCapability(declared);
  const r = parseCapability(requested);
  if (d === null || r === null || d[0] !== r[0]) return false;
  if (d[1] === "*" || d[1] === r[1]) return true;
  return r[1].startsWith(d[1]) && r[1].charAt(d[1].length) === ".";
}

/** capabilityMatches, except that `admin:*` covers only itself (§10.3). */
export function capabilityCovers(declared: string, requested: string): boolean {
  if (declared === "admin:*") return requested === "admin:*";
  return capabilityMatches(declared, requested);
}

/** Every requested capability is covered by a declared one (§5.4, §10.3). */
export function capabilitiesSubset(declared: readonly string[], requested: readonly string[]): boolean {
  return requested.every((r) => declared.some((d) => capabilityCovers(d, r)));
}

/** The first requested capability no declared one covers, or null. */
export function firstUncovered(declared: readonly string[], requested: readonly string[]): string | null {
  return requested.find((r) => !declared.some((d) => capabilityCovers(d, r))) ?? null;
}

/** Hex SHA-256 of the compact JSON of the sorted capabilities (the attestation's caps_hash). */
export function capabilitiesHash(capabilities: readonly string[]): string {
  return sha256HexOf(JSON.stringify([...capabilities].sort()));
}

const CORE_ACTIONS = new Set(["read", "write", "delete", "execute", "delegate", "admin"]);

/** The v0.3 taxonomy check (§10.1, §10.4): a reason when the capability is not well-formed. */
export function capabilityProblem(cap: string): string | null {
  const parsed = parseCapability(cap);
  if (parsed === null) return "missing ':'";
  const [action, resource] = parsed;
  if (action === "admin" && resource === "*") return "admin is never granted by a wildcard";
  if (CORE_ACTIONS.has(action)) return null;
  return action.includes(".") ? null : `custom action '${action}' needs a reverse-domain prefix`;
}

const PER_HOUR: Record<string, number> = { second: 3600, minute: 60, hour: 1 };

/** `N/second|minute|hour` as a per-hour rate; null when it is not one. */
export function rateLimitPerHour(rate: string): number | null {
  const m = /^(\d{1,12})\/(second|minute|hour)$/.exec(rate);
  if (m === null) return null;
  return Number(m[1]) * (PER_HOUR[m[2] as string] as number);
}

/** `*.x` matches proper subdomains of x only; anything else matches itself only. */
export function domainPatternMatches(pattern: string, domain: string): boolean {
  if (pattern === domain) return true;
  if (!pattern.startsWith("*.")) return false;
  const suffix = pattern.slice(1); // ".x"
  return domain.length > suffix.length && domain.endsWith(suffix);
}

const CLASSIFICATION: Record<string, number> = { public: 0, internal: 1, confidential: 2, restricted: 3 };

/**
 * Are the credential's constraints equal to or narrower than the discovery defaults (§5.5)?
 * denied_domains, ip_allowlist and valid_hours are enforced at use, not compared (as upstream).
 */
export function constraintsSubsetOf(
  discovery: Constraints | null | undefined,
  credential: Constraints | null | undefined,
): boolean {
  if (discovery == null || credential == null) return true;
  const dc = discovery.data_classification_max;
  const cc = credential.data_classification_max;
  if (dc !== undefined && cc !== undefined) {
    const d = CLASSIFICATION[dc];
    const c = CLASSIFICATION[cc];
    // An unknown level cannot be shown to be narrower: refused (the SDKs skip it).
    if (d !== undefined && (c === undefined || c > d)) return false;
  }
  if (discovery.rate_limit !== undefined && credential.rate_limit !== undefined) {
    const d = rateLimitPerHour(discovery.rate_limit);
    const c = rateLimitPerHour(credential.rate_limit);
    if (d !== null && (c === null || c > d)) return false;
  }
  const allowed = discovery.allowed_domains;
  if (allowed !== undefined && credential.allowed_domains !== undefined) {
    return credential.allowed_domains.every((cd) => allowed.some((p) => domainPatternMatches(p, cd)));
  }
  return true;
}
