// AgentPin credentials as principals: the runtime's `identity.agentpin` section turned
// into an authenticator the entry points (the sidecar's `Authorization: AgentPin <jwt>`,
// a library host) call. It verifies with the identity layer against a trust bundle and/or
// the well-known documents fetched under the SSRF rules (agentpin-fetch.ts), maps the
// verified agent to the Warden principal it is bound to, keeps the TOFU pin store (in a
// file, replaced atomically, when configured; in the shared PostgreSQL store in
// distributed mode, where a pins file is refused) and journals every pin event and every
// refused key change. Verified credentials are cached until they expire (bounded).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { type AgentIdentityFacts, IdentityError } from "../contracts/index.js";
import {
  type DocumentSource,
  type IdentityVerifyCode,
  KeyPinStore,
  type KeyPins,
  OnlineResolver,
  type PinEvent,
  parseCredential,
  parseTrustBundleText,
  verifyCredential,
} from "../identity/index.js";
import type { Journal } from "../journal/index.js";
import { writeFileAtomic } from "../tools/index.js";
import { type AgentPinFetchOptions, agentPinFetcher } from "./agentpin-fetch.js";

export interface RuntimeAgentPinConfig {
  /** This verifier's audience (its domain); a credential for another audience is refused. */
  audience: string;
  /** Trust bundle file (§4.8.2): discovery and revocation documents by domain. */
  trustBundle?: string | undefined;
  /** Fall back to https://<domain>/.well-known/… under the SSRF rules (after the bundle). */
  online?: boolean | AgentPinFetchOptions | undefined;
  /** Pin store file (upstream KeyPinStore JSON); absent: pins live in memory. */
  pins?: string | undefined;
  skewSeconds?: number | undefined;
  maxTtlSeconds?: number | undefined;
  /** Verified agent id (urn:agentpin:…) → the Warden principal it acts as. Unbound agents are refused. */
  principals: Readonly<Record<string, string>>;
}

export const AGENTPIN_PINNED_EVENT = "warden.identity.key_pinned";
export const AGENTPIN_PIN_REFUSED_EVENT = "warden.identity.key_pin_refused";

const Str = z.string().min(1).max(512);
export const AgentPinPinnedBodySchema = z.strictObject({
  kind: z.enum(["first_use", "operator"]),
  domain: Str,
  kid: Str,
  public_key_hash: z.string().regex(/^[0-9a-f]{64}$/),
  at: Str,
});
export const AgentPinPinRefusedBodySchema = z.strictObject({ domain: Str, message: Str });

export type AgentPinAuth =
  | { ok: true; principalId: string; identity: AgentIdentityFacts }
  | { ok: false; code: IdentityVerifyCode; message: string };

const CACHE_MAX = 4096;
/** A verified credential is re-verified at least this often, so a revocation takes effect. */
const CACHE_SECONDS = 60;
const digest = (token: string) => createHash("sha256").update(token).digest("base64url");

export class AgentPinAuthenticator {
  readonly #pins: KeyPins;
  /** The node-local store written to `config.pins` (absent when the pins are shared). */
  readonly #local: KeyPinStore | undefined;
  readonly #source: DocumentSource;
  readonly #cache = new Map<string, { auth: AgentPinAuth & { ok: true }; exp: number }>();

  constructor(
    private readonly config: RuntimeAgentPinConfig,
    private readonly journal: Pick<Journal, "append">,
    private readonly clock: () => number,
    shared?: KeyPins,
  ) {
    if (shared !== undefined) {
      if (config.pins !== undefined) {
        throw new IdentityError(
          "ERR_IDENTITY_CONFIG_INVALID",
          "identity.agentpin.pins is a node-local file: with store.kind postgres the pins are shared in the database",
        );
      }
      this.#local = undefined;
      this.#pins = shared;
    } else {
      const local = config.pins !== undefined ? loadPins(config.pins) : new KeyPinStore();
      this.#local = local;
      this.#pins = local;
    }
    const nowS = () => Math.floor(this.clock() / 1000);
    const online =
      config.online === undefined || config.online === false
        ? undefined
        : new OnlineResolver({
            fetchJson: agentPinFetcher(config.online === true ? {} : config.online),
            now: nowS,
          });
    if (config.trustBundle !== undefined) {
      this.#source = parseTrustBundleText(readFileSync(config.trustBundle, "utf8"), online);
    } else if (online !== undefined) this.#source = online;
    else
      throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", "identity.agentpin needs trustBundle or online");
  }

  /** Verifies a presented credential and maps it to its principal. Never throws for a bad credential. */
  async authenticate(token: string): Promise<AgentPinAuth> {
    const now = Math.floor(this.clock() / 1000);
    const key = digest(token);
    const hit = this.#cache.get(key);
    if (hit !== undefined && hit.exp > now) return hit.auth;
    // Only credentials naming a bound agent are verified: an unauthenticated caller cannot
    // make the sidecar fetch documents for domains it chose, or spend signature checks.
    const claimed = parseCredential(token);
    if (claimed.ok && !Object.hasOwn(this.config.principals, claimed.value.claims.sub)) {
      return {
        ok: false,
        code: "ERR_IDENTITY_AGENT_NOT_FOUND",
        message: "the agent is not bound to a principal",
      };
    }
    const v = await verifyCredential(token, {
      source: this.#source,
      pins: this.#pins,
      audience: this.config.audience,
      now,
      skewSeconds: this.config.skewSeconds,
      maxTtlSeconds: this.config.maxTtlSeconds,
    });
    if (!v.ok) {
      if (v.code === "KEY_PIN_MISMATCH") await this.#journalRefused(token, v.message);
      return { ok: false, code: v.wardenCode, message: `${v.code}: ${v.message}` };
    }
    if (v.pinEvent !== null) await this.#pinned(v.pinEvent);
    const principalId = this.config.principals[v.identity.agentId];
    if (principalId === undefined || !Object.hasOwn(this.config.principals, v.identity.agentId)) {
      return {
        ok: false,
        code: "ERR_IDENTITY_AGENT_NOT_FOUND",
        message: "the agent is not bound to a principal",
      };
    }
    const { agentId, domain, capabilities } = v.identity;
    const auth = {
      ok: true as const,
      principalId,
      identity: Object.freeze({ agentId, domain, capabilities }),
    };
    if (this.#cache.size >= CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, { auth, exp: Math.min(v.identity.expiresAt, now + CACHE_SECONDS) });
    return auth;
  }

  /** The operator's re-pin (trusts `jwk`'s key for `domain`), journaled and persisted. */
  async repin(domain: string, jwk: Parameters<KeyPins["add"]>[1]): Promise<PinEvent> {
    const e = await this.#pins.add(domain, jwk, new Date(this.clock()).toISOString());
    this.#cache.clear();
    await this.#pinned(e);
    return e;
  }

  async #pinned(e: PinEvent): Promise<void> {
    if (this.config.pins !== undefined && this.#local !== undefined)
      writeFileAtomic(this.config.pins, this.#local.toJson(), 0o600);
    await this.journal.append({ type: AGENTPIN_PINNED_EVENT, body: { ...e } });
  }

  async #journalRefused(token: string, message: string): Promise<void> {
    const parsed = parseCredential(token);
    const domain = parsed.ok ? parsed.value.claims.iss : "unknown";
    await this.journal.append({ type: AGENTPIN_PIN_REFUSED_EVENT, body: { domain, message } });
  }
}

function loadPins(path: string): KeyPinStore {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return new KeyPinStore();
    throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", `cannot read the pin store ${path}`);
  }
  return KeyPinStore.fromJson(text);
}
