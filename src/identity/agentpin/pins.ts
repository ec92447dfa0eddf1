// TOFU key pinning (§7.3-7.4) in the upstream KeyPinStore JSON format:
// `[{domain, pinned_keys:[{kid, public_key_hash, first_seen, last_seen, trust_level}]}]`.
// The first credential from a domain pins the key that signed it; after that a key whose
// hash is not pinned is refused (fail closed, also for a legitimate rotation) until an
// operator adds it (`warden identity pin`). Checking never mutates: the verifier commits a
// first-use pin only once the whole credential verified, and returns the event as data so
// the runtime can journal it.
import { IdentityError, parseStrictJson } from "../../contracts/index.js";
import { pinHashOf } from "./jwk.js";
import { type AgentPinJwk, type PinnedKey, PinStoreSchema } from "./schemas.js";

export type PinCheck =
  | { status: "first_use"; hash: string }
  | { status: "pinned"; hash: string; firstSeen: string | null }
  | { status: "changed"; hash: string };

/** A pin added or used; `first_use` and `operator` change the store. */
export interface PinEvent {
  kind: "first_use" | "operator";
  domain: string;
  kid: string;
  public_key_hash: string;
  at: string;
}

/** A verified use recorded: `changed` when another key won the domain meanwhile (refused). */
export type PinUse = { ok: true; event: PinEvent | null } | { ok: false; status: "changed" };

/**
 * Where TOFU pins live (the verifier's port): this file's KeyPinStore (one node, in memory
 * or a file), or the table every replica shares (src/store-pg PgKeyPins), where the first
 * pin of a domain wins across replicas.
 */
export interface KeyPins {
  check(domain: string, jwk: AgentPinJwk): PinCheck | Promise<PinCheck>;
  /** Records a verified use: pins on first use unless another key won it first. */
  use(domain: string, jwk: AgentPinJwk, at: string): PinUse | Promise<PinUse>;
  /** The operator's re-pin. */
  add(domain: string, jwk: AgentPinJwk, at: string): PinEvent | Promise<PinEvent>;
}

export class KeyPinStore implements KeyPins {
  private readonly domains = new Map<string, PinnedKey[]>();

  static fromJson(text: string): KeyPinStore {
    let parsed: ReturnType<typeof PinStoreSchema.safeParse>;
    try {
      parsed = PinStoreSchema.safeParse(parseStrictJson(text, { maxLength: 4 * 1024 * 1024 }));
    } catch {
      throw new IdentityError("ERR_IDENTITY_CONFIG_INVALID", "pin store is not JSON");
    }
    if (!parsed.success) {
      throw new IdentityError(
        "ERR_IDENTITY_CONFIG_INVALID",
        "pin store does not match the KeyPinStore format",
      );
    }
    const store = new KeyPinStore();
    for (const d of parsed.data)
      store.domains.set(
        d.domain,
        d.pinned_keys.map((k) => ({ ...k })),
      );
    return store;
  }

  toJson(): string {
    const out = [...this.domains].map(([domain, keys]) => ({ domain, pinned_keys: keys }));
    return `${JSON.stringify(out, null, 2)}\n`;
  }

  /** What pinning says about `jwk` for `domain`, without changing the store. */
  check(domain: string, jwk: AgentPinJwk): PinCheck {
    const hash = pinHashOf(jwk);
    const keys = this.domains.get(domain);
    if (keys === undefined) return { status: "first_use", hash };
    const hit = keys.find((k) => k.public_key_hash === hash);
    if (hit === undefined) return { status: "changed", hash };
    return { status: "pinned", hash, firstSeen: keys[0]?.first_seen ?? hit.first_seen ?? null };
  }

  /** Records a verified use: pins on first use, refreshes last_seen otherwise. */
  commit(domain: string, jwk: AgentPinJwk, at: string): PinEvent | null {
    const hash = pinHashOf(jwk);
    const keys = this.domains.get(domain);
    const hit = keys?.find((k) => k.public_key_hash === hash);
    if (hit !== undefined) {
      hit.last_seen = at;
      return null;
    }
    if (keys !== undefined) return null; // a changed key is never pinned by use
    this.domains.set(domain, [pinned(jwk.kid, hash, at, "tofu")]);
    return { kind: "first_use", domain, kid: jwk.kid, public_key_hash: hash, at };
  }

  use(domain: string, jwk: AgentPinJwk, at: string): PinUse {
    // One process: nothing runs between the verifier's check and this commit.
    if (this.check(domain, jwk).status === "changed") return { ok: false, status: "changed" };
    return { ok: true, event: this.commit(domain, jwk, at) };
  }

  /** The operator's re-pin (`warden identity pin`): trusts `jwk` for `domain` from now on. */
  add(domain: string, jwk: AgentPinJwk, at: string): PinEvent {
    const hash = pinHashOf(jwk);
    const keys = this.domains.get(domain) ?? [];
    if (!keys.some((k) => k.public_key_hash === hash)) keys.push(pinned(jwk.kid, hash, at, "pinned"));
    this.domains.set(domain, keys);
    return { kind: "operator", domain, kid: jwk.kid, public_key_hash: hash, at };
  }

  pinnedKeys(domain: string): readonly PinnedKey[] {
    return this.domains.get(domain) ?? [];
  }
}

function pinned(kid: string, hash: string, at: string, level: "tofu" | "verified" | "pinned"): PinnedKey {
  return { kid, public_key_hash: hash, first_seen: at, last_seen: at, trust_level: level };
}
