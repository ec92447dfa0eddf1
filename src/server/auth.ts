// Credentials for the sidecar. Bearer tokens (or the same token in X-API-Key) are kept
// only as SHA-256 hashes; a presented token is hashed and compared with every stored
// digest using timingSafeEqual, without stopping at the first match, so the time taken
// says nothing about which (or whether a) stored credential is close. The identity —
// agent principal or operator — comes from the credential alone. Identities are
// frozen and shared between requests (nothing downstream may change who a credential is).
// A token that once matched is remembered (at most one entry per credential), so the
// per-request cost for a known client is one map lookup instead of a hash and N compares.
import * as nodeCrypto from "node:crypto";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AgentIdentityFacts } from "../contracts/index.js";

export type Identity =
  | {
      readonly kind: "agent";
      readonly id: string;
      readonly roles: readonly string[];
      /** The verified AgentPin facts, when the credential was an AgentPin one (agentpin-auth.ts). */
      readonly agent?: AgentIdentityFacts;
    }
  | { readonly kind: "operator"; readonly id: string; readonly roles: readonly string[] };

export type AuthResult =
  | { ok: true; identity: Identity }
  | { ok: false; code: "ERR_AUTH_MISSING" | "ERR_AUTH_INVALID"; message: string };

interface Stored {
  digest: Buffer;
  identity: Identity;
}

/** Longest token accepted; anything longer is refused before hashing. */
export const MAX_TOKEN_LENGTH = 512;

// One-shot crypto.hash (Node >= 20.12) skips the Hash object createHash builds per call:
// about a third of the cost for a token-sized input, and authentication runs on every request.
const oneShot = (nodeCrypto as { hash?: (alg: string, data: string, enc: "buffer") => Buffer }).hash;

export function tokenDigest(token: string): Buffer {
  return oneShot !== undefined
    ? oneShot("sha256", token, "buffer")
    : createHash("sha256").update(token, "utf8").digest();
}

/** `sha256:<hex>` of a token, the form the configuration stores. */
export function hashToken(token: string): string {
  return `sha256:${tokenDigest(token).toString("hex")}`;
}

/** A fresh random bearer token (256 bits, base64url). */
export function generateToken(): string {
  return `wdn_${randomBytes(32).toString("base64url")}`;
}

export interface CredentialConfig {
  principals: readonly { id: string; tokenSha256: string }[];
  approvers: readonly { id: string; roles: readonly string[]; tokenSha256: string }[];
}

function identity(kind: Identity["kind"], id: string, roles: readonly string[]): Identity {
  return Object.freeze({ kind, id, roles: Object.freeze([...roles]) });
}

export class Authenticator {
  readonly #stored: Stored[];
  /**
   * Tokens already proven valid, so a steady client is not hashed and compared against
   * every stored digest on each request. Only a token that matched a stored digest is
   * kept, so the map never holds more entries than there are credentials (a flood of
   * wrong tokens cannot grow it), and a wrong token always takes the full comparison.
   */
  readonly #proven = new Map<string, Identity>();

  constructor(config: CredentialConfig, principalRoles: (id: string) => string[] = () => []) {
    const fromHash = (h: string) => Buffer.from(h.slice("sha256:".length), "hex");
    this.#stored = [
      ...config.principals.map((p) => ({
        digest: fromHash(p.tokenSha256),
        identity: identity("agent", p.id, principalRoles(p.id)),
      })),
      ...config.approvers.map((a) => ({
        digest: fromHash(a.tokenSha256),
        identity: identity("operator", a.id, a.roles),
      })),
    ];
  }

  /** Authenticates from the Authorization and X-API-Key header values. */
  authenticate(authorization: string | undefined, apiKey: string | undefined): AuthResult {
    let token: string | undefined;
    if (authorization !== undefined) {
      const m = /^Bearer ([\x21-\x7e]+)$/.exec(authorization);
      if (!m) return { ok: false, code: "ERR_AUTH_INVALID", message: "malformed Authorization header" };
      token = m[1];
    }
    if (apiKey !== undefined) {
      if (token !== undefined && token !== apiKey) {
        return { ok: false, code: "ERR_AUTH_INVALID", message: "two different credentials presented" };
      }
      token = apiKey;
    }
    if (token === undefined || token === "") {
      return { ok: false, code: "ERR_AUTH_MISSING", message: "a bearer token is required" };
    }
    if (token.length > MAX_TOKEN_LENGTH) {
      return { ok: false, code: "ERR_AUTH_INVALID", message: "invalid credential" };
    }
    const known = this.#proven.get(token);
    if (known !== undefined) return { ok: true, identity: known };
    const presented = tokenDigest(token);
    let found: Identity | undefined;
    for (const s of this.#stored) {
      // Every digest is compared: no early exit on a match.
      if (timingSafeEqual(presented, s.digest) && found === undefined) found = s.identity;
    }
    if (found === undefined) return { ok: false, code: "ERR_AUTH_INVALID", message: "invalid credential" };
    if (this.#proven.size < this.#stored.length) this.#proven.set(token, found);
    return { ok: true, identity: found };
  }
}
