// The SchemaPin verification pipeline, shared by signed schemas and signed tool
// contracts. Order matters:
//   1. choose the key: the domain's discovery document, else its trust-bundle entry,
//      else an explicit trusted key; nothing in the signed artefact can supply a key;
//   2. refuse a revoked key (discovery revoked_keys, standalone revocation documents,
//      bundle revocations) — revocation is by fingerprint and applies across domains;
//   3. verify the signature in the verifier's hash mode;
//   4. only then consult the TOFU pins: a changed key is refused unless re-pinning was
//      asked for, and a first-seen key is pinned (or refused under pinPolicy "require").
// Pinning after the signature check means a forged signature can never plant a pin.
import type { KeyObject } from "node:crypto";
import { fingerprintOf, keyIdOf } from "../../crypto/index.js";
import type { TrustBundle } from "./bundle.js";
import { SCHEMAPIN_CANONICALIZATION, schemapinCanonicalBytes } from "./canonical.js";
import { type DiscoveryDocument, type RevocationDocument, revocationReason } from "./documents.js";
import type { PinStore } from "./pin-store.js";
import { attempt, fail, type IntegrityResult } from "./result.js";
import { assertP256, checkSignature, type HashMode } from "./signature.js";

export interface TrustOptions {
  /** The signing domain's discovery document (`.well-known/schemapin.json`). */
  discovery?: DiscoveryDocument;
  /** A trust bundle (verify a signed one with verifyTrustBundle first). */
  bundle?: TrustBundle;
  /** Keys trusted directly, without discovery (P-256 only). */
  trustedKeys?: readonly KeyObject[];
  /** Standalone revocation documents; a fingerprint listed in any of them is refused. */
  revocations?: readonly RevocationDocument[];
  /** TOFU pin store, keyed by (tool id, domain). */
  pins?: PinStore;
  /** "tofu" (default) pins a first-seen key; "require" refuses a key that is not pinned yet. */
  pinPolicy?: "tofu" | "require";
  /** Accept a key that differs from the pin and re-pin it (an explicit operator decision). */
  repin?: boolean;
  /** "double" (default: SchemaPin JS/Python) or "single" (SchemaPin Go). */
  hashMode?: HashMode;
}

export type PinOutcome = "first_use" | "pinned" | "repinned" | "not_checked";

export interface Verified {
  keyId: string;
  fingerprint: string;
  domain: string;
  toolId: string;
  developerName: string | undefined;
  pin: PinOutcome;
  hashMode: HashMode;
}

export interface SignedArtefact {
  /** The value whose schemapin-v1 canonical bytes were signed. */
  value: unknown;
  signature: string;
  domain: string;
  toolId: string;
  /** The fingerprint the artefact claims it was signed with (a hint, never trusted). */
  claimedFingerprint?: string;
  /** A `canonicalization` field from the artefact; anything but schemapin-v1 is refused. */
  canonicalization?: unknown;
}

function chooseKey(
  a: SignedArtefact,
  t: TrustOptions,
): { key: KeyObject; discovery: DiscoveryDocument | undefined } {
  if (t.discovery !== undefined) {
    if (t.discovery.domain !== undefined && t.discovery.domain !== a.domain) {
      fail(
        "ERR_INTEGRITY_DOMAIN_MISMATCH",
        `discovery document is for ${t.discovery.domain}, not ${a.domain}`,
      );
    }
    return { key: t.discovery.publicKey, discovery: t.discovery };
  }
  if (t.bundle?.domains.includes(a.domain)) {
    const discovery = t.bundle.discoveryFor(a.domain);
    return { key: discovery.publicKey, discovery };
  }
  const trusted = t.trustedKeys ?? [];
  for (const k of trusted) assertP256(k, "trusted key");
  if (trusted.length > 0) {
    // With a claimed fingerprint pick that key; otherwise the one whose signature verifies.
    const byClaim =
      a.claimedFingerprint === undefined
        ? undefined
        : trusted.find((k) => fingerprintOf(k) === a.claimedFingerprint);
    if (byClaim !== undefined) return { key: byClaim, discovery: undefined };
    if (trusted.length === 1) return { key: trusted[0]!, discovery: undefined };
    const canonical = schemapinCanonicalBytes(a.value);
    for (const k of trusted) {
      try {
        checkSignature(k, canonical, a.signature, t.hashMode ?? "double");
        return { key: k, discovery: undefined };
      } catch {
        // try the next trusted key; the final check below reports the failure
      }
    }
    return { key: trusted[0]!, discovery: undefined };
  }
  fail("ERR_INTEGRITY_KEY_UNKNOWN", `no discovery document, bundle entry or trusted key for ${a.domain}`);
}

function verifyArtefactInner(a: SignedArtefact, t: TrustOptions): Verified {
  if (a.canonicalization !== undefined && a.canonicalization !== SCHEMAPIN_CANONICALIZATION) {
    fail(
      "ERR_INTEGRITY_CANONICALIZATION_UNSUPPORTED",
      `unsupported canonicalization ${JSON.stringify(a.canonicalization).slice(0, 64)}`,
    );
  }
  const hashMode = t.hashMode ?? "double";
  const { key, discovery } = chooseKey(a, t);
  // A discovery document already carries its key's fingerprint and id.
  const fingerprint = discovery?.fingerprint ?? fingerprintOf(key);
  const keyId = discovery?.keyId ?? keyIdOf(key);
  const revocations = [...(t.revocations ?? []), ...(t.bundle?.revocations ?? [])];
  const revoked = revocationReason(fingerprint, discovery, revocations);
  if (revoked !== undefined) fail("ERR_INTEGRITY_KEY_REVOKED", `key ${fingerprint} is revoked: ${revoked}`);

  const canonical = schemapinCanonicalBytes(a.value);
  try {
    checkSignature(key, canonical, a.signature, hashMode);
  } catch (err) {
    const claimed = a.claimedFingerprint;
    if (
      claimed !== undefined &&
      claimed !== fingerprint &&
      (err as { code?: string }).code === "ERR_INTEGRITY_SIGNATURE_INVALID"
    ) {
      fail(
        "ERR_INTEGRITY_SIGNATURE_INVALID",
        `signature does not verify: it claims key ${claimed}, but the trusted key for ${a.domain} is ${fingerprint}`,
      );
    }
    throw err;
  }

  let pin: PinOutcome = "not_checked";
  if (t.pins !== undefined) {
    const status = t.pins.check(a.toolId, a.domain, fingerprint);
    if (status === "changed") {
      if (t.repin !== true) {
        fail(
          "ERR_INTEGRITY_KEY_PIN_MISMATCH",
          `${a.toolId}@${a.domain} is pinned to ${t.pins.get(a.toolId, a.domain)?.fingerprint}, but was signed by ${fingerprint}; re-pin explicitly if the key rotation is genuine`,
        );
      }
      t.pins.pin(a.toolId, a.domain, fingerprint, { replace: true });
      pin = "repinned";
    } else if (status === "first_use") {
      if ((t.pinPolicy ?? "tofu") === "require") {
        fail("ERR_INTEGRITY_KEY_NOT_PINNED", `no pinned key for ${a.toolId}@${a.domain}`);
      }
      t.pins.pin(a.toolId, a.domain, fingerprint);
      pin = "first_use";
    } else {
      pin = "pinned";
    }
  }
  return {
    keyId,
    fingerprint,
    domain: a.domain,
    toolId: a.toolId,
    developerName: discovery?.developerName,
    pin,
    hashMode,
  };
}

/** Verifies one signed artefact against the trust inputs (the whole pipeline above). */
export function verifyArtefact(a: SignedArtefact, t: TrustOptions): IntegrityResult<Verified> {
  return attempt(() => verifyArtefactInner(a, t));
}

export interface SignedSchemaOptions extends TrustOptions {
  /** The publisher's domain: the pin key and the bundle lookup (default "unknown"). */
  domain?: string;
  /** Pin identity (default: the schema's `name`). */
  toolId?: string;
}

/**
 * Verifies a SchemaPin signed-schema document `{schema, signature}` (the form the
 * SchemaPin SDKs and demos write).
 */
export function verifySignedSchema(
  document: unknown,
  options: SignedSchemaOptions,
): IntegrityResult<Verified> {
  return attempt(() => {
    if (typeof document !== "object" || document === null || Array.isArray(document)) {
      fail("ERR_INTEGRITY_SIGNATURE_FILE_INVALID", "a signed schema is an object {schema, signature}");
    }
    const d = document as Record<string, unknown>;
    if (typeof d.schema !== "object" || d.schema === null || Array.isArray(d.schema)) {
      fail("ERR_INTEGRITY_SIGNATURE_FILE_INVALID", "signed schema has no `schema` object");
    }
    if (d.signature === undefined) fail("ERR_INTEGRITY_UNSIGNED", "signed schema has no `signature`");
    const name = (d.schema as Record<string, unknown>).name;
    return verifyArtefactInner(
      {
        value: d.schema,
        signature: d.signature as string,
        domain: options.domain ?? "unknown",
        toolId: options.toolId ?? (typeof name === "string" && name !== "" ? name : "schema"),
        canonicalization: d.canonicalization,
      },
      options,
    );
  });
}
