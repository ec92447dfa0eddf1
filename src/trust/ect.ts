// Execution Context Tokens (draft-nennemann-wimse-ect): JWTs recording one governed action
// (exec_act), the ECTs whose outputs it consumed (par, the DAG), hashes of its input and
// output, the policy decision, and extension claims (ext). Assurance levels: L1 unsigned
// (alg "none", development only), L2 JWS ES256, L3 L2 plus the audit ledger (ledger.ts).
// An unsigned token is never accepted where L2 or L3 is configured, and a signed token is
// always verified, whatever the level: a downgrade is a failed attestation.
import { createHash, type KeyObject } from "node:crypto";
import { CompactSign, compactVerify } from "jose";
import { z } from "zod";
import { isPlainObject, parseStrictJson, TrustError, uuidv7 } from "../contracts/index.js";
import { keyTypeOf } from "../crypto/index.js";
import type { EctLedger } from "./ledger.js";

/** The JOSE `typ` Warden writes on ECTs and requires on ECTs it reads. */
export const ECT_TYP = "wimse-exec+jwt";
export const ECT_LEVELS = ["L1", "L2", "L3"] as const;
export type EctLevel = (typeof ECT_LEVELS)[number];
export const MAX_ECT_BYTES = 16 * 1024;

const Jti = z.string().min(1).max(256);
const Uri = z.string().min(1).max(1024);
/** base64url SHA-256 without padding (the draft's inp_hash / out_hash form). */
const Hash = z.string().regex(/^[A-Za-z0-9_-]{43}$/);

export const EctClaimsSchema = z
  .strictObject({
    jti: Jti,
    iss: Uri,
    aud: z.union([Uri, z.array(Uri).min(1).max(32)]),
    iat: z.number().int().min(0),
    exp: z.number().int().min(0),
    exec_act: z.string().min(1).max(256),
    par: z.array(Jti).max(256),
    inp_hash: Hash.optional(),
    out_hash: Hash.optional(),
    pol: z.string().min(1).max(256).optional(),
    pol_decision: z.string().min(1).max(64).optional(),
    ext: z.record(z.string().min(1).max(256), z.json()).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.exp <= c.iat) ctx.addIssue({ code: "custom", path: ["exp"], message: "must be after iat" });
    if ((c.pol === undefined) !== (c.pol_decision === undefined)) {
      ctx.addIssue({ code: "custom", path: ["pol"], message: "pol and pol_decision come together" });
    }
    if (new Set(c.par).size !== c.par.length || c.par.includes(c.jti)) {
      ctx.addIssue({
        code: "custom",
        path: ["par"],
        message: "parents must be distinct and not the token itself",
      });
    }
  });
export type EctClaims = z.infer<typeof EctClaimsSchema>;

/** The inp_hash / out_hash of some bytes (or of a string's UTF-8). */
export function ectHash(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("base64url");
}

/** An ES256 signing key and the kid verifiers look it up by. */
export interface EctSigningKey {
  kid: string;
  privateKey: KeyObject;
}

function b64json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}

/** Encodes claims as an L1 (unsigned) or L2/L3 (ES256) compact JWT. */
export async function encodeEct(claims: EctClaims, level: EctLevel, key?: EctSigningKey): Promise<string> {
  const parsed = EctClaimsSchema.safeParse(claims);
  if (!parsed.success)
    throw new TrustError("ERR_TRUST_ECT_MALFORMED", "ECT claims do not match the ECT schema");
  if (level === "L1") return `${b64json({ alg: "none", typ: ECT_TYP })}.${b64json(parsed.data)}.`;
  if (key === undefined)
    throw new TrustError("ERR_TRUST_ECT_SIGNER_MISSING", `${level} ECTs need a signing key`);
  if (keyTypeOf(key.privateKey) !== "p256" || key.privateKey.type !== "private") {
    throw new TrustError(
      "ERR_TRUST_ECT_SIGNER_MISSING",
      "ECTs are signed with an ECDSA P-256 private key (ES256)",
    );
  }
  return new CompactSign(Buffer.from(JSON.stringify(parsed.data), "utf8"))
    .setProtectedHeader({ alg: "ES256", typ: ECT_TYP, kid: key.kid })
    .sign(key.privateKey);
}

export interface EctVerifyOptions {
  /** The configured assurance level: at L2/L3 an unsigned token is refused. */
  level: EctLevel;
  /** The public key of (iss, kid), if known. */
  keys: (iss: string, kid: string) => KeyObject | undefined;
  /** The authenticated peer the token came from: a failed attestation is charged to it. */
  sender: string;
  now: number;
  /** When set, `aud` must name it. */
  audience?: string;
  /** Allowed clock skew for iat in the future (default 60 s). */
  skewSeconds?: number;
}

export type EctFailureCode =
  | "ERR_TRUST_ECT_MALFORMED"
  | "ERR_TRUST_ECT_UNSIGNED"
  | "ERR_TRUST_ECT_KEY_UNKNOWN"
  | "ERR_TRUST_ECT_SIGNATURE_INVALID"
  | "ERR_TRUST_ECT_EXPIRED";

export type EctVerification =
  | { ok: true; claims: EctClaims; signed: boolean; kid: string | null }
  | {
      ok: false;
      code: EctFailureCode;
      message: string;
      /** The attestation_invalid trust event to apply, charged to the sender (never to the unverified iss). */
      trustEvent: { subject: string; event: "attestation_invalid" } | null;
    };

function fail(code: EctFailureCode, message: string, sender?: string): EctVerification {
  return {
    ok: false,
    code,
    message,
    trustEvent: sender === undefined ? null : { subject: sender, event: "attestation_invalid" },
  };
}

function decodePart(part: string): unknown {
  if (!/^[A-Za-z0-9_-]+$/.test(part)) return undefined;
  try {
    return parseStrictJson(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

function checkClaims(payload: unknown, o: EctVerifyOptions): EctVerification | EctClaims {
  const res = EctClaimsSchema.safeParse(payload);
  if (!res.success)
    return fail("ERR_TRUST_ECT_MALFORMED", `claims invalid at ${res.error.issues[0]?.path.join(".") ?? ""}`);
  const c = res.data;
  if (c.exp * 1000 <= o.now) return fail("ERR_TRUST_ECT_EXPIRED", `ECT ${c.jti} expired`);
  if (c.iat * 1000 > o.now + (o.skewSeconds ?? 60) * 1000)
    return fail("ERR_TRUST_ECT_EXPIRED", `ECT ${c.jti} is issued in the future`);
  const aud = Array.isArray(c.aud) ? c.aud : [c.aud];
  if (o.audience !== undefined && !aud.includes(o.audience))
    return fail("ERR_TRUST_ECT_MALFORMED", `ECT ${c.jti} is not for this audience`);
  return c;
}

/** Verifies a received ECT at the configured level. Expected failures are values. */
export async function verifyEct(token: string, o: EctVerifyOptions): Promise<EctVerification> {
  if (typeof token !== "string" || token.length > MAX_ECT_BYTES)
    return fail("ERR_TRUST_ECT_MALFORMED", "not an ECT");
  const parts = token.split(".");
  if (parts.length !== 3) return fail("ERR_TRUST_ECT_MALFORMED", "not a compact JWT");
  const [h, p, sig] = parts as [string, string, string];
  const header = decodePart(h);
  const payload = decodePart(p);
  if (!isPlainObject(header) || !isPlainObject(payload) || header.typ !== ECT_TYP) {
    return fail("ERR_TRUST_ECT_MALFORMED", "not an ECT (header, payload or typ)");
  }
  if (header.alg === "none") {
    if (o.level !== "L1")
      return fail("ERR_TRUST_ECT_UNSIGNED", `an unsigned ECT where ${o.level} is required`, o.sender);
    if (sig !== "" || Object.keys(header).length !== 2)
      return fail("ERR_TRUST_ECT_MALFORMED", "an unsigned ECT carries no signature");
    const c = checkClaims(payload, o);
    return "ok" in c ? c : { ok: true, claims: c, signed: false, kid: null };
  }
  if (header.alg !== "ES256")
    return fail("ERR_TRUST_ECT_SIGNATURE_INVALID", "ECTs are signed with ES256", o.sender);
  if (typeof header.kid !== "string" || typeof payload.iss !== "string")
    return fail("ERR_TRUST_ECT_MALFORMED", "no kid or iss");
  const key = o.keys(payload.iss, header.kid);
  if (key === undefined) return fail("ERR_TRUST_ECT_KEY_UNKNOWN", "the ECT's signing key is not known");
  try {
    await compactVerify(token, key, { algorithms: ["ES256"] });
  } catch {
    return fail("ERR_TRUST_ECT_SIGNATURE_INVALID", "the ECT's signature does not verify", o.sender);
  }
  const c = checkClaims(payload, o);
  return "ok" in c ? c : { ok: true, claims: c, signed: true, kid: header.kid };
}

export interface EctEmitterOptions {
  level: EctLevel;
  /** The iss of every ECT (the runtime's or the agent's identity). */
  issuer: string;
  /** Required at L2 and L3. */
  key?: EctSigningKey;
  /** Required at L3: every emitted ECT is appended to it after DAG validation. */
  ledger?: Pick<EctLedger, "append">;
  /** Lifetime of an emitted ECT (default 3600 s). */
  ttlSeconds?: number;
  clock?: () => number;
}

export interface EctInput {
  exec_act: string;
  aud: string | string[];
  par?: string[];
  inp_hash?: string;
  out_hash?: string;
  pol?: string;
  pol_decision?: string;
  ext?: Record<string, z.core.util.JSONType>;
}

/** Builds ECT claims with a fresh jti and the emitter's issuer and clock. */
export function ectClaims(input: EctInput, issuer: string, now: number, ttlSeconds = 3600): EctClaims {
  const iat = Math.floor(now / 1000);
  const claims: EctClaims = {
    ...input,
    jti: uuidv7(now),
    iss: issuer,
    iat,
    exp: iat + ttlSeconds,
    par: input.par ?? [],
  };
  return claims;
}

/** Emits ECTs at one level: claims checked, signed at L2/L3, appended to the ledger at L3. */
export class EctEmitter {
  readonly level: EctLevel;
  readonly #issuer: string;
  readonly #key: EctSigningKey | undefined;
  readonly #ttl: number;
  readonly #clock: () => number;
  readonly #ledger: Pick<EctLedger, "append"> | undefined;

  constructor(o: EctEmitterOptions) {
    if (o.level !== "L1" && o.key === undefined) {
      throw new TrustError("ERR_TRUST_ECT_SIGNER_MISSING", `${o.level} ECT emission needs a signing key`);
    }
    if (o.level === "L3" && o.ledger === undefined) {
      throw new TrustError("ERR_TRUST_CONFIG_INVALID", "L3 ECT emission needs the audit ledger");
    }
    this.#ledger = o.level === "L3" ? o.ledger : undefined;
    this.level = o.level;
    this.#issuer = o.issuer;
    this.#key = o.key;
    this.#ttl = o.ttlSeconds ?? 3600;
    this.#clock = o.clock ?? Date.now;
  }

  async emit(input: EctInput): Promise<{ token: string; claims: EctClaims }> {
    const claims = ectClaims(input, this.#issuer, this.#clock(), this.#ttl);
    const token = await encodeEct(claims, this.level, this.#key);
    if (this.#ledger !== undefined) {
      const res = await this.#ledger.append([{ token, claims }]);
      if (!res.ok) throw new TrustError(res.code, res.message);
    }
    return { token, claims };
  }
}
