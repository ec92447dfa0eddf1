// Browser keys: the Ed25519 public keys approvers created in the console (a non-extractable
// WebCrypto key pair stays in the browser; only the public half comes here). On one node
// they are persisted beside the journal (`<journal>.console-keys.json`, 0600, replaced
// atomically); in distributed mode in the shared PostgreSQL store (shared-keys.ts). Bounded
// per approver and in all, and loaded into the approval queue's ApproverKeyring at start
// so a registered key verifies signed approvals exactly like a configured one. An approver
// revokes a key of theirs: it is kept, marked revoked, dropped from the keyring and never
// registered again.
import { createPublicKey, type KeyObject } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { ConsoleError } from "../contracts/index.js";
import { keyIdOf } from "../crypto/index.js";
import type { ApproverKeyring } from "../journal/index.js";

const Entry = z.strictObject({
  approverId: z.string().min(1).max(128),
  keyId: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  /** The raw 32-byte Ed25519 public key, base64url. */
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  registeredAt: z.string().max(64),
  revokedAt: z.string().max(64).optional(),
  revokedBy: z.string().max(128).optional(),
});
export type BrowserKey = z.infer<typeof Entry>;
const FileSchema = z.strictObject({ version: z.literal(1), keys: z.array(Entry).max(100_000) });

/** The key store's file for a journal path (memory for an in-memory journal). */
export function browserKeyPath(journalPath: string): string | undefined {
  return journalPath === ":memory:" ? undefined : `${journalPath}.console-keys.json`;
}

// The y coordinates of Ed25519's small-order points, canonical and not (libsodium's list):
// a key of small order can "verify" signatures its holder never made, so none is accepted.
const FF = "ff".repeat(30);
const SMALL_ORDER_Y = new Set([
  "00".repeat(32),
  `01${"00".repeat(31)}`,
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
  `ec${FF}7f`,
  `ed${FF}7f`,
  `ee${FF}7f`,
]);

/** Whether a raw Ed25519 public key is a point of small order (sign bit ignored). */
export function smallOrder(raw: Buffer): boolean {
  const y = Buffer.from(raw);
  y[31] = (y[31] ?? 0) & 0x7f;
  return SMALL_ORDER_Y.has(y.toString("hex"));
}

/** An Ed25519 public key from its raw base64url form, or undefined when it is not a usable one. */
export function browserPublicKey(x: string): KeyObject | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(x)) return undefined;
  const raw = Buffer.from(x, "base64url");
  if (raw.length !== 32 || raw.toString("base64url") !== x || smallOrder(raw)) return undefined;
  try {
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  } catch {
    return undefined;
  }
}

export type KeyAdded =
  | { readonly ok: true; readonly key: BrowserKey; readonly fresh: boolean }
  | { readonly ok: false; readonly code: "ERR_CONSOLE_KEY_INVALID"; readonly message: string };

export type KeyRevoked =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: "ERR_CONSOLE_KEY_INVALID"; readonly message: string };

/** Where the console's browser keys live: this node's file, or the shared store (shared-keys.ts). */
export interface ConsoleKeyStore {
  /** The keys (live and revoked) of one approver, or all. */
  list(approverId?: string): readonly BrowserKey[];
  /** Adds every live key to the approval queue's keyring. */
  loadInto(ring: ApproverKeyring): void;
  /** Registers a browser's public key for an approver (idempotent), persisted first. */
  add(approverId: string, x: string, now: Date): KeyAdded | Promise<KeyAdded>;
  /** Revokes one of the approver's live keys, persisted first, and drops it from `ring`. */
  revoke(
    approverId: string,
    keyId: string,
    now: Date,
    ring: ApproverKeyring | undefined,
  ): KeyRevoked | Promise<KeyRevoked>;
  close?(): void;
}

export const REVOKED_KEY: KeyAdded = {
  ok: false,
  code: "ERR_CONSOLE_KEY_INVALID",
  message: "this browser key was revoked: it cannot be registered again",
};
export const NO_SUCH_KEY: KeyRevoked = {
  ok: false,
  code: "ERR_CONSOLE_KEY_INVALID",
  message: "no live browser key of yours with that id",
};

export class BrowserKeyStore implements ConsoleKeyStore {
  readonly #keys: BrowserKey[];

  private constructor(
    readonly path: string | undefined,
    keys: BrowserKey[],
    readonly maxPerApprover: number,
  ) {
    this.#keys = keys;
  }

  /** Opens (or starts) the store; an unreadable or malformed file stops the start. */
  static open(path: string | undefined, maxPerApprover: number): BrowserKeyStore {
    if (path === undefined || !existsSync(path)) return new BrowserKeyStore(path, [], maxPerApprover);
    try {
      const parsed = FileSchema.parse(JSON.parse(readFileSync(path, "utf8")));
      for (const k of parsed.keys) {
        const pub = browserPublicKey(k.x);
        if (pub === undefined || keyIdOf(pub) !== k.keyId) throw new Error(`key ${k.keyId} does not match`);
      }
      return new BrowserKeyStore(path, parsed.keys, maxPerApprover);
    } catch (err) {
      throw new ConsoleError("ERR_CONSOLE_CONFIG_INVALID", `console key store ${path} is unreadable`, {
        cause: err,
      });
    }
  }

  get maxTotal(): number {
    return this.maxPerApprover * 64;
  }

  list(approverId?: string): readonly BrowserKey[] {
    return approverId === undefined ? [...this.#keys] : this.#keys.filter((k) => k.approverId === approverId);
  }

  /** Adds every live stored key to the approval queue's keyring. */
  loadInto(ring: ApproverKeyring): void {
    for (const k of this.#keys) {
      if (k.revokedAt !== undefined) continue;
      const pub = browserPublicKey(k.x);
      if (pub !== undefined) ring.add(k.approverId, pub);
    }
  }

  /** Registers a browser's public key for an approver (idempotent), persisting it first. */
  add(approverId: string, x: string, now: Date): KeyAdded {
    const pub = browserPublicKey(x);
    if (pub === undefined)
      return { ok: false, code: "ERR_CONSOLE_KEY_INVALID", message: "not an Ed25519 public key" };
    const keyId = keyIdOf(pub);
    const known = this.#keys.find((k) => k.approverId === approverId && k.keyId === keyId);
    if (known?.revokedAt !== undefined) return REVOKED_KEY;
    if (known !== undefined) return { ok: true, key: known, fresh: false };
    if (this.list(approverId).filter((k) => k.revokedAt === undefined).length >= this.maxPerApprover)
      return {
        ok: false,
        code: "ERR_CONSOLE_KEY_INVALID",
        message: `approver ${approverId} already has ${this.maxPerApprover} browser keys`,
      };
    if (this.#keys.length >= this.maxTotal)
      return { ok: false, code: "ERR_CONSOLE_KEY_INVALID", message: "the console key store is full" };
    const key: BrowserKey = { approverId, keyId, x, registeredAt: now.toISOString() };
    this.#save([...this.#keys, key]);
    this.#keys.push(key);
    return { ok: true, key, fresh: true };
  }

  revoke(approverId: string, keyId: string, now: Date, ring: ApproverKeyring | undefined): KeyRevoked {
    const i = this.#keys.findIndex(
      (k) => k.approverId === approverId && k.keyId === keyId && k.revokedAt === undefined,
    );
    const k = this.#keys[i];
    if (k === undefined) return NO_SUCH_KEY;
    const revoked: BrowserKey = { ...k, revokedAt: now.toISOString(), revokedBy: approverId };
    const next = this.#keys.map((x, j) => (j === i ? revoked : x));
    this.#save(next);
    this.#keys[i] = revoked;
    ring?.remove(approverId, keyId);
    return { ok: true };
  }

  #save(keys: readonly BrowserKey[]): void {
    if (this.path === undefined) return;
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: 1, keys })}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.path);
  }
}
