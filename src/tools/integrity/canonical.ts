// SchemaPin's "schemapin-v1" canonical form: what Python's
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False) writes,
// encoded as UTF-8. SchemaPin signatures are over these bytes, so Warden reproduces
// them exactly instead of reusing RFC 8785, from which they differ in two places:
//   - keys sort by Unicode code point (Python, Go), not by UTF-16 code unit (RFC 8785);
//     the two orders differ only when keys hold astral characters and U+E000..U+FFFF;
//   - non-integers below 1e-4 use Python's exponent form ("1e-05", "1.5e-07") where
//     RFC 8785 writes "0.00001" and "1.5e-7".
// Inputs a JSON parser in JavaScript cannot carry faithfully are refused rather than
// silently written differently from the signer: integers beyond 2^53, non-finite
// numbers, lone surrogates, cycles, non-plain objects and undefined members. An integral
// float written with a fraction by a Python signer ("1.0") parses to the integer 1 here
// and cannot be told apart; documented in docs/contract-integrity.md.
import { IntegrityError } from "../../contracts/index.js";

export const SCHEMAPIN_CANONICALIZATION = "schemapin-v1";

const MAX_DEPTH = 128;
const LONE_SURROGATE = /\p{Surrogate}/u;

const bad = (message: string) => new IntegrityError("ERR_INTEGRITY_CANONICAL", message);

/** Maps a UTF-16 code unit so that comparing mapped units orders well-formed strings by code point. */
function unitRank(u: number): number {
  if (u < 0xd800) return u;
  if (u <= 0xdfff) return u + 0x2000; // surrogates stand for code points above U+FFFF
  return u - 0x800;
}

export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return unitRank(x) - unitRank(y);
  }
  return a.length - b.length;
}

function pythonNumber(n: number, path: string): string {
  if (!Number.isFinite(n)) throw bad(`non-finite number at ${path}`);
  if (Number.isInteger(n)) {
    if (!Number.isSafeInteger(n)) throw bad(`integer beyond 2^53 at ${path} cannot be reproduced exactly`);
    return String(n); // -0 is written "0", as Python writes the integer 0
  }
  // A non-integer double is below 2^53, so its decimal exponent is at most 15, where
  // JavaScript and Python's float repr both write positional digits. Below 1e-4
  // Python switches to exponent form with at least two exponent digits.
  const [mantissa, exp] = n.toExponential().split("e") as [string, string];
  const e = Number(exp);
  if (e >= -4) return String(n);
  return `${mantissa}e-${String(-e).padStart(2, "0")}`;
}

function quote(s: string, path: string): string {
  if (LONE_SURROGATE.test(s)) throw bad(`lone surrogate at ${path}`);
  // For well-formed strings JSON.stringify escapes exactly what Python's
  // ensure_ascii=False encoder escapes: '"', '\\', \b \f \n \r \t, other C0 as \u00xx.
  return JSON.stringify(s);
}

/** The schemapin-v1 canonical text of a JSON value; throws ERR_INTEGRITY_CANONICAL. */
export function schemapinCanonical(value: unknown): string {
  const parts: string[] = [];
  const stack = new Set<object>();
  const walk = (v: unknown, depth: number, path: string): void => {
    if (v === null) {
      parts.push("null");
      return;
    }
    switch (typeof v) {
      case "string":
        parts.push(quote(v, path));
        return;
      case "number":
        parts.push(pythonNumber(v, path));
        return;
      case "boolean":
        parts.push(v ? "true" : "false");
        return;
      case "object":
        break;
      default:
        throw bad(`unsupported ${typeof v} at ${path}`);
    }
    if (depth >= MAX_DEPTH) throw bad(`nesting deeper than ${MAX_DEPTH} at ${path}`);
    if (stack.has(v)) throw bad(`cycle at ${path}`);
    stack.add(v);
    if (Array.isArray(v)) {
      parts.push("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) parts.push(",");
        walk(v[i], depth + 1, `${path}[${i}]`);
      }
      parts.push("]");
    } else {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw bad(`unsupported object at ${path}`);
      const obj = v as Record<string, unknown>;
      parts.push("{");
      let first = true;
      for (const key of Object.keys(obj).sort(compareCodePoints)) {
        const child = obj[key];
        if (child === undefined) throw bad(`undefined member ${path}.${key}`);
        if (!first) parts.push(",");
        first = false;
        parts.push(quote(key, `key of ${path}`), ":");
        walk(child, depth + 1, `${path}.${key}`);
      }
      parts.push("}");
    }
    stack.delete(v);
  };
  walk(value, 0, "$");
  return parts.join("");
}

export function schemapinCanonicalBytes(value: unknown): Buffer {
  return Buffer.from(schemapinCanonical(value), "utf8");
}
