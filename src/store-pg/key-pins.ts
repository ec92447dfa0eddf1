// AgentPin TOFU pins shared by every replica (src/identity KeyPins port). A domain is
// pinned by the transaction that inserts its row in `agentpin_domains` (primary key):
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
import { inTransaction, storeError } from "./connect.js";

type Level = "tofu" | "pinned";

async function insertKey(
  c: pg.ClientBase,
  k: { domain: string; kid: string; hash: string; at: string; level: Level },
) {
  await c.query(
    "INSERT INTO agentpin_keys (domain, public_key_hash, kid, first_seen, last_seen, trust_level) " +
      "VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT (domain, public_key_hash) DO NOTHING",
    [k.domain, k.hash, k.kid, k.at, k.level],
  );
}

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
    try {
      return await inTransaction(this.#pool, async (c): Promise<PinUse> => {
        const won = await c.query(
          "INSERT INTO agentpin_domains (domain, first_seen) VALUES ($1, $2) ON CONFLICT (domain) DO NOTHING",
          [domain, at],
        );
        if (won.rowCount === 1) {
          await insertKey(c, { domain, kid: jwk.kid, hash, at, level: "tofu" });
          return { ok: true, event: { kind: "first_use", domain, kid: jwk.kid, public_key_hash: hash, at } };
        }
        const hit = await c.query(
          "UPDATE agentpin_keys SET last_seen = $3 WHERE domain = $1 AND public_key_hash = $2",
          [domain, hash, at],
        );
        return hit.rowCount === 1 ? { ok: true, event: null } : { ok: false, status: "changed" };
      });
    } catch (err) {
      throw storeError("AgentPin pins", err);
    }
  }

  async add(domain: string, jwk: AgentPinJwk, at: string): Promise<PinEvent> {
    const hash = pinHashOf(jwk);
    try {
      await inTransaction(this.#pool, async (c) => {
        await c.query(
          "INSERT INTO agentpin_domains (domain, first_seen) VALUES ($1, $2) ON CONFLICT (domain) DO NOTHING",
          [domain, at],
        );
        await insertKey(c, { domain, kid: jwk.kid, hash, at, level: "pinned" });
      });
    } catch (err) {
      throw storeError("AgentPin pins", err);
    }
    return { kind: "operator", domain, kid: jwk.kid, public_key_hash: hash, at };
  }
}
