// Trust-on-first-use key pins: the first verified key for a (tool, domain) pair is
// remembered, and a different key for the same pair is refused until an operator
// re-pins it explicitly. The store is a JSON file replaced atomically (temp file in
// the same directory, fsync, rename) so a crash never leaves a half-written store.
// It is public data (mode 0644) but integrity-critical: a store that group or others
// can write is refused, since anyone who can edit it can re-pin an attacker's key.
// SchemaPin's own KeyPinStore JSON ({"tool@domain": "sha256:..."}) is read as well.
import { readFileSync, statSync } from "node:fs";
import { z } from "zod";
import { IntegrityError, isoTime, parseStrictJson } from "../../contracts/index.js";
import { writeFileAtomic } from "./atomic-write.js";
import { fail } from "./result.js";

export type PinStatus = "first_use" | "pinned" | "changed";

export interface PinEntry {
  toolId: string;
  domain: string;
  fingerprint: string;
  pinnedAt: string;
}

const MAX_STORE_BYTES = 8 * 1024 * 1024;
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;
const DOMAIN = /^[^\s@/]{1,253}$/;

const StoreSchema = z.strictObject({
  warden_pin_store: z.literal(1),
  pins: z.array(
    z.strictObject({
      tool_id: z.string().min(1).max(512),
      domain: z.string().regex(DOMAIN),
      fingerprint: z.string().regex(FINGERPRINT),
      pinned_at: z.string().max(64),
    }),
  ),
});
/** SchemaPin's KeyPinStore.to_json(): keys are "tool_id@domain". */
const SchemaPinFlatSchema = z.record(z.string().max(1024), z.string().regex(FINGERPRINT));

const pairKey = (toolId: string, domain: string) => JSON.stringify([toolId, domain]);

function checkNames(toolId: string, domain: string): void {
  if (toolId.length === 0 || toolId.length > 512)
    fail("ERR_INTEGRITY_PIN_STORE", "tool id must be 1..512 chars");
  if (!DOMAIN.test(domain)) fail("ERR_INTEGRITY_PIN_STORE", `invalid domain ${JSON.stringify(domain)}`);
}

export class PinStore {
  readonly path: string | undefined;
  readonly #pins = new Map<string, PinEntry>();

  private constructor(path: string | undefined) {
    this.path = path;
  }

  /** A store that lives only in memory (tests, one-shot verification). */
  static inMemory(): PinStore {
    return new PinStore(undefined);
  }

  /**
   * An in-memory store holding `entries` (a shared store's rows, distributed mode).
   * Throws ERR_INTEGRITY_PIN_STORE for a malformed or duplicate entry.
   */
  static fromEntries(entries: readonly PinEntry[]): PinStore {
    const store = new PinStore(undefined);
    for (const e of entries) {
      checkNames(e.toolId, e.domain);
      if (!FINGERPRINT.test(e.fingerprint))
        fail("ERR_INTEGRITY_PIN_STORE", "fingerprint must be sha256:<64 hex>");
      store.#set({ ...e });
    }
    return store;
  }

  /**
   * Opens the store at `path` (empty if the file does not exist). Throws
   * ERR_INTEGRITY_PIN_STORE when the file is unreadable, malformed or writable by
   * group/others.
   */
  static open(path: string): PinStore {
    const store = new PinStore(path);
    let text: string;
    try {
      const st = statSync(path);
      if (!st.isFile()) fail("ERR_INTEGRITY_PIN_STORE", `pin store ${path} is not a regular file`);
      if (process.platform !== "win32" && st.mode & 0o022) {
        fail(
          "ERR_INTEGRITY_PIN_STORE",
          `pin store ${path} is writable by group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 644`,
        );
      }
      if (st.size > MAX_STORE_BYTES) fail("ERR_INTEGRITY_PIN_STORE", `pin store ${path} is too large`);
      text = readFileSync(path, "utf8");
    } catch (err) {
      if (err instanceof IntegrityError) throw err;
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return store;
      fail("ERR_INTEGRITY_PIN_STORE", `cannot read pin store ${path}`, err);
    }
    let data: unknown;
    try {
      data = parseStrictJson(text, { maxLength: MAX_STORE_BYTES });
    } catch (err) {
      fail("ERR_INTEGRITY_PIN_STORE", `pin store ${path} is not valid JSON`, err);
    }
    store.#load(data, path);
    return store;
  }

  #load(data: unknown, path: string): void {
    const ours = StoreSchema.safeParse(data);
    if (ours.success) {
      for (const p of ours.data.pins) {
        this.#set({ toolId: p.tool_id, domain: p.domain, fingerprint: p.fingerprint, pinnedAt: p.pinned_at });
      }
      return;
    }
    const flat = SchemaPinFlatSchema.safeParse(data);
    if (!flat.success) fail("ERR_INTEGRITY_PIN_STORE", `pin store ${path} has an unknown format`);
    for (const [k, fingerprint] of Object.entries(flat.data)) {
      const at = k.lastIndexOf("@");
      const toolId = k.slice(0, at);
      const domain = k.slice(at + 1);
      if (at <= 0 || !DOMAIN.test(domain))
        fail("ERR_INTEGRITY_PIN_STORE", `pin store key ${k} is not tool@domain`);
      this.#set({ toolId, domain, fingerprint, pinnedAt: "" });
    }
  }

  #set(entry: PinEntry): void {
    const k = pairKey(entry.toolId, entry.domain);
    if (this.#pins.has(k)) {
      fail("ERR_INTEGRITY_PIN_STORE", `duplicate pin for ${entry.toolId}@${entry.domain}`);
    }
    this.#pins.set(k, entry);
  }

  get(toolId: string, domain: string): PinEntry | undefined {
    const e = this.#pins.get(pairKey(toolId, domain));
    return e === undefined ? undefined : { ...e };
  }

  /** Compares without changing anything. */
  check(toolId: string, domain: string, fingerprint: string): PinStatus {
    const e = this.#pins.get(pairKey(toolId, domain));
    if (e === undefined) return "first_use";
    return e.fingerprint === fingerprint.toLowerCase() ? "pinned" : "changed";
  }

  /**
   * Pins `fingerprint` for (toolId, domain) and saves a file-backed store. Refuses to
   * replace a different existing pin unless `replace` is set (an explicit re-pin).
   */
  pin(
    toolId: string,
    domain: string,
    fingerprint: string,
    options: { replace?: boolean; now?: Date } = {},
  ): void {
    checkNames(toolId, domain);
    const fp = fingerprint.toLowerCase();
    if (!FINGERPRINT.test(fp)) fail("ERR_INTEGRITY_PIN_STORE", "fingerprint must be sha256:<64 hex>");
    const k = pairKey(toolId, domain);
    const existing = this.#pins.get(k);
    if (existing?.fingerprint === fp) return;
    if (existing !== undefined && options.replace !== true) {
      fail(
        "ERR_INTEGRITY_KEY_PIN_MISMATCH",
        `${toolId}@${domain} is pinned to another key; re-pin explicitly`,
      );
    }
    this.#pins.set(k, {
      toolId,
      domain,
      fingerprint: fp,
      pinnedAt: isoTime(options.now ?? new Date()),
    });
    if (this.path !== undefined) this.save();
  }

  /** Removes a pin; returns whether one existed. */
  unpin(toolId: string, domain: string): boolean {
    const removed = this.#pins.delete(pairKey(toolId, domain));
    if (removed && this.path !== undefined) this.save();
    return removed;
  }

  entries(): PinEntry[] {
    return [...this.#pins.values()].map((e) => ({ ...e }));
  }

  toJSON(): { warden_pin_store: 1; pins: Record<string, string>[] } {
    const pins = this.entries()
      .sort((a, b) => (a.domain === b.domain ? (a.toolId < b.toolId ? -1 : 1) : a.domain < b.domain ? -1 : 1))
      .map((e) => ({
        tool_id: e.toolId,
        domain: e.domain,
        fingerprint: e.fingerprint,
        pinned_at: e.pinnedAt,
      }));
    return { warden_pin_store: 1, pins };
  }

  /** Writes the store atomically to its path (temp file + fsync + rename). */
  save(): void {
    if (this.path === undefined) throw new TypeError("an in-memory pin store has no path to save to");
    try {
      writeFileAtomic(this.path, `${JSON.stringify(this.toJSON(), null, 2)}\n`, 0o644);
    } catch (err) {
      fail("ERR_INTEGRITY_PIN_STORE", `cannot write pin store ${this.path}`, err);
    }
  }
}
