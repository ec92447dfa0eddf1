// The console's browser keys in distributed mode (issue 37): every replica's console keeps
// its keys in the shared PostgreSQL store (src/store-pg console-keys.ts, public halves only)
// and mirrors them into this replica's approval keyring, so a step-up verdict or a quarantine
// lift signed via any replica's console verifies on every replica. The mirror is refreshed
// on each registration or revocation notified by any replica and on a poll (`pollMs`, the
// catch-up for lost notifications): a key registered or revoked elsewhere takes effect here
// within one notification's delivery, or at most `pollMs` + one query. A row that does not
// hold a usable Ed25519 key of its id is ignored (never verifies anything). A store that
// cannot be read leaves the mirror as it was; a revocation made here drops the key at once.

import { keyIdOf } from "../crypto/index.js";
import type { ApproverKeyring } from "../journal/index.js";
import {
  type BrowserKey,
  browserPublicKey,
  type ConsoleKeyStore,
  type KeyAdded,
  type KeyRevoked,
  NO_SUCH_KEY,
  REVOKED_KEY,
} from "./keys.js";

/** A shared key row (the store's `ConsoleKeyRow`). */
export interface SharedKeyRow {
  approverId: string;
  keyId: string;
  x: string;
  registeredAt: string;
  revokedAt: string | null;
  revokedBy: string | null;
}

/** The shared table's operations (src/store-pg PgConsoleKeys). */
export interface SharedKeyRows {
  list(limit: number): Promise<SharedKeyRow[]>;
  add(
    k: Pick<SharedKeyRow, "approverId" | "keyId" | "x" | "registeredAt">,
    maxPerApprover: number,
    maxTotal: number,
  ): Promise<{ kind: "added" } | { kind: "known"; row: SharedKeyRow } | { kind: "full" }>;
  revoke(approverId: string, keyId: string, by: string, at: string): Promise<boolean>;
}

const toKey = (r: SharedKeyRow): BrowserKey => ({
  approverId: r.approverId,
  keyId: r.keyId,
  x: r.x,
  registeredAt: r.registeredAt,
  ...(r.revokedAt !== null ? { revokedAt: r.revokedAt } : {}),
  ...(r.revokedBy !== null ? { revokedBy: r.revokedBy } : {}),
});

export class SharedBrowserKeyStore implements ConsoleKeyStore {
  #keys: BrowserKey[] = [];
  readonly #timer: NodeJS.Timeout;
  #syncing: Promise<void> | undefined;
  #again = false;

  private constructor(
    readonly rows: SharedKeyRows,
    readonly ring: ApproverKeyring,
    readonly maxPerApprover: number,
    pollMs: number,
  ) {
    this.#timer = setInterval(() => void this.sync().catch(() => undefined), pollMs);
    this.#timer.unref();
  }

  /**
   * Loads the shared keys into `ring` (the start fails when the store cannot be read).
   * `carry`: this node's keys from before distributed mode (its key file): their live keys
   * are added to the shared table first (a key revoked there stays revoked).
   */
  static async open(
    rows: SharedKeyRows,
    ring: ApproverKeyring,
    maxPerApprover: number,
    o: { pollMs?: number | undefined; carry?: readonly BrowserKey[] } = {},
  ): Promise<SharedBrowserKeyStore> {
    const s = new SharedBrowserKeyStore(rows, ring, maxPerApprover, o.pollMs ?? 1000);
    try {
      for (const k of o.carry ?? [])
        if (k.revokedAt === undefined) await rows.add(k, maxPerApprover, s.maxTotal);
      await s.sync();
    } catch (err) {
      s.close();
      throw err;
    }
    return s;
  }

  get maxTotal(): number {
    return this.maxPerApprover * 64;
  }

  /** Re-reads every row: live keys into the keyring, revoked ones out of it. */
  sync(): Promise<void> {
    if (this.#syncing !== undefined) {
      this.#again = true;
      return this.#syncing;
    }
    this.#syncing = (async () => {
      try {
        do {
          this.#again = false;
          this.#apply((await this.rows.list(this.maxTotal)).map(toKey));
        } while (this.#again);
      } finally {
        this.#syncing = undefined;
      }
    })();
    return this.#syncing;
  }

  #apply(keys: BrowserKey[]): void {
    const usable = keys.filter((k) => {
      const pub = browserPublicKey(k.x);
      return pub !== undefined && keyIdOf(pub) === k.keyId;
    });
    for (const k of usable) {
      if (k.revokedAt !== undefined) this.ring.remove(k.approverId, k.keyId);
      else
        this.ring.add(
          k.approverId,
          browserPublicKey(k.x) as NonNullable<ReturnType<typeof browserPublicKey>>,
        );
    }
    this.#keys = usable;
  }

  list(approverId?: string): readonly BrowserKey[] {
    return approverId === undefined ? [...this.#keys] : this.#keys.filter((k) => k.approverId === approverId);
  }

  loadInto(ring: ApproverKeyring): void {
    for (const k of this.#keys) {
      const pub = browserPublicKey(k.x);
      if (k.revokedAt === undefined && pub !== undefined) ring.add(k.approverId, pub);
    }
  }

  async add(approverId: string, x: string, now: Date): Promise<KeyAdded> {
    const pub = browserPublicKey(x);
    if (pub === undefined)
      return { ok: false, code: "ERR_CONSOLE_KEY_INVALID", message: "not an Ed25519 public key" };
    const key: BrowserKey = { approverId, keyId: keyIdOf(pub), x, registeredAt: now.toISOString() };
    const r = await this.rows.add(key, this.maxPerApprover, this.maxTotal);
    await this.sync();
    if (r.kind === "full")
      return {
        ok: false,
        code: "ERR_CONSOLE_KEY_INVALID",
        message: `approver ${approverId} has ${this.maxPerApprover} browser keys, or the key store is full`,
      };
    if (r.kind === "known")
      return r.row.revokedAt !== null ? REVOKED_KEY : { ok: true, key: toKey(r.row), fresh: false };
    return { ok: true, key, fresh: true };
  }

  async revoke(
    approverId: string,
    keyId: string,
    now: Date,
    ring: ApproverKeyring | undefined,
  ): Promise<KeyRevoked> {
    const done = await this.rows.revoke(approverId, keyId, approverId, now.toISOString());
    if (!done) return NO_SUCH_KEY;
    ring?.remove(approverId, keyId);
    this.ring.remove(approverId, keyId);
    await this.sync().catch(() => undefined);
    return { ok: true };
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
