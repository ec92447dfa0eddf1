// AgentPin TOFU pins shared by every replica (src/identity KeyPins port). A domain is
// pinned by the one function call (migration 11, protect-sql.ts: no lock held across a client
// round trip) that inserts its row in `agentpin_domains` (primary key):
// two replicas pinning one domain at once with different keys get one winner, the other
// waits for its commit, finds the conflict and then judges its key against the winner's
// pin (refused as changed). Later uses refresh `last_seen`; only an operator's re-pin
// (`add`) adds a second key to a pinned domain.
import type pg from "pg";
import {
  type AgentPinJwk,
  type KeyPins,
  type PinCheck,
  type PinEvent,
  type PinUse,
  pinHashOf,
} from "../identity/index.js";
import { storeError } from "./connect.js";

export class PgKeyPins implements KeyPins {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async check(domain: string, jwk: AgentPinJwk): Promise<PinCheck> {
    const hash = pinHashOf(jwk);
    let rows: { public_key_hash: string; first_seen: string }[];
    try {
      const r = await this.#pool.query<{ public_key_hash: string; first_seen: string }>(
        "SELECT public_key_hash, first_seen FROM agentpin_keys WHERE domain = $1 ORDER BY ord",
        [domain],
      );
      rows = r.rows;
    } catch (err) {
      throw storeError("AgentPin pins", err);
    }
    if (rows.length === 0) return { status: "first_use", hash };
    if (!rows.some((k) => k.public_key_hash === hash)) return { status: "changed", hash };
    return { status: "pinned", hash, firstSeen: rows[0]?.first_seen ?? null };
  }

  async use(domain: string, jwk: AgentPinJwk, at: string): Promise<PinUse> {
    const hash = pinHashOf(jwk);
    let how: string | undefined;
    try {
      const r = await this.#pool.query<{ how: string }>("SELECT warden_pin_use($1, $2, $3, $4) AS how", [
        domain,
        hash,
        jwk.kid,
        at,
      ]);
      how = r.rows[0]?.how;
    } catch (err) {
      throw storeError("AgentPin pins", err);
    }
    if (how === "first_use")
      return { ok: true, event: { kind: "first_use", domain, kid: jwk.kid, public_key_hash: hash, at } };
    return how === "pinned" ? { ok: true, event: null } : { ok: false, status: "changed" };
  }

  async add(domain: string, jwk: AgentPinJwk, at: string): Promise<PinEvent> {
    const hash = pinHashOf(jwk);
    try {
      await this.#pool.query("SELECT warden_pin_add($1, $2, $3, $4)", [domain, hash, jwk.kid, at]);
    } catch (err) {
      throw storeError("AgentPin pins", err);
    }
    return { kind: "operator", domain, kid: jwk.kid, public_key_hash: hash, at };
  }
}
