// Credential verification in the order of §6.1, with the §6.7 code each step yields
// (SPEC-NOTES §3): parse → time → discovery → key → signature → revocation → agent →
// capabilities → constraints → delegation chain → TOFU pin → audience. Where the SDKs are
// looser than the spec, Warden follows the spec: `credential_ttl_max` is enforced (step 7),
// `admin` is never granted by a wildcard (step 8), and the delegation chain is verified
// (step 10). The clock is injected; skew and max TTL are bounded.
import { IdentityError } from "../../contracts/index.js";
import { capabilitiesSubset, constraintsSubsetOf, firstUncovered } from "./capability.js";
import {
  type AgentPinCode,
  done,
  type Failure,
  fail,
  type IdentityVerifyCode,
  type Step,
  wardenCodeOf,
} from "./codes.js";
import { type ChainLink, verifyDelegationChain } from "./delegation.js";
import { findAgent, findKey, keyExpiry, revocationFailure } from "./discovery.js";
import { publicKeyOfJwk } from "./jwk.js";
import { type ParsedCredential, parseCredential, verifyDerSignature } from "./jwt.js";
import type { KeyPins, PinEvent } from "./pins.js";
import type { AgentPinJwk, Constraints, DiscoveryDocument } from "./schemas.js";
import type { DocumentSource } from "./source.js";

export const DEFAULT_SKEW_SECONDS = 60;
export const MAX_SKEW_SECONDS = 300;
export const DEFAULT_MAX_TTL_SECONDS = 86_400;

export interface VerifyOptions {
  source: DocumentSource;
  pins: KeyPins;
  /** The verifier's audience; checked only when the credential has `aud` (§6.1 step 12). */
  audience?: string | undefined;
  /** Unix seconds. */
  now: number;
  skewSeconds?: number | undefined;
  maxTtlSeconds?: number | undefined;
}

/** The §6.7 result object, as the upstream SDKs and `warden identity verify --json` print it. */
export interface VerificationResult {
  valid: boolean;
  agent_id: string | null;
  issuer: string | null;
  capabilities: string[] | null;
  constraints: Constraints | null;
  delegation_verified: boolean | null;
  delegation_chain: ChainLink[] | null;
  key_pinning: { status: "first_use" | "pinned"; first_seen: string | null } | null;
  error_code: AgentPinCode | null;
  error_message: string | null;
  warnings: string[];
}

/** Who a verified credential says the caller is: what the Gate and the journal see. */
export interface AgentIdentity {
  agentId: string;
  domain: string;
  capabilities: string[];
  jti: string;
  expiresAt: number;
  delegation: ChainLink[];
}

export type Verification =
  | { ok: true; identity: AgentIdentity; result: VerificationResult; pinEvent: PinEvent | null }
  | {
      ok: false;
      code: AgentPinCode;
      wardenCode: IdentityVerifyCode;
      message: string;
      result: VerificationResult;
    };

function limits(o: VerifyOptions): { skew: number; maxTtl: number } {
  const skew = o.skewSeconds ?? DEFAULT_SKEW_SECONDS;
  const maxTtl = o.maxTtlSeconds ?? DEFAULT_MAX_TTL_SECONDS;
  if (!Number.isInteger(skew) || skew < 0 || skew > MAX_SKEW_SECONDS) {
    throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", `skew must be 0..${MAX_SKEW_SECONDS} seconds`);
  }
  if (!Number.isInteger(maxTtl) || maxTtl < 1 || maxTtl > DEFAULT_MAX_TTL_SECONDS) {
    throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", "max TTL must be 1..86400 seconds");
  }
  if (!Number.isSafeInteger(o.now) || o.now < 0) {
    throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", "now must be Unix seconds");
  }
  return { skew, maxTtl };
}

function failed(f: Failure): Verification {
  const result: VerificationResult = {
    valid: false,
    agent_id: null,
    issuer: null,
    capabilities: null,
    constraints: null,
    delegation_verified: null,
    delegation_chain: null,
    key_pinning: null,
    error_code: f.code,
    error_message: f.message,
    warnings: [],
  };
  return { ok: false, code: f.code, wardenCode: wardenCodeOf(f.code), message: f.message, result };
}

/** Step 2: iat/exp/nbf against the clock with skew, and the verifier's lifetime cap. */
function checkTime(
  c: ParsedCredential["claims"],
  now: number,
  lim: { skew: number; maxTtl: number },
): Step<null> {
  if (c.iat > now + lim.skew) return fail("CREDENTIAL_EXPIRED", "credential issued in the future");
  if (c.exp <= now - lim.skew) return fail("CREDENTIAL_EXPIRED", "credential has expired");
  if (c.nbf !== undefined && c.nbf > now + lim.skew)
    return fail("CREDENTIAL_EXPIRED", "credential not yet valid (nbf)");
  if (c.exp - c.iat > lim.maxTtl) {
    return fail("CREDENTIAL_EXPIRED", `credential lifetime ${c.exp - c.iat}s exceeds ${lim.maxTtl}s`);
  }
  return done(null);
}

/** Steps 3-5: the issuer's document, the key named by kid (one refresh if unknown), the signature. */
async function checkKey(
  cred: ParsedCredential,
  o: VerifyOptions,
  skew: number,
): Promise<Step<{ doc: DiscoveryDocument; jwk: AgentPinJwk }>> {
  const { header, claims } = cred;
  let d = await o.source.discovery(claims.iss, { issuer: true });
  if (!d.ok) return d;
  if (findKey(d.value, header.kid) === undefined) {
    const again = await o.source.discovery(claims.iss, { issuer: true, refresh: true });
    if (!again.ok) return again;
    d = again;
  }
  const jwk = findKey(d.value, header.kid);
  if (jwk === undefined) return fail("KEY_NOT_FOUND", `key ${header.kid} is not in the discovery document`);
  const exp = keyExpiry(jwk);
  if (exp !== undefined && !(exp >= o.now - skew))
    return fail("KEY_EXPIRED", `key ${header.kid} has expired`);
  const key = publicKeyOfJwk(jwk);
  if (key === null) return fail("KEY_NOT_FOUND", `key ${header.kid} is not a usable P-256 JWK`);
  if (!verifyDerSignature(key, cred.signingInput, cred.signature)) {
    return fail("SIGNATURE_INVALID", `signature does not verify with key ${header.kid}`);
  }
  return done({ doc: d.value, jwk });
}

/** Steps 6-9: revocation, agent status and lifetime, capabilities, constraints. */
async function checkAuthority(
  cred: ParsedCredential,
  doc: DiscoveryDocument,
  o: VerifyOptions,
): Promise<Step<null>> {
  const { header, claims } = cred;
  const rev = await o.source.revocation(claims.iss, doc);
  if (!rev.ok) return rev;
  if (rev.value !== null) {
    const r = revocationFailure(rev.value, claims.jti, claims.sub, header.kid);
    if (!r.ok) return r;
  }
  const agent = findAgent(doc, claims.sub);
  if (agent === undefined)
    return fail("AGENT_NOT_FOUND", `agent ${claims.sub} is not in the discovery document`);
  if (agent.status !== "active") return fail("AGENT_INACTIVE", `agent ${claims.sub} is ${agent.status}`);
  const ttlMax = agent.credential_ttl_max ?? DEFAULT_MAX_TTL_SECONDS;
  if (claims.exp - claims.iat > ttlMax) {
    return fail(
      "CREDENTIAL_EXPIRED",
      `credential lifetime exceeds the agent's credential_ttl_max ${ttlMax}s`,
    );
  }
  if (!capabilitiesSubset(agent.capabilities, claims.capabilities)) {
    const extra = firstUncovered(agent.capabilities, claims.capabilities);
    return fail("CAPABILITY_EXCEEDED", `capability ${JSON.stringify(extra)} is not declared for the agent`);
  }
  if (!constraintsSubsetOf(agent.constraints, claims.constraints)) {
    return fail("CONSTRAINT_VIOLATION", "credential constraints are wider than the discovery defaults");
  }
  return done(null);
}

/** Verifies an AgentPin credential (§6.1). Never throws for a bad credential; throws only for bad options. */
export async function verifyCredential(token: string, o: VerifyOptions): Promise<Verification> {
  const lim = limits(o);
  const parsed = parseCredential(token);
  if (!parsed.ok) return failed(parsed);
  const cred = parsed.value;
  const { claims } = cred;
  const time = checkTime(claims, o.now, lim);
  if (!time.ok) return failed(time);
  const key = await checkKey(cred, o, lim.skew);
  if (!key.ok) return failed(key);
  const authority = await checkAuthority(cred, key.value.doc, o);
  if (!authority.ok) return failed(authority);
  const hasChain = claims.delegation_chain !== undefined && claims.delegation_chain.length > 0;
  let chain: ChainLink[] = [];
  if (hasChain) {
    const c = await verifyDelegationChain(claims, key.value.doc, o.source, { now: o.now, skew: lim.skew });
    if (!c.ok) return failed(c);
    chain = c.value;
  }
  const pin = await o.pins.check(claims.iss, key.value.jwk);
  const mismatch = () =>
    failed(
      fail("KEY_PIN_MISMATCH", `the key of ${claims.iss} differs from the pinned key (re-pin to accept it)`),
    );
  if (pin.status === "changed") return mismatch();
  if (
    o.audience !== undefined &&
    claims.aud !== undefined &&
    claims.aud !== "*" &&
    claims.aud !== o.audience
  ) {
    return failed(
      fail("AUDIENCE_MISMATCH", `credential audience ${JSON.stringify(claims.aud)} is not this verifier`),
    );
  }
  const at = new Date(o.now * 1000).toISOString();
  // A shared store may have been pinned by another replica since the check: that pin wins.
  const used = await o.pins.use(claims.iss, key.value.jwk, at);
  if (!used.ok) return mismatch();
  const pinEvent = used.event;
  const result: VerificationResult = {
    valid: true,
    agent_id: claims.sub,
    issuer: claims.iss,
    capabilities: [...claims.capabilities],
    constraints: claims.constraints ?? null,
    delegation_verified: hasChain ? true : null,
    delegation_chain: hasChain ? chain : null,
    key_pinning:
      pin.status === "pinned"
        ? { status: "pinned", first_seen: pin.firstSeen }
        : { status: "first_use", first_seen: at },
    error_code: null,
    error_message: null,
    warnings: [],
  };
  const identity: AgentIdentity = {
    agentId: claims.sub,
    domain: claims.iss,
    capabilities: [...claims.capabilities],
    jti: claims.jti,
    expiresAt: claims.exp,
    delegation: chain,
  };
  return { ok: true, identity, result, pinEvent };
}
