// Replay protection: every accepted message's nonce is remembered until its expiry (plus
// the allowed skew), so the same sealed message is refused the second time, also after a
// restart (the SQLite store persists, synchronous=FULL). Bounded: expired nonces are
// pruned, and a store full of unexpired nonces refuses (fail closed) rather than forget.
// The port may answer asynchronously: the communication gate awaits it, so a store shared by
// every replica (src/store-pg PgNonceStore, one atomic statement) refuses a message replayed
// to a replica that never saw it. Opening a message on the agent's side (seal.ts `open`)
// stays synchronous and takes a SyncNonceStore (memory or SQLite).

import type Database from "better-sqlite3";
import { RuntimeError } from "../contracts/index.js";
import { openPrivateSqlite } from "../journal/index.js";

export type ClaimResult = "claimed" | "replayed" | "full";

export interface NonceStore {
  /** Records `key` until `until` (ms since the epoch); "replayed" if it is already recorded. Atomic. */
  claim(key: string, until: number, now: number): ClaimResult | Promise<ClaimResult>;
  /** Whether `key` is recorded and unexpired at `now` (a read; records nothing). */
  seen(key: string, now: number): boolean | Promise<boolean>;
  close?(): void;
}

/** A store that answers in the same tick (the agent-side `open`). */
export interface SyncNonceStore extends NonceStore {
  claim(key: string, until: number, now: number): ClaimResult;
  seen(key: string, now: number): boolean;
}

export const DEFAULT_MAX_NONCES = 100_000;

export class MemoryNonceStore implements SyncNonceStore {
  readonly #seen = new Map<string, number>();
  readonly #max: number;

  constructor(max = DEFAULT_MAX_NONCES) {
    this.#max = max;
  }

  claim(key: string, until: number, now: number): ClaimResult {
    const at = this.#seen.get(key);
    if (at !== undefined && at >= now) return "replayed";
    if (this.#seen.size >= this.#max) {
      for (const [k, u] of this.#seen) if (u < now) this.#seen.delete(k);
      if (this.#seen.size >= this.#max) return "full";
    }
    this.#seen.set(key, until);
    return "claimed";
  }

  seen(key: string, now: number): boolean {
    const at = this.#seen.get(key);
    return at !== undefined && at >= now;
  }
}

export class SqliteNonceStore implements SyncNonceStore {
  readonly #db: Database.Database;
  readonly #max: number;
  readonly #get: Database.Statement<[string], { until: number }>;
  readonly #put: Database.Statement<[string, number]>;
  readonly #prune: Database.Statement<[number]>;
  /** Rows in the table (counted once at open, then kept; a count(*) per claim would scan). */
  #n: number;

  private constructor(db: Database.Database, max: number) {
    this.#db = db;
    this.#max = max;
    db.exec("CREATE TABLE IF NOT EXISTS message_nonces (k TEXT PRIMARY KEY, until INTEGER NOT NULL) STRICT");
    this.#get = db.prepare("SELECT until FROM message_nonces WHERE k = ?");
    this.#put = db.prepare(
      "INSERT INTO message_nonces (k, until) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET until = excluded.until",
    );
    this.#prune = db.prepare("DELETE FROM message_nonces WHERE until < ?");
    this.#n = (db.prepare("SELECT count(*) AS n FROM message_nonces").get() as { n: number }).n;
  }

  /** Opens (creating 0600 when missing) the nonce file; ":memory:" for tests. */
  static open(path: string, max = DEFAULT_MAX_NONCES): SqliteNonceStore {
    try {
      const db = openPrivateSqlite(path);
      return new SqliteNonceStore(db, max);
    } catch (err) {
      // Like the principal state store: replay protection that cannot be read is a fault.
      throw new RuntimeError("ERR_RUNTIME_STATE_OPEN", `cannot open the message nonce store ${path}`, {
        cause: err,
      });
    }
  }

  claim(key: string, until: number, now: number): ClaimResult {
    // One transaction: the check and the insert are atomic against other connections.
    return this.#db
      .transaction((): ClaimResult => {
        const row = this.#get.get(key);
        if (row !== undefined && row.until >= now) return "replayed";
        if (row === undefined && this.#n >= this.#max) {
          this.#n -= this.#prune.run(now).changes;
          if (this.#n >= this.#max) return "full";
        }
        this.#put.run(key, until);
        if (row === undefined) this.#n++;
        return "claimed";
      })
      .immediate();
  }

  seen(key: string, now: number): boolean {
    const row = this.#get.get(key);
    return row !== undefined && row.until >= now;
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
