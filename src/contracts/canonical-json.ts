// RFC 8785 (JCS) canonical JSON. Everything Warden hashes or signs goes through
// canonicalJson, so it refuses anything I-JSON (RFC 7493) forbids rather than
// silently producing bytes another implementation would not reproduce.

import * as nodeCrypto from "node:crypto";
import { createHash } from "node:crypto";
import { CanonicalJsonError } from "./errors.js";
import { isPlainObject } from "./values.js";

export const DEFAULT_MAX_DEPTH = 128;

export interface CanonicalOptions {
  /** Maximum nesting of arrays/objects (default 128). */
  maxDepth?: number;
}

/** A `sha256:` followed by 64 lowercase hex digits. */
export type Sha256Hash = `sha256:${string}`;

export const SHA256_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

const LONE_SURROGATE = /\p{Surrogate}/u;

/** Node 20+ has String.prototype.isWellFormed (ES2024); the regex is the fallback. */
const nativeWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;
// With the `u` flag, a well-formed pair is one code point and never matches \p{Surrogate}.
const isWellFormed = nativeWellFormed
  ? (s: string): boolean => nativeWellFormed.call(s)
  : (s: string): boolean => !LONE_SURROGATE.test(s);

/** Throws ERR_CANON_LONE_SURROGATE when `s` holds an unpaired UTF-16 surrogate. */
export function assertWellFormed(s: string, where: string): void {
  if (!isWellFormed(s)) {
    throw new CanonicalJsonError("ERR_CANON_LONE_SURROGATE", `lone surrogate in ${where}`);
  }
}

function serializeNumber(n: number): string {
  if (!Number.isFinite(n)) {
    throw new CanonicalJsonError("ERR_CANON_NON_FINITE_NUMBER", `non-finite number ${String(n)}`);
  }
  // ECMAScript Number::toString is exactly RFC 8785's number form; it writes -0 as "0".
  return String(n);
}

/** Thrown by the fast walk at anything it does not accept; never escapes canonicalJson. */
const REFUSED = Symbol("refused");

interface Out {
  s: string;
}

// Printable ASCII without `"` and `\`: JSON.stringify writes such a string as itself in
// quotes, so the fast walk skips the escaping pass (and the surrogate check: no
// surrogates here). Only short strings are tried, so a long one never pays twice.
// (The journal's entry lines write such members the same way: segment-format.ts.)
export const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const PLAIN_MAX = 512;

// Member names repeat across everything Warden hashes (`decision_id`, `toolClass`, ...):
// the text a member's name is written as — `"name":` first in its object, `,"name":`
// after another member — is remembered, so writing a member allocates no new string.
// Bounded, and only short well-formed names, so names from untrusted parameters cannot
// grow it without limit.
interface QuotedKey {
  first: string;
  next: string;
}
const quotedKeys = new Map<string, QuotedKey>();
const QUOTED_KEYS_MAX = 2048;
const QUOTED_KEY_LENGTH_MAX = 64;

function quoteKey(key: string): QuotedKey {
  let q = quotedKeys.get(key);
  if (q !== undefined) return q;
  if (!isWellFormed(key)) throw REFUSED;
  const quoted = JSON.stringify(key);
  q = { first: `${quoted}:`, next: `,${quoted}:` };
  if (key.length <= QUOTED_KEY_LENGTH_MAX && quotedKeys.size < QUOTED_KEYS_MAX) quotedKeys.set(key, q);
  return q;
}

// Sorting member names is most of the cost of a small object (~0.5 µs for 14 names), and
// the objects Warden hashes come in a few fixed shapes (requests, session events, records).
// The sorted order is remembered per name list: looked up by first name, matched by
// comparing the whole list (names are interned, so these are pointer comparisons).
// Bounded, so objects with untrusted member names cannot grow it.
const sortedByFirst = new Map<string, { names: string[]; sorted: string[] }[]>();
const SORTED_FIRSTS_MAX = 512;
const SORTED_PER_FIRST_MAX = 4;
const SORTED_NAMES_MAX = 64;

function sortedNames(names: string[]): string[] {
  const n = names.length;
  const bucket = sortedByFirst.get(names[0]!);
  if (bucket !== undefined) {
    for (const e of bucket) {
      const c = e.names;
      if (c.length !== n) continue;
      let same = true;
      for (let i = 1; i < n; i++) {
        if (c[i] !== names[i]) {
          same = false;
          break;
        }
      }
      if (same) return e.sorted;
    }
  }
  const sorted = names.slice().sort();
  if (n <= SORTED_NAMES_MAX) {
    if (bucket === undefined) {
      if (sortedByFirst.size < SORTED_FIRSTS_MAX) sortedByFirst.set(names[0]!, [{ names, sorted }]);
    } else if (bucket.length < SORTED_PER_FIRST_MAX) bucket.push({ names, sorted });
  }
  return sorted;
}

/**
 * The fast walk: the same output as `checkedJson` for every value that one accepts, and
 * it throws for every value that one refuses — but it keeps no path and no set of open
 * objects. A cycle recurses until the depth limit (or the stack) stops it. Everything
 * Warden hashes or journals goes through here on the decision path, so the bookkeeping
 * that exists only to word an error message is left to the checked walk, which runs
 * only after the fast one refused.
 */
function fastWalk(v: unknown, depth: number, maxDepth: number, out: Out): void {
  switch (typeof v) {
    case "string":
      if (v.length <= PLAIN_MAX && JSON_PLAIN.test(v)) {
        out.s += `"${v}"`;
        return;
      }
      if (!isWellFormed(v)) throw REFUSED;
      out.s += JSON.stringify(v);
      return;
    case "number":
      if (!Number.isFinite(v)) throw REFUSED;
      out.s += String(v);
      return;
    case "boolean":
      out.s += v ? "true" : "false";
      return;
    case "object":
      break;
    default:
      throw REFUSED;
  }
  if (v === null) {
    out.s += "null";
    return;
  }
  if (depth >= maxDepth) throw REFUSED;
  if (Array.isArray(v)) {
    const n = v.length;
    if (n === 0) {
      out.s += "[]";
      return;
    }
    out.s += "[";
    for (let i = 0; i < n; i++) {
      if (i > 0) out.s += ",";
      fastWalk(v[i], depth + 1, maxDepth, out);
    }
    out.s += "]";
    return;
  }
  if (!isPlainObject(v)) throw REFUSED;
  let names = Object.keys(v);
  if (names.length === 0) {
    out.s += "{}";
    return;
  }
  if (names.length > 1) names = sortedNames(names);
  out.s += "{";
  for (let i = 0; i < names.length; i++) {
    const key = names[i] as string;
    const child = v[key];
    if (child === undefined) throw REFUSED;
    const q = quoteKey(key);
    out.s += i > 0 ? q.next : q.first;
    fastWalk(child, depth + 1, maxDepth, out);
  }
  out.s += "}";
}

/** Serialize a JSON value to RFC 8785 canonical JSON text. */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const out: Out = { s: "" };
  try {
    fastWalk(value, 0, maxDepth, out);
    return out.s;
  } catch (err) {
    if (err !== REFUSED && !(err instanceof RangeError)) throw err;
    // Refused (or the stack ran out on a cycle under a large depth limit): the checked
    // walk finds the first problem in document order and names it with its path.
  }
  return checkedJson(value, maxDepth);
}

/**
 * The reference walk: tracks the path and the open objects to report what is wrong, and
 * where. @internal exported for the test that holds the fast walk to it.
 */
export function checkedJson(value: unknown, maxDepth: number = DEFAULT_MAX_DEPTH): string {
  const stack = new Set<object>();
  // The path to the current value, kept as a stack of keys and indexes and turned into
  // text only for an error message: building it per node costs more than the output.
  const keys: (string | number)[] = [];
  const where = (): string => keys.map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`)).join("");
  const at = () => `$${where()}`;
  let out = "";

  const str = (s: string, what: () => string): string => {
    if (!isWellFormed(s))
      throw new CanonicalJsonError("ERR_CANON_LONE_SURROGATE", `lone surrogate in ${what()}`);
    return JSON.stringify(s);
  };

  const walk = (v: unknown, depth: number): void => {
    switch (typeof v) {
      case "string":
        out += str(v, at);
        return;
      case "number":
        out += serializeNumber(v);
        return;
      case "boolean":
        out += v ? "true" : "false";
        return;
      case "object":
        break;
      default:
        throw new CanonicalJsonError("ERR_CANON_UNSUPPORTED_TYPE", `unsupported ${typeof v} at ${at()}`);
    }
    if (v === null) {
      out += "null";
      return;
    }
    if (depth >= maxDepth) {
      throw new CanonicalJsonError("ERR_CANON_TOO_DEEP", `nesting deeper than ${maxDepth} at ${at()}`);
    }
    if (stack.has(v)) throw new CanonicalJsonError("ERR_CANON_CYCLE", `cycle at ${at()}`);
    stack.add(v);
    if (Array.isArray(v)) {
      out += "[";
      for (let i = 0; i < v.length; i++) {
        if (i > 0) out += ",";
        keys.push(i);
        walk(v[i], depth + 1);
        keys.pop();
      }
      out += "]";
    } else if (isPlainObject(v)) {
      // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 requires.
      const names = Object.keys(v).sort();
      out += "{";
      for (let i = 0; i < names.length; i++) {
        const key = names[i] as string;
        const child = v[key];
        keys.push(key);
        if (child === undefined) {
          throw new CanonicalJsonError("ERR_CANON_UNSUPPORTED_TYPE", `undefined at ${at()}`);
        }
        if (i > 0) out += ",";
        out += str(key, () => `key at ${at()}`);
        out += ":";
        walk(child, depth + 1);
        keys.pop();
      }
      out += "}";
    } else {
      const name = (v as { constructor?: { name?: string } }).constructor?.name ?? "object";
      throw new CanonicalJsonError("ERR_CANON_UNSUPPORTED_TYPE", `unsupported ${name} at ${at()}`);
    }
    stack.delete(v);
  };

  walk(value, 0);
  return out;
}

/** Canonical JSON as UTF-8 bytes. */
export function canonicalBytes(value: unknown, options?: CanonicalOptions): Buffer {
  return Buffer.from(canonicalJson(value, options), "utf8");
}

// Node >= 20.12 has a one-shot crypto.hash (no Hash object per call): about half the cost
// of createHash for the small inputs hashed on every decision. Same bytes, same digest.
const oneShot = (nodeCrypto as { hash?: (alg: string, data: string | Uint8Array, enc: "hex") => string })
  .hash;

/** `sha256:<hex>` of raw bytes (a string is hashed as its UTF-8 encoding). */
export function sha256Hex(data: Uint8Array | string): Sha256Hash {
  if (oneShot !== undefined) return `sha256:${oneShot("sha256", data, "hex")}`;
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** `sha256:<hex>` of the canonical bytes of a JSON value. */
export function sha256Of(value: unknown, options?: CanonicalOptions): Sha256Hash {
  // The hash takes the text and encodes it as UTF-8 itself: the same bytes as
  // canonicalBytes, without an intermediate Buffer per hash.
  return sha256Hex(canonicalJson(value, options));
}

export function isSha256Hash(s: unknown): s is Sha256Hash {
  return typeof s === "string" && SHA256_HASH_PATTERN.test(s);
}
