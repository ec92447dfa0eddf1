// Batch signatures: one Ed25519 signature over the Merkle root of a committed batch
// of entries, and in each entry that signature plus the entry's inclusion proof, so
// that every entry stays verifiable on its own with the public key alone. The tree
// is RFC 9162 §2.1 (Certificate Transparency v2): leaf = SHA-256(0x00 ‖ entry hash),
// node = SHA-256(0x01 ‖ left ‖ right), a tree of n leaves splits at the largest
// power of two below n. docs/journal.md §1 restates every rule here for an
// independent verifier.
import * as nodeCrypto from "node:crypto";
import { createHash } from "node:crypto";

/** Version tag and separator of the compact batch signature form. */
export const BATCH_SIGNATURE_PREFIX = "mt1.";
/** `alg` of the signed batch message: it can never be read as an entry or head text. */
export const BATCH_ALG = "warden.journal.batch.v1";
/** Largest batch one root may sign; bounds an inclusion path at 12 elements. */
export const MAX_BATCH_SIZE = 4096;
/** ceil(log2(MAX_BATCH_SIZE)). */
export const MAX_PATH_LENGTH = 12;
/**
 * Longest batch signature text: prefix, a 16-digit first_seq, a 4-digit size, the
 * 86-character signature and 12 path elements of 43 characters, with their dots.
 */
export const MAX_SIGNATURE_LENGTH = 4 + 16 + 1 + 4 + 1 + 86 + MAX_PATH_LENGTH * 44;

/**
 * Canonical base64url only: the last character of a 64-byte value carries 4 unused
 * bits and that of a 32-byte value 2, which must be zero, or one value would have
 * several texts. Numbers are decimal without leading zeros (bounds checked in code).
 */
const BATCH_SIGNATURE_RE =
  /^mt1\.([1-9][0-9]{0,15})\.([1-9][0-9]{0,3})\.([A-Za-z0-9_-]{85}[AQgw])((?:\.[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]){0,12})$/;

export interface BatchSignature {
  /** seq of the batch's first entry (leaf 0). */
  firstSeq: number;
  /** Number of entries (leaves) in the batch. */
  size: number;
  /** The Ed25519 signature over the batch message, base64url as written. */
  signature: string;
  /** Sibling hashes from the leaf up to the root (RFC 9162 inclusion path). */
  path: Buffer[];
}

/**
 * Parses a batch signature text strictly; null for anything else (an entry-mode
 * signature included). Index range and path length depend on the entry's seq and
 * are checked by `rootFromPath`.
 */
export function parseBatchSignature(text: string): BatchSignature | null {
  if (text.length > MAX_SIGNATURE_LENGTH || !text.startsWith(BATCH_SIGNATURE_PREFIX)) return null;
  const m = BATCH_SIGNATURE_RE.exec(text);
  if (m === null) return null;
  const firstSeq = Number(m[1]);
  const size = Number(m[2]);
  if (!Number.isSafeInteger(firstSeq) || size > MAX_BATCH_SIZE) return null;
  // The batch's last seq must be a seq too (written without an overflowing sum).
  if (size - 1 > Number.MAX_SAFE_INTEGER - firstSeq) return null;
  const rest = m[4]!;
  const path =
    rest === ""
      ? []
      : rest
          .slice(1)
          .split(".")
          .map((p) => Buffer.from(p, "base64url"));
  return { firstSeq, size, signature: m[3]!, path };
}

/** The compact text of a batch signature for one entry. */
export function formatBatchSignature(b: {
  firstSeq: number;
  size: number;
  signature: string;
  path: readonly Buffer[];
}): string {
  let s = `${BATCH_SIGNATURE_PREFIX}${b.firstSeq}.${b.size}.${b.signature}`;
  for (const p of b.path) s += `.${p.toString("base64url")}`;
  return s;
}

/** The bytes the batch signature covers: canonical JSON, members in RFC 8785 order. */
export function batchMessage(keyId: string, firstSeq: number, size: number, root: Buffer): string {
  // key_id matches KEY_ID_PATTERN (base64url), so JSON.stringify is its canonical form.
  return (
    `{"alg":"${BATCH_ALG}","first_seq":${firstSeq},"key_id":${JSON.stringify(keyId)},` +
    `"root":"sha256:${root.toString("hex")}","size":${size}}`
  );
}

const oneShot = (nodeCrypto as { hash?: (alg: string, data: Buffer, enc: BufferEncoding) => string }).hash;
// Hashes come out as 32-character latin1 strings (one character per byte): a Buffer
// result costs three times as much per call as the hash of 33 or 65 bytes itself,
// and a tree of n entries takes 2n - 1 of them.
const sha256Bin: (b: Buffer) => string =
  typeof oneShot === "function"
    ? (b) => oneShot("sha256", b, "latin1")
    : (b) => createHash("sha256").update(b).digest("latin1");
const sha256 = (b: Buffer): Buffer => Buffer.from(sha256Bin(b), "latin1");

const leafInput = Buffer.alloc(33);
const nodeInput = Buffer.alloc(65);
nodeInput[0] = 1;

/** RFC 9162 leaf hash of an entry: SHA-256(0x00 ‖ the 32 bytes of its `sha256:` hash). */
export function leafHash(entryHash: string): Buffer {
  leafInput.write(entryHash.slice(7), 1, 32, "hex");
  return sha256(leafInput);
}

function nodeHash(left: Buffer, right: Buffer): Buffer {
  left.copy(nodeInput, 1);
  right.copy(nodeInput, 33);
  return sha256(nodeInput);
}

/** A node of the tree being built: its hash as latin1 text, base64url once a path needs it. */
interface Node {
  bin: string;
  b64: string | null;
}

/**
 * The tree over `hashes`, calling `onPath(leaf, node)` for every node of every leaf's
 * inclusion path, from the leaf up. Built level by level: pairing neighbours and
 * carrying a lone last node up unchanged gives exactly RFC 9162's split at the
 * largest power of two (tested against the recursive definition).
 */
function walkTree(hashes: readonly string[], onPath: (leaf: number, node: Node) => void): string {
  const n = hashes.length;
  if (n < 1 || n > MAX_BATCH_SIZE) throw new RangeError(`a batch holds 1 to ${MAX_BATCH_SIZE} entries`);
  let level: Node[] = new Array<Node>(n);
  for (let i = 0; i < n; i++) {
    leafInput.write(hashes[i]!.slice(7), 1, 32, "hex");
    level[i] = { bin: sha256Bin(leafInput), b64: null };
  }
  // Leaves covered by each node of the current level: [start, end).
  let width = 1;
  while (level.length > 1) {
    const next: Node[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i]!;
      const right = level[i + 1];
      if (right === undefined) {
        next.push(left);
        continue;
      }
      const lo = i * width;
      const mid = Math.min(n, lo + width);
      const hi = Math.min(n, mid + width);
      for (let k = lo; k < mid; k++) onPath(k, right);
      for (let k = mid; k < hi; k++) onPath(k, left);
      nodeInput.write(left.bin, 1, 32, "latin1");
      nodeInput.write(right.bin, 33, 32, "latin1");
      next.push({ bin: sha256Bin(nodeInput), b64: null });
    }
    level = next;
    width *= 2;
  }
  return level[0]!.bin;
}

/** The root and every leaf's inclusion path of the RFC 9162 tree over `hashes` (entry hashes in seq order). */
export function buildTree(hashes: readonly string[]): { root: Buffer; paths: Buffer[][] } {
  const paths: Buffer[][] = Array.from({ length: hashes.length }, () => []);
  const root = walkTree(hashes, (k, node) => {
    paths[k]!.push(Buffer.from(node.bin, "latin1"));
  });
  return { root: Buffer.from(root, "latin1"), paths };
}

/**
 * buildTree for sealing: the root, and each leaf's path as the text that ends its
 * batch signature (`.<element>` per path element, base64url, as formatBatchSignature
 * writes it), each node encoded once however many paths hold it.
 */
export function batchTree(hashes: readonly string[]): { root: Buffer; pathTexts: string[] } {
  const pathTexts = new Array<string>(hashes.length).fill("");
  const root = walkTree(hashes, (k, node) => {
    if (node.b64 === null) node.b64 = Buffer.from(node.bin, "latin1").toString("base64url");
    pathTexts[k] += `.${node.b64}`;
  });
  return { root: Buffer.from(root, "latin1"), pathTexts };
}

/**
 * RFC 9162 §2.1.3.2: the root a leaf's inclusion path leads to, or null when the
 * index is out of range or the path is not exactly as long as that leaf's path in
 * a tree of `size` leaves (too short, too long, or one element duplicated).
 */
export function rootFromPath(
  leaf: Buffer,
  index: number,
  size: number,
  path: readonly Buffer[],
): Buffer | null {
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0 || p.length !== 32) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}
