// The body of an append, made fit to seal: a private plain-data copy of the
// caller's object, refusing what canonicalJson refuses (the same error codes) and
// any `__proto__` member, then its RFC 8785 text written natively. It replaces
// canonicalJson → JSON.parse → a __proto__ walk, three JavaScript walks of every body. Credential masking needs a look at every string, but almost
// no body holds a credential: every masking rule needs one of a few ASCII words
// that JSON escaping never splits, so one scan of the canonical text tells whether
// the full per-string scan (redactCredentials) has anything to find.
import { canonicalJson, DEFAULT_MAX_DEPTH, JournalError, WardenError } from "../contracts/index.js";

/**
 * Matches wherever any rule of redact.ts could: each rule's pattern (or, for
 * secret-named members, the member name) contains one of these words, compared
 * case-insensitively. A superset is all it must be: a false hit costs only the
 * full scan. Every repetition is bounded or stops at a character the next part
 * needs, so the scan is linear. test/journal/prepare.test.ts checks it against
 * every rule and against the flat alternation it was written as.
 * The alternatives are grouped by their first letter: the same language as the
 * flat alternation (a test asks only whether some alternative matches somewhere),
 * but the engine tries one branch per position instead of twenty, which halves the
 * scan of a decision entry (bench/decide.ts).
 */
export const CREDENTIAL_HINT =
  /-----BEGIN|b(?:earer|asic)|eyJ[A-Za-z0-9_-]{5}|a(?:(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}|Iza|pi[_-]?key|uthorization)|s(?:ecret|k-[A-Za-z0-9_-]{20}|k_(?:live|test)_)|rk_(?:live|test)_|g(?:h[pousr]_|ithub_pat_)|xox[abposre]-|:\/\/[^\s:@/?#]+:[^\s@/?#]+@|p(?:ass(?:w|phrase)|wd|rivate[_-]?key)|token|cookie/i;

export interface PreparedBody {
  body: Record<string, unknown>;
  json: string;
}

const isWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed;
const LONE_SURROGATE = /\p{Surrogate}/u;
const wellFormed = isWellFormed
  ? (s: string): boolean => isWellFormed.call(s)
  : (s: string): boolean => !LONE_SURROGATE.test(s);

/** Why the walk stopped; canonicalJson is asked afterwards for the path and code. */
class Refusal {
  constructor(readonly proto: boolean) {}
}

interface Walk {
  /** A member name starting with a digit: JS would order it before the others. */
  numericKey: boolean;
}

/**
 * Sorts member names by UTF-16 code units (RFC 8785's order, and what `<` compares):
 * an insertion sort, which for the few members of a body's objects costs less than
 * Array.prototype.sort; larger objects use the native sort.
 */
function sortNames(names: string[]): string[] {
  const n = names.length;
  if (n > 24) return names.sort();
  for (let i = 1; i < n; i++) {
    const k = names[i]!;
    let j = i - 1;
    while (j >= 0 && names[j]! > k) {
      names[j + 1] = names[j]!;
      j--;
    }
    names[j + 1] = k;
  }
  return names;
}

// The copy's members are inserted in RFC 8785 order (UTF-16 code units), so that
// JSON.stringify — native, and on plain data exactly RFC 8785 for strings and
// numbers — writes the canonical text. Integer-like names break that (objects list
// them first, in numeric order), so a body with any name starting with a digit is
// serialized by canonicalJson instead.
function copyValue(v: unknown, depth: number, w: Walk): unknown {
  switch (typeof v) {
    case "string":
      if (!wellFormed(v)) throw new Refusal(false);
      return v;
    case "number":
      if (!Number.isFinite(v)) throw new Refusal(false);
      return v === 0 ? 0 : v;
    case "boolean":
      return v;
    case "object":
      break;
    default:
      throw new Refusal(false);
  }
  if (v === null) return null;
  // Depth also ends cycles.
  if (depth >= DEFAULT_MAX_DEPTH) throw new Refusal(false);
  if (Array.isArray(v)) {
    const n = v.length;
    const copy = new Array<unknown>(n);
    for (let i = 0; i < n; i++) copy[i] = copyValue(v[i], depth + 1, w);
    return copy;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw new Refusal(false);
  const src = v as Record<string, unknown>;
  const names = sortNames(Object.keys(src));
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) {
    const key = names[i]!;
    // Refused rather than copied: assigning it would set the copy's prototype.
    if (key === "__proto__") throw new Refusal(true);
    if (!wellFormed(key)) throw new Refusal(false);
    const c = key.charCodeAt(0);
    if (c >= 48 && c <= 57) w.numericKey = true;
    const child = src[key];
    if (child === undefined) throw new Refusal(false);
    copy[key] = copyValue(child, depth + 1, w);
  }
  return copy;
}

/**
 * A private plain-data copy of `value` and its canonical JSON (equal to
 * canonicalJson(value), tested). Throws ERR_JOURNAL_BODY_INVALID for what
 * canonicalJson refuses (its error, with the same code, as the cause) and for a
 * `__proto__` member; messages name the path, never a value.
 */
export function prepareBody(value: Record<string, unknown>): PreparedBody {
  const w: Walk = { numericKey: false };
  let body: Record<string, unknown>;
  try {
    body = copyValue(value, 0, w) as Record<string, unknown>;
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    if (err.proto) throw new JournalError("ERR_JOURNAL_BODY_INVALID", "body holds a __proto__ member");
    // The slow walk names the place and the reason.
    try {
      canonicalJson(value);
    } catch (cause) {
      if (cause instanceof WardenError) {
        throw new JournalError("ERR_JOURNAL_BODY_INVALID", `body is not canonical JSON: ${cause.message}`, {
          cause,
        });
      }
      throw cause;
    }
    throw new JournalError("ERR_JOURNAL_BODY_INVALID", "body changed while it was copied");
  }
  // A toJSON planted on a prototype would make JSON.stringify write something else.
  const native = !w.numericKey && !("toJSON" in Object.prototype) && !("toJSON" in Array.prototype);
  return { body, json: native ? JSON.stringify(body) : canonicalJson(body) };
}
