// SchemaPin trust documents: the discovery document a domain publishes at
// /.well-known/schemapin.json (its signing key, its revoked keys) and the standalone
// revocation document. Both arrive from the network or disk, so they are parsed by a
// size-limited zod schema; unknown fields are kept (SchemaPin adds fields between
// versions) but never interpreted. Revocation is by key fingerprint and fails closed:
// a malformed revocation document is an error, never "nothing revoked".

import { createPublicKey, type KeyObject } from "node:crypto";
import { z } from "zod";
import { isoTime } from "../../contracts/index.js";
import { fingerprintOf, keyIdOf } from "../../crypto/index.js";
import { attempt, fail, type IntegrityResult } from "./result.js";
import { assertP256 } from "./signature.js";

const MAX_PEM = 4096;
const MAX_REVOKED = 10_000;

const Text = (max: number) => z.string().max(max);

const DiscoverySchema = z.looseObject({
  schema_version: Text(32).optional(),
  developer_name: Text(512).optional(),
  public_key_pem: Text(MAX_PEM),
  revoked_keys: z.array(Text(256)).max(MAX_REVOKED).optional(),
  contact: Text(512).optional(),
  revocation_endpoint: Text(2048).optional(),
  domain: Text(253).optional(),
});

const RevokedKeySchema = z.looseObject({
  fingerprint: Text(256),
  revoked_at: Text(64),
  // SchemaPin defines key_compromise, superseded, cessation_of_operation and
  // privilege_withdrawn. An unknown reason still revokes: failing closed matters more.
  reason: Text(64),
});

const RevocationSchema = z.looseObject({
  schemapin_version: Text(32),
  domain: Text(253),
  updated_at: Text(64),
  revoked_keys: z.array(RevokedKeySchema).max(MAX_REVOKED),
});

export type RevocationReason =
  | "key_compromise"
  | "superseded"
  | "cessation_of_operation"
  | "privilege_withdrawn";

export interface DiscoveryDocument {
  /** The document as received (plain data). */
  raw: Record<string, unknown>;
  schemaVersion: string | undefined;
  developerName: string | undefined;
  contact: string | undefined;
  revocationEndpoint: string | undefined;
  /** Present only in bundled discovery entries. */
  domain: string | undefined;
  publicKey: KeyObject;
  publicKeyPem: string;
  fingerprint: `sha256:${string}`;
  keyId: string;
  /** Fingerprints listed in `revoked_keys`, lower-cased. */
  revokedKeys: readonly string[];
}

export interface RevokedKey {
  fingerprint: string;
  revokedAt: string;
  reason: string;
}

export interface RevocationDocument {
  raw: Record<string, unknown>;
  schemapinVersion: string;
  domain: string;
  updatedAt: string;
  revokedKeys: readonly RevokedKey[];
}

const issues = (e: z.ZodError) =>
  e.issues
    .slice(0, 3)
    .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");

/** Parses an SPKI PEM public key as SchemaPin requires (P-256, "BEGIN PUBLIC KEY"). Throws. */
export function parseSchemaPinPublicKey(pem: string, what = "public_key_pem"): KeyObject {
  if (!pem.trimStart().startsWith("-----BEGIN PUBLIC KEY-----")) {
    // Also refuses private keys: a discovery document must never carry one.
    fail("ERR_INTEGRITY_KEY_INVALID", `${what} is not an SPKI "BEGIN PUBLIC KEY" PEM`);
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch (err) {
    fail("ERR_INTEGRITY_KEY_INVALID", `${what} does not hold a valid public key`, err);
  }
  assertP256(key, what);
  return key;
}

export function discoveryFromData(value: unknown): DiscoveryDocument {
  const parsed = DiscoverySchema.safeParse(value);
  if (!parsed.success) {
    fail("ERR_INTEGRITY_DISCOVERY_INVALID", `discovery document: ${issues(parsed.error)}`);
  }
  const d = parsed.data;
  const publicKey = parseSchemaPinPublicKey(d.public_key_pem);
  return {
    raw: structuredClone(value as Record<string, unknown>),
    schemaVersion: d.schema_version,
    developerName: d.developer_name,
    contact: d.contact,
    revocationEndpoint: d.revocation_endpoint,
    domain: d.domain,
    publicKey,
    publicKeyPem: d.public_key_pem,
    fingerprint: fingerprintOf(publicKey),
    keyId: keyIdOf(publicKey),
    revokedKeys: (d.revoked_keys ?? []).map((f) => f.trim().toLowerCase()),
  };
}

export function revocationFromData(value: unknown): RevocationDocument {
  const parsed = RevocationSchema.safeParse(value);
  if (!parsed.success) {
    fail("ERR_INTEGRITY_REVOCATION_INVALID", `revocation document: ${issues(parsed.error)}`);
  }
  const d = parsed.data;
  return {
    raw: structuredClone(value as Record<string, unknown>),
    schemapinVersion: d.schemapin_version,
    domain: d.domain,
    updatedAt: d.updated_at,
    revokedKeys: d.revoked_keys.map((k) => ({
      fingerprint: k.fingerprint.trim().toLowerCase(),
      revokedAt: k.revoked_at,
      reason: k.reason,
    })),
  };
}

/** Parses a `.well-known/schemapin.json` discovery document. */
export function parseDiscoveryDocument(value: unknown): IntegrityResult<{ document: DiscoveryDocument }> {
  return attempt(() => ({ document: discoveryFromData(value) }));
}

/** Parses a standalone SchemaPin revocation document. */
export function parseRevocationDocument(value: unknown): IntegrityResult<{ document: RevocationDocument }> {
  return attempt(() => ({ document: revocationFromData(value) }));
}

export interface DiscoveryInput {
  publicKey: KeyObject;
  developerName: string;
  contact?: string;
  revokedKeys?: readonly string[];
  revocationEndpoint?: string;
  schemaVersion?: string;
}

/** Builds the discovery document a domain publishes for its signing key. */
export function buildDiscoveryDocument(input: DiscoveryInput): Record<string, unknown> {
  assertP256(input.publicKey, "discovery key");
  const pub = input.publicKey.type === "private" ? createPublicKey(input.publicKey) : input.publicKey;
  return {
    schema_version: input.schemaVersion ?? "1.2",
    developer_name: input.developerName,
    public_key_pem: pub.export({ format: "pem", type: "spki" }).toString(),
    revoked_keys: [...(input.revokedKeys ?? [])],
    ...(input.contact === undefined ? {} : { contact: input.contact }),
    ...(input.revocationEndpoint === undefined ? {} : { revocation_endpoint: input.revocationEndpoint }),
  };
}

/** Builds a standalone revocation document (SchemaPin 1.2 form). */
export function buildRevocationDocument(
  domain: string,
  revoked: readonly { fingerprint: string; reason: RevocationReason; revokedAt?: string }[],
  now: Date = new Date(),
): Record<string, unknown> {
  const at = isoTime(now);
  return {
    schemapin_version: "1.2",
    domain,
    updated_at: at,
    revoked_keys: revoked.map((r) => ({
      fingerprint: r.fingerprint,
      revoked_at: r.revokedAt ?? at,
      reason: r.reason,
    })),
  };
}

/** The reason `fingerprint` is revoked by any of the sources, or undefined. */
export function revocationReason(
  fingerprint: string,
  discovery: DiscoveryDocument | undefined,
  revocations: readonly RevocationDocument[],
): string | undefined {
  const fp = fingerprint.toLowerCase();
  if (discovery?.revokedKeys.includes(fp)) return "listed in the discovery document's revoked_keys";
  for (const doc of revocations) {
    const hit = doc.revokedKeys.find((k) => k.fingerprint === fp);
    if (hit) return `revoked by ${doc.domain} at ${hit.revokedAt} (${hit.reason})`;
  }
  return undefined;
}
