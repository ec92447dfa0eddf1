// Text helpers of value-level provenance (provenance.ts): normalisation, the leaves of a
// JSON-like value, distinctive tokens, and the rolling k-gram hashes winnowing uses.
/** The kinds of distinctive token value provenance extracts. */
export type TokenKind = "url" | "email" | "host" | "iban" | "digits" | "token";

export interface Token {
  kind: TokenKind;
  text: string;
}

export interface Leaf {
  path: string;
  text: string;
}
const P1 = 2147483647; // 2^31 - 1
const P2 = 2147483629; // 2^31 - 19
const B1 = 65599;
const B2 = 31337;
const LOW21 = 2 ** 21;
const MAX_DEPTH = 64;

const SPLIT = /[\s"'<>()[\]{},;|`\\]+/u;
export const TRIM = /^[.,:;!?*#~=]+|[.,:;!?*#~=]+$/gu;
const HOST = /^[a-z0-9-]+(?:\.[a-z0-9-]+)+$/;
const TLD = /\.[a-z]{2,24}$/;
const HOST_PATH = /^([a-z0-9-]+(?:\.[a-z0-9-]+)+)\/\S*$/;
const EMAIL = /^[^@]+@([a-z0-9-]+(?:\.[a-z0-9-]+)+)$/;
const DISTINCT = /[0-9@/:._]/;
const IBAN = /\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?\b/g;
const DIGITS = /\d(?:[ -]?\d){7,}/g;
const NOT_ALNUM = /[^\p{L}\p{N}]+/gu;

// Format characters (zero-width spaces, joiners, bidi controls) are invisible: a copier
// can insert them freely, so they are removed before anything is compared. So are the
// invisible characters outside Cf that the contract layer also refuses: Hangul fillers
// (letters, so they would survive the alphanumeric compaction and split every k-gram),
// the combining grapheme joiner, Khmer inherent vowels, Mongolian and other variation
// selectors, and the braille blank.
const FORMAT_CHARS =
  /(?:[\p{Cf}\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0]|\u034f|[\u180b-\u180f]|[\ufe00-\ufe0f]|[\u{e0100}-\u{e01ef}])+/gu;
export const normalize = (s: string) => s.normalize("NFKC").replace(FORMAT_CHARS, "").toLowerCase();
export const compact = (normalized: string) => normalized.replace(NOT_ALNUM, "");
export const clip = (s: string) => (s.length > 64 ? s.slice(0, 64) : s);

/** String leaves (and object keys, and numbers) of a JSON-like value, within a character budget. */
export function collectLeaves(
  value: unknown,
  budget: number,
  keys = true,
): { leaves: Leaf[]; truncated: boolean } {
  const leaves: Leaf[] = [];
  let left = budget;
  let truncated = false;
  const seen = new WeakSet<object>();
  const push = (path: string, text: string) => {
    if (text.length === 0) return;
    if (text.length > left) {
      truncated = true;
      if (left > 0) leaves.push({ path, text: text.slice(0, left) });
      left = 0;
      return;
    }
    left -= text.length;
    leaves.push({ path, text });
  };
  const walk = (v: unknown, path: string, depth: number): void => {
    if (truncated) return;
    if (typeof v === "string" || typeof v === "number" || typeof v === "bigint") {
      push(path, String(v));
      return;
    }
    if (v === null || typeof v !== "object") return;
    if (depth >= MAX_DEPTH || seen.has(v)) {
      truncated = true;
      return;
    }
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) walk(v[i], `${path}[${i}]`, depth + 1);
      return;
    }
    for (const [key, item] of Object.entries(v)) {
      const p = path === "" ? key : `${path}.${key}`;
      if (keys) push(p, key);
      walk(item, p, depth + 1);
    }
  };
  walk(value, "", 0);
  return { leaves, truncated };
}

/** Distinctive tokens of a text, normalized; see the header for what qualifies. */
export function extractTokens(text: string, minToken: number): Token[] {
  const norm = normalize(text);
  const out: Token[] = [];
  const have = new Set<string>();
  const add = (kind: Token["kind"], t: string) => {
    if (have.has(t)) return;
    have.add(t);
    out.push({ kind, text: t });
  };
  // Structured kinds first, so a value is reported as what it most specifically is.
  for (const m of norm.matchAll(IBAN)) add("iban", m[0].replace(/ /g, ""));
  for (const m of norm.matchAll(DIGITS)) add("digits", m[0].replace(/[ -]/g, ""));
  for (const raw of norm.split(SPLIT)) {
    const t = raw.replace(TRIM, "");
    if (t.length < 4) continue;
    if (t.includes("://")) {
      add("url", t);
      try {
        const u = new URL(t);
        add("url", `${u.protocol}//${u.host}${u.pathname}`);
        if (u.hostname.length >= 4) add("host", u.hostname);
      } catch {
        // not a parseable URL: the whole token is still matched
      }
      continue;
    }
    const bare = HOST_PATH.exec(t);
    if (bare !== null && TLD.test(bare[1]!)) {
      // A link written without its scheme (`www.example.com/login`): a URL all the same.
      add("url", t);
      if (bare[1]!.length >= 4) add("host", bare[1]!);
      continue;
    }
    const email = EMAIL.exec(t);
    if (email !== null) {
      add("email", t);
      add("host", email[1]!);
      continue;
    }
    if (t.length >= minToken && HOST.test(t) && TLD.test(t)) {
      add("host", t);
      continue;
    }
    if (t.length >= minToken && DISTINCT.test(t)) add("token", t);
  }
  return out;
}

/** Letters and digits only, as one run: a copier can change spacing and punctuation freely. */
export function compactRuns(normalized: string): string[] {
  const c = compact(normalized);
  return c.length === 0 ? [] : [c];
}

/** Calls `fn(hash, position)` for every k-gram of `s` (rolling double-modulus hash, 52 bits). */
export function forEachGram(s: string, k: number, fn: (h: number, at: number) => void): void {
  if (s.length < k) return;
  let h1 = 0;
  let h2 = 0;
  let pow1 = 1;
  let pow2 = 1;
  for (let i = 0; i < k - 1; i++) {
    pow1 = (pow1 * B1) % P1;
    pow2 = (pow2 * B2) % P2;
  }
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (i >= k) {
      const out = s.charCodeAt(i - k);
      h1 = (h1 - ((out * pow1) % P1) + P1) % P1;
      h2 = (h2 - ((out * pow2) % P2) + P2) % P2;
    }
    h1 = (h1 * B1 + c) % P1;
    h2 = (h2 * B2 + c) % P2;
    if (i >= k - 1) fn(h1 * LOW21 + (h2 % LOW21), i - k + 1);
  }
}

/** Winnowing: the rightmost minimum hash of every window of `w` consecutive k-grams. */
export function winnow(s: string, k: number, w: number, fn: (h: number) => void): void {
  const hashes: number[] = [];
  forEachGram(s, k, (h) => hashes.push(h));
  if (hashes.length === 0) return;
  if (hashes.length <= w) {
    fn(Math.min(...hashes));
    return;
  }
  let last = -1;
  for (let start = 0; start + w <= hashes.length; start++) {
    let at = start;
    for (let j = start; j < start + w; j++) if (hashes[j]! <= hashes[at]!) at = j;
    if (at !== last) {
      fn(hashes[at]!);
      last = at;
    }
  }
}
