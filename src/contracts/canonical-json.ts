// RFC 8785 (JCS) canonical JSON. Everything Warden hashes or signs goes through
// canonicalJson, so it refuses anything I-JSON (RFC 7493) forbids rather than
// silently producing bytes another implementation would not reproduce.
import { createHash } from "node:crypto";
import { CanonicalJsonError } from "./errors.js";

export const DEFAULT_MAX_DEPTH = 128;

export interface CanonicalOptions {
  /** Maximum nesting of arrays/objects (default 128). */
  maxDepth?: number;
}

/** A `sha256:` followed by 64 lowercase hex digits. */
export type Sha256Hash = `sha256:${string}`;

export const SHA256_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

const LONE_SURROGATE = /\p{Surrogate}/u;

/** Throws ERR_CANON_LONE_SURROGATE when `s` holds an unpaired UTF-16 surrogate. */
export function assertWellFormed(s: string, where: string): void {
  // With the `u` flag, a well-formed pair is one code point and never matches
  // \p{Surrogate}; only unpaired halves do.
  if (LONE_SURROGATE.test(s)) {
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

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Serialize a JSON value to RFC 8785 canonical JSON text. */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const stack = new Set<object>();
  const parts: string[] = [];

  const walk = (v: unknown, depth: number, path: string): void => {
    switch (typeof v) {
      case "string":
        assertWellFormed(v, path);
        parts.push(JSON.stringify(v));
        return;
      case "number":
        parts.push(serializeNumber(v));
        return;
      case "boolean":
        parts.push(v ? "true" : "false");
        return;
      case "object":
        break;
      default:
        throw new CanonicalJsonError("ERR_CANON_UNSUPPORTED_TYPE", `unsupported ${typeof v} at ${path}`);
    }
    if (v === null) {
      parts.push("null");
      return;
    }
    if (depth >= maxDepth) {
      throw new CanonicalJsonError("ERR_CANON_TOO_DEEP", `nesting deeper than ${maxDepth} at ${path}`);
    }
    if (stack.has(v)) throw new CanonicalJsonError("ERR_CANON_CYCLE", `cycle at ${path}`);
    stack.add(v);
    if (Array.isArray(v)) {
      parts.push("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) parts.push(",");
        walk(v[i], depth + 1, `${path}[${i}]`);
      }
      parts.push("]");
    } else if (isPlainObject(v)) {
      // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 requires.
      const keys = Object.keys(v).sort();
      parts.push("{");
      let first = true;
      for (const key of keys) {
        assertWellFormed(key, `key of ${path}`);
        const child = v[key];
        if (child === undefined) {
          throw new CanonicalJsonError("ERR_CANON_UNSUPPORTED_TYPE", `undefined at ${path}.${key}`);
        }
        if (!first) parts.push(",");
        first = false;
        parts.push(JSON.stringify(key), ":");
        walk(child, depth + 1, `${path}.${key}`);
      }
      parts.push("}");
    } else {
      const name = (v as { constructor?: { name?: string } }).constructor?.name ?? "object";
      throw new CanonicalJsonError("ERR_CANON_UNSUPPORTED_TYPE", `unsupported ${name} at ${path}`);
    }
    stack.delete(v);
  };

  walk(value, 0, "$");
  return parts.join("");
}

/** Canonical JSON as UTF-8 bytes. */
export function canonicalBytes(value: unknown, options?: CanonicalOptions): Buffer {
  return Buffer.from(canonicalJson(value, options), "utf8");
}

/** `sha256:<hex>` of raw bytes. */
export function sha256Hex(data: Uint8Array | string): Sha256Hash {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** `sha256:<hex>` of the canonical bytes of a JSON value. */
export function sha256Of(value: unknown, options?: CanonicalOptions): Sha256Hash {
  return sha256Hex(canonicalBytes(value, options));
}

export function isSha256Hash(s: unknown): s is Sha256Hash {
  return typeof s === "string" && SHA256_HASH_PATTERN.test(s);
}
