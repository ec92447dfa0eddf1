// SchemaPin trust bundles: many domains' discovery documents and revocations in one
// file, for offline and air-gapped verification. A signed bundle (SchemaPin 1.4) names
// its bundle authority and carries an ECDSA P-256 signature over the schemapin-v1
// canonical bytes of the whole bundle with "signature" set to "" — single-hash, as the
// SchemaPin SDKs sign bundles. Warden signs and checks every field it received,
// unknown ones included, so nothing in a verified bundle is unsigned. Entries are
// parsed lazily: a broken entry for one domain does not hide the others, and is
// reported when that domain is looked up.
import { createPublicKey, type KeyObject } from "node:crypto";
import { z } from "zod";
import { fingerprintOf } from "../../crypto/index.js";
import { schemapinCanonicalBytes } from "./canonical.js";
import {
  type DiscoveryDocument,
  discoveryFromData,
  parseSchemaPinPublicKey,
  type RevocationDocument,
  revocationFromData,
} from "./documents.js";
import type { PinStore } from "./pin-store.js";
import { attempt, fail, type IntegrityResult } from "./result.js";
import { assertP256, checkSignature, signSchemaPin } from "./signature.js";

/** Pin-store "domain" under which bundle authority keys are pinned by kid (as SchemaPin does). */
export const BUNDLE_AUTHORITY_PIN_DOMAIN = "_bundle_authority";
export const SIGNED_BUNDLE_VERSION = "1.4";

const BundleSchema = z.looseObject({
  schemapin_bundle_version: z.string().max(32),
  created_at: z.string().max(64),
  documents: z.array(z.looseObject({ domain: z.string().min(1).max(253) })).max(10_000),
  revocations: z.array(z.unknown()).max(10_000).default([]),
  bundle_authority: z
    .strictObject({ kid: z.string().min(1).max(256), public_key_pem: z.string().max(4096) })
    .optional(),
  signed_at: z.string().max(64).optional(),
  expires_at: z.string().max(64).optional(),
  signature: z.string().max(256).optional(),
});

export interface TrustBundle {
  raw: Record<string, unknown>;
  version: string;
  createdAt: string;
  domains: readonly string[];
  revocations: readonly RevocationDocument[];
  authority: { kid: string; publicKeyPem: string } | undefined;
  signedAt: string | undefined;
  expiresAt: string | undefined;
  signature: string | undefined;
  /** The discovery entry for `domain` (throws ERR_INTEGRITY_KEY_UNKNOWN when absent). */
  discoveryFor(domain: string): DiscoveryDocument;
}

function bundleFromData(value: unknown): TrustBundle {
  const parsed = BundleSchema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    fail(
      "ERR_INTEGRITY_BUNDLE_INVALID",
      `trust bundle: ${first?.path.join(".") ?? ""}: ${first?.message ?? ""}`,
    );
  }
  const b = parsed.data;
  const raw = structuredClone(value as Record<string, unknown>);
  const byDomain = new Map<string, Record<string, unknown>>();
  for (const doc of b.documents) {
    if (byDomain.has(doc.domain))
      fail("ERR_INTEGRITY_BUNDLE_INVALID", `two discovery entries for ${doc.domain}`);
    byDomain.set(doc.domain, doc);
  }
  const revocations: RevocationDocument[] = [];
  for (const r of b.revocations) {
    try {
      revocations.push(revocationFromData(r));
    } catch (err) {
      fail("ERR_INTEGRITY_BUNDLE_INVALID", `trust bundle revocation: ${(err as Error).message}`, err);
    }
  }
  const cache = new Map<string, DiscoveryDocument>();
  return {
    raw,
    version: b.schemapin_bundle_version,
    createdAt: b.created_at,
    domains: [...byDomain.keys()],
    revocations,
    authority: b.bundle_authority && {
      kid: b.bundle_authority.kid,
      publicKeyPem: b.bundle_authority.public_key_pem,
    },
    signedAt: b.signed_at,
    expiresAt: b.expires_at,
    signature: b.signature,
    discoveryFor(domain: string): DiscoveryDocument {
      const hit = cache.get(domain);
      if (hit) return hit;
      const entry = byDomain.get(domain);
      if (entry === undefined)
        fail("ERR_INTEGRITY_KEY_UNKNOWN", `the trust bundle has no discovery entry for ${domain}`);
      const doc = discoveryFromData(entry);
      cache.set(domain, doc);
      return doc;
    },
  };
}

/** Parses a trust bundle without checking a signature (a bundle the operator placed locally). */
export function parseTrustBundle(value: unknown): IntegrityResult<{ bundle: TrustBundle }> {
  return attempt(() => ({ bundle: bundleFromData(value) }));
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function parseTime(s: string): number | undefined {
  if (!RFC3339.test(s)) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

export interface VerifyBundleOptions {
  /** Pins the authority key by kid on first use and refuses a changed one. */
  pins?: PinStore;
  /** Accept only these authority key fingerprints (in addition to any pin). */
  trustedAuthorities?: readonly string[];
  /** Clock for the expiry check (default: now). */
  now?: Date;
}

/**
 * Verifies a signed trust bundle: it must name a P-256 bundle authority and carry a
 * signature, must not be expired, its authority key must match the pin for its kid
 * (and the trusted list when given), and the single-hash signature must cover the
 * canonical bundle with "signature" set to "".
 */
export function verifyTrustBundle(
  value: unknown,
  options: VerifyBundleOptions = {},
): IntegrityResult<{ bundle: TrustBundle; kid: string; fingerprint: string }> {
  return attempt(() => {
    const bundle = bundleFromData(value);
    if (bundle.authority === undefined)
      fail("ERR_INTEGRITY_BUNDLE_UNSIGNED", "trust bundle has no bundle_authority");
    if (bundle.signature === undefined || bundle.signature === "") {
      fail("ERR_INTEGRITY_BUNDLE_UNSIGNED", "trust bundle has no signature");
    }
    if (bundle.expiresAt !== undefined) {
      const exp = parseTime(bundle.expiresAt);
      if (exp === undefined)
        fail("ERR_INTEGRITY_BUNDLE_EXPIRED", "trust bundle expires_at is not an RFC 3339 time");
      if ((options.now ?? new Date()).getTime() > exp) {
        fail("ERR_INTEGRITY_BUNDLE_EXPIRED", `trust bundle expired at ${bundle.expiresAt}`);
      }
    }
    const key = parseSchemaPinPublicKey(bundle.authority.publicKeyPem, "bundle_authority.public_key_pem");
    const fingerprint = fingerprintOf(key);
    if (options.trustedAuthorities !== undefined && !options.trustedAuthorities.includes(fingerprint)) {
      fail(
        "ERR_INTEGRITY_KEY_UNKNOWN",
        `bundle authority ${bundle.authority.kid} is not a trusted authority`,
      );
    }
    const status = options.pins?.check(bundle.authority.kid, BUNDLE_AUTHORITY_PIN_DOMAIN, fingerprint);
    if (status === "changed") {
      fail(
        "ERR_INTEGRITY_KEY_PIN_MISMATCH",
        `bundle authority key for kid ${bundle.authority.kid} changed since first use`,
      );
    }
    checkSignature(
      key,
      schemapinCanonicalBytes({ ...bundle.raw, signature: "" }),
      bundle.signature,
      "single",
    );
    if (status === "first_use")
      options.pins?.pin(bundle.authority.kid, BUNDLE_AUTHORITY_PIN_DOMAIN, fingerprint);
    return { bundle, kid: bundle.authority.kid, fingerprint };
  });
}

export interface SignBundleOptions {
  kid: string;
  signedAt: Date | string;
  expiresAt?: Date | string;
}

const stamp = (t: Date | string) => (typeof t === "string" ? t : t.toISOString().replace(/\.\d{3}Z$/, "Z"));

/**
 * Signs a bundle as a bundle authority: stamps version 1.4, the authority (kid and
 * public key), signed_at and optional expires_at, then the signature. Any previous
 * authority fields are replaced. Returns a new plain object.
 */
export function signTrustBundle(
  bundle: Record<string, unknown>,
  privateKey: KeyObject,
  options: SignBundleOptions,
): Record<string, unknown> {
  assertP256(privateKey, "bundle authority key");
  const { bundle_authority: _a, signed_at: _s, expires_at: _e, signature: _sig, ...rest } = bundle;
  const pem = createPublicKey(privateKey).export({ format: "pem", type: "spki" }).toString();
  const unsigned: Record<string, unknown> = {
    ...structuredClone(rest),
    schemapin_bundle_version: SIGNED_BUNDLE_VERSION,
    bundle_authority: { kid: options.kid, public_key_pem: pem },
    signed_at: stamp(options.signedAt),
    ...(options.expiresAt === undefined ? {} : { expires_at: stamp(options.expiresAt) }),
    signature: "",
  };
  bundleFromData(unsigned); // refuse to sign something verifiers would reject as malformed
  return { ...unsigned, signature: signSchemaPin(privateKey, unsigned, "single") };
}
