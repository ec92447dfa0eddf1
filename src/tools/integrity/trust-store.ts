// The trust store the runtime config embeds (`trust:`): which publisher keys may sign
// tool contracts, where the TOFU pins live, and which keys are revoked. With mode
// "enforce" every contract must carry a signature that verifies under one of the keys
// (see loadContractsTrusted); "off" keeps the pre-trust behaviour and is the default
// only so that existing deployments keep starting — "enforce" is the production mode.
// Everything is parsed and checked when the store is built, so a broken trust
// configuration fails at start-up (ERR_INTEGRITY_TRUST_CONFIG or the key's own code),
// never later as "nothing is trusted" or "everything is".
import type { KeyObject } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { IntegrityError, parseStrictJson } from "../../contracts/index.js";
import { fingerprintOf } from "../../crypto/index.js";
import { parseSchemaPinPublicKey, type RevocationDocument, revocationFromData } from "./documents.js";
import { PinStore } from "./pin-store.js";
import { fail } from "./result.js";
import type { ContractVerifyOptions } from "./signature-file.js";

export const TRUST_MODES = ["off", "enforce"] as const;
export type TrustMode = (typeof TRUST_MODES)[number];

const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;
const MAX_TRUST_FILE = 256 * 1024;
const Path = z.string().min(1).max(4096);

/** The `trust:` section of the runtime config (YAML or JSON). */
export const TrustConfigSchema = z.strictObject({
  /** "off" (default): contracts load unsigned. "enforce": every contract must verify. */
  mode: z.enum(TRUST_MODES).default("off"),
  /** Publisher keys: an SPKI "BEGIN PUBLIC KEY" PEM (P-256) inline, or a path to one. */
  keys: z.array(z.string().min(1).max(16_384)).max(256).default([]),
  /** TOFU pin store file (created on first use); without it keys are not pinned. */
  pins: Path.optional(),
  /** "tofu" pins a first-seen key; "require" refuses a contract whose key is not pinned yet. */
  pin_policy: z.enum(["tofu", "require"]).default("tofu"),
  /** Revoked keys: a `sha256:<hex>` fingerprint, or a path to a SchemaPin revocation document. */
  revocations: z.array(z.string().min(1).max(4096)).max(1024).default([]),
  /** When set, every signature file must name this domain. */
  domain: z
    .string()
    .regex(/^[^\s@/]{1,253}$/)
    .optional(),
});

export type TrustConfig = z.input<typeof TrustConfigSchema>;

/** What `warden sidecar --check` reports about the trust store (plain data). */
export interface TrustSummary {
  mode: TrustMode;
  keys: number;
  key_fingerprints: string[];
  pins: { path: string | null; entries: number; policy: "tofu" | "require" };
  revocations: number;
  domain: string | null;
}

export interface TrustStoreOptions {
  /** Relative key, pin and revocation paths resolve against this (the config's directory). */
  baseDir?: string;
}

function readTrustFile(path: string, what: string): string {
  try {
    const st = lstatSync(path);
    if (!st.isFile()) fail("ERR_INTEGRITY_TRUST_CONFIG", `${what} ${path} is not a regular file`);
    if (st.size > MAX_TRUST_FILE) fail("ERR_INTEGRITY_TRUST_CONFIG", `${what} ${path} is too large`);
    return readFileSync(path, "utf8");
  } catch (err) {
    if (err instanceof IntegrityError) throw err;
    fail(
      "ERR_INTEGRITY_TRUST_CONFIG",
      `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
}

function loadKey(entry: string, baseDir: string): KeyObject {
  if (entry.trimStart().startsWith("-----BEGIN")) return parseSchemaPinPublicKey(entry, "trust key");
  const path = resolve(baseDir, entry);
  return parseSchemaPinPublicKey(readTrustFile(path, "trust key file"), `trust key ${path}`);
}

function loadRevocation(entry: string, baseDir: string): RevocationDocument {
  const fp = entry.trim().toLowerCase();
  if (FINGERPRINT.test(fp)) {
    return {
      raw: {},
      schemapinVersion: "1.2",
      domain: "trust config",
      updatedAt: "",
      revokedKeys: [{ fingerprint: fp, revokedAt: "configuration", reason: "listed in trust.revocations" }],
    };
  }
  if (entry.startsWith("sha256:")) fail("ERR_INTEGRITY_TRUST_CONFIG", `malformed fingerprint ${entry}`);
  const path = resolve(baseDir, entry);
  let value: unknown;
  try {
    value = parseStrictJson(readTrustFile(path, "revocation document"), { maxLength: MAX_TRUST_FILE });
  } catch (err) {
    if (err instanceof IntegrityError) throw err;
    fail("ERR_INTEGRITY_REVOCATION_INVALID", `${path} is not valid JSON`, err);
  }
  return revocationFromData(value);
}

export class TrustStore {
  readonly mode: TrustMode;
  readonly keys: readonly KeyObject[];
  readonly pins: PinStore | undefined;
  readonly pinPolicy: "tofu" | "require";
  readonly revocations: readonly RevocationDocument[];
  readonly domain: string | undefined;

  private constructor(init: {
    mode: TrustMode;
    keys: KeyObject[];
    pins: PinStore | undefined;
    pinPolicy: "tofu" | "require";
    revocations: RevocationDocument[];
    domain: string | undefined;
  }) {
    this.mode = init.mode;
    this.keys = init.keys;
    this.pins = init.pins;
    this.pinPolicy = init.pinPolicy;
    this.revocations = init.revocations;
    this.domain = init.domain;
  }

  /** The store used when the runtime config has no `trust:` section: mode off. */
  static off(): TrustStore {
    return new TrustStore({
      mode: "off",
      keys: [],
      pins: undefined,
      pinPolicy: "tofu",
      revocations: [],
      domain: undefined,
    });
  }

  /**
   * Builds the store from the config section (undefined → mode off). Throws an
   * IntegrityError: ERR_INTEGRITY_TRUST_CONFIG for a malformed section, an unreadable
   * file, or enforce without keys; the key, revocation or pin store code otherwise.
   */
  static fromConfig(config: unknown, options: TrustStoreOptions = {}): TrustStore {
    if (config === undefined) return TrustStore.off();
    const parsed = TrustConfigSchema.safeParse(config);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      fail("ERR_INTEGRITY_TRUST_CONFIG", `trust: ${i?.path.join(".") || "(root)"}: ${i?.message ?? ""}`);
    }
    const c = parsed.data;
    const baseDir = options.baseDir ?? process.cwd();
    if (!isAbsolute(baseDir)) fail("ERR_INTEGRITY_TRUST_CONFIG", "trust baseDir must be absolute");
    if (c.mode === "enforce" && c.keys.length === 0) {
      fail("ERR_INTEGRITY_TRUST_CONFIG", "trust.mode enforce needs at least one key in trust.keys");
    }
    const byFingerprint = new Map<string, KeyObject>();
    for (const entry of c.keys) {
      const key = loadKey(entry, baseDir);
      byFingerprint.set(fingerprintOf(key), key);
    }
    return new TrustStore({
      mode: c.mode,
      keys: [...byFingerprint.values()],
      pins: c.pins === undefined ? undefined : PinStore.open(resolve(baseDir, c.pins)),
      pinPolicy: c.pin_policy,
      revocations: c.revocations.map((r) => loadRevocation(r, baseDir)),
      domain: c.domain,
    });
  }

  /**
   * The same store over other pins (distributed mode: an in-memory store seeded from the
   * shared table, see loadContractsShared, which refuses a store with a pins file).
   */
  withPins(pins: PinStore): TrustStore {
    return new TrustStore({
      mode: this.mode,
      keys: [...this.keys],
      pins,
      pinPolicy: this.pinPolicy,
      revocations: [...this.revocations],
      domain: this.domain,
    });
  }

  /** Verification options for the contract registry; `pins` may be a staging copy. */
  verifyOptions(pins: PinStore | undefined = this.pins): ContractVerifyOptions {
    return {
      trustedKeys: this.keys,
      revocations: this.revocations,
      pinPolicy: this.pinPolicy,
      ...(pins === undefined ? {} : { pins }),
      ...(this.domain === undefined ? {} : { domain: this.domain }),
    };
  }

  summary(): TrustSummary {
    return {
      mode: this.mode,
      keys: this.keys.length,
      key_fingerprints: this.keys.map((k) => fingerprintOf(k)).sort(),
      pins: {
        path: this.pins?.path ?? null,
        entries: this.pins?.entries().length ?? 0,
        policy: this.pinPolicy,
      },
      revocations: this.revocations.reduce((n, d) => n + d.revokedKeys.length, 0),
      domain: this.domain ?? null,
    };
  }
}
