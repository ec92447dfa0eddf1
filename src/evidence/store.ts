// The replay recorder's evidence store, beside the journal (`<journal>.evidence/`):
// response snapshots under `snapshots/<hex>` and pinned decision bundles under
// `bundles/<hex>.json`, each named by the sha-256 of its bytes. The directory is 0700 and
// every file 0600, written once (content addressing makes a rewrite a no-op). Tamper
// evidence comes from the journal: it holds each snapshot's hash (the execution's
// output_hash) and each bundle's hash (`warden.evidence.bundle`), and a read re-hashes
// the bytes. The store is bounded: an object over `maxObjectBytes`, or one that would
// take the directory over `maxBytes`, is not stored (counted in `omitted`); a replay of
// its step then reports the snapshot missing.
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { EvidenceError, type Sha256Hash } from "../contracts/index.js";

export const DEFAULT_MAX_OBJECT_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_STORE_BYTES = 1024 * 1024 * 1024;

export interface EvidenceStoreOptions {
  maxObjectBytes?: number;
  maxBytes?: number;
}

export type ReadOutcome =
  | { ok: true; bytes: Buffer }
  | { ok: false; code: "ERR_EVIDENCE_SNAPSHOT_MISSING" | "ERR_EVIDENCE_SNAPSHOT_TAMPERED"; message: string };

const HEX = /^sha256:([0-9a-f]{64})$/;

/** The evidence directory of a journal file. */
export function evidenceDir(journalPath: string): string {
  return `${journalPath}.evidence`;
}

/** The DARE `response_snapshot_uri` of a snapshot: immutable, content-addressed, named by its tool. */
export function snapshotUri(tool: string, hash: Sha256Hash): string {
  return `immutable://snapshots/tool/${encodeURIComponent(tool)}/${hash.slice("sha256:".length)}`;
}

function hexOf(hash: string): string {
  const m = HEX.exec(hash);
  if (m === null) throw new EvidenceError("ERR_EVIDENCE_STORE", "not a sha256:<hex> hash");
  return m[1] as string;
}

export function sha256Bytes(bytes: Uint8Array): Sha256Hash {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}` as Sha256Hash;
}

function privateDir(path: string): void {
  if (!existsSync(path)) mkdirSync(path, { recursive: true, mode: 0o700 });
  const st = lstatSync(path);
  if (!st.isDirectory() || st.isSymbolicLink())
    throw new EvidenceError("ERR_EVIDENCE_STORE", `${path} is not a directory`);
  if ((st.mode & 0o077) !== 0) chmodSync(path, 0o700);
}

function sizeOf(dir: string): number {
  let total = 0;
  for (const n of readdirSync(dir)) total += statSync(join(dir, n)).size;
  return total;
}

export class EvidenceStore {
  readonly dir: string;
  readonly #maxObject: number;
  readonly #max: number;
  #bytes: number;
  #omitted = 0;

  private constructor(dir: string, o: EvidenceStoreOptions) {
    this.dir = dir;
    this.#maxObject = o.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    this.#max = o.maxBytes ?? DEFAULT_MAX_STORE_BYTES;
    this.#bytes = sizeOf(join(dir, "snapshots")) + sizeOf(join(dir, "bundles"));
  }

  /** Opens (creating, 0700) the store of a journal file. */
  static open(journalPath: string, o: EvidenceStoreOptions = {}): EvidenceStore {
    const dir = evidenceDir(journalPath);
    privateDir(dir);
    privateDir(join(dir, "snapshots"));
    privateDir(join(dir, "bundles"));
    return new EvidenceStore(dir, o);
  }

  /** Opens an existing store for reading; never creates one. */
  static read(journalPath: string): EvidenceStore {
    const dir = evidenceDir(journalPath);
    if (!existsSync(join(dir, "snapshots")) || !existsSync(join(dir, "bundles")))
      throw new EvidenceError("ERR_EVIDENCE_BUNDLE_MISSING", `no evidence store beside the journal (${dir})`);
    return new EvidenceStore(dir, {});
  }

  /** Objects not stored because of the size bounds (or a write error), since open. */
  get omitted(): number {
    return this.#omitted;
  }

  /** Stores a response snapshot under its hash. Never throws: a failure counts as omitted. */
  put(bytes: Uint8Array, hash: Sha256Hash): void {
    try {
      this.#write(join(this.dir, "snapshots", hexOf(hash)), bytes);
    } catch {
      this.#omitted++;
    }
  }

  /** Stores a bundle's canonical bytes; returns their hash. Throws when it cannot. */
  putBundle(bytes: Uint8Array): Sha256Hash {
    const hash = sha256Bytes(bytes);
    if (!this.#write(join(this.dir, "bundles", `${hexOf(hash)}.json`), bytes))
      throw new EvidenceError("ERR_EVIDENCE_STORE", "the bundle is over the evidence store's bounds");
    return hash;
  }

  snapshot(hash: Sha256Hash): ReadOutcome {
    return this.#read(join(this.dir, "snapshots", hexOf(hash)), hash, "snapshot");
  }

  bundle(hash: Sha256Hash): Buffer {
    const r = this.#read(join(this.dir, "bundles", `${hexOf(hash)}.json`), hash, "bundle");
    if (r.ok) return r.bytes;
    throw new EvidenceError(
      r.code === "ERR_EVIDENCE_SNAPSHOT_MISSING"
        ? "ERR_EVIDENCE_BUNDLE_MISSING"
        : "ERR_EVIDENCE_BUNDLE_TAMPERED",
      r.message,
    );
  }

  /** false when the bounds refuse the object; true when written or already present. */
  #write(path: string, bytes: Uint8Array): boolean {
    if (existsSync(path)) return true;
    if (bytes.byteLength > this.#maxObject || this.#bytes + bytes.byteLength > this.#max) {
      this.#omitted++;
      return false;
    }
    const fd = openSync(path, "wx", 0o600);
    try {
      writeSync(fd, bytes);
    } finally {
      closeSync(fd);
    }
    this.#bytes += bytes.byteLength;
    return true;
  }

  #read(path: string, hash: Sha256Hash, what: string): ReadOutcome {
    if (!existsSync(path))
      return {
        ok: false,
        code: "ERR_EVIDENCE_SNAPSHOT_MISSING",
        message: `${what} ${hash} is not in the store`,
      };
    const bytes = readFileSync(path);
    if (sha256Bytes(bytes) !== hash)
      return {
        ok: false,
        code: "ERR_EVIDENCE_SNAPSHOT_TAMPERED",
        message: `${what} ${hash} does not match its bytes (tampered)`,
      };
    return { ok: true, bytes };
  }
}
