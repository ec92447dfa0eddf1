// A strict JSON text parser for untrusted input. JSON.parse keeps the last of
// duplicate keys and lets "__proto__" through as an own key that later spreads
// can turn into prototype pollution; two parsers disagreeing on duplicates is a
// classic signature-bypass. This one rejects both, plus lone surrogates, and
// bounds size and depth.
import { assertWellFormed } from "./canonical-json.js";
import { CanonicalJsonError } from "./errors.js";

export interface StrictJsonOptions {
  /** Maximum input length in UTF-16 code units (default 16 MiB). */
  maxLength?: number;
  /** Maximum nesting depth (default 128). */
  maxDepth?: number;
}

const FORBIDDEN_KEYS = new Set(["__proto__"]);

export function parseStrictJson(text: string, options: StrictJsonOptions = {}): unknown {
  const maxLength = options.maxLength ?? 16 * 1024 * 1024;
  const maxDepth = options.maxDepth ?? 128;
  if (text.length > maxLength) {
    throw new CanonicalJsonError("ERR_JSON_TOO_LARGE", `JSON text longer than ${maxLength} characters`);
  }
  let i = 0;

  const fail = (msg: string): never => {
    throw new CanonicalJsonError("ERR_JSON_SYNTAX", `${msg} at offset ${i}`, { details: { offset: i } });
  };
  const ws = (): void => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };
  const expectWord = (word: string, value: unknown): unknown => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail("unexpected token");
  };

  const parseString = (): string => {
    i++; // opening quote
    let out = "";
    let start = i;
    for (;;) {
      if (i >= text.length) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        break;
      }
      if (c < 0x20) fail("control character in string");
      if (c === 0x5c) {
        out += text.slice(start, i);
        const e = text[i + 1];
        i += 2;
        switch (e) {
          case '"':
            out += '"';
            break;
          case "\\":
            out += "\\";
            break;
          case "/":
            out += "/";
            break;
          case "b":
            out += "\b";
            break;
          case "f":
            out += "\f";
            break;
          case "n":
            out += "\n";
            break;
          case "r":
            out += "\r";
            break;
          case "t":
            out += "\t";
            break;
          case "u": {
            const hex = text.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
            out += String.fromCharCode(Number.parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            i -= 2;
            fail("bad escape");
        }
        start = i;
        continue;
      }
      i++;
    }
    assertWellFormed(out, `string ending at offset ${i}`);
    return out;
  };

  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const parseNumber = (): number => {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail("bad number");
    i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) {
      throw new CanonicalJsonError("ERR_CANON_NON_FINITE_NUMBER", `number out of range at offset ${i}`);
    }
    return n;
  };

  const parseValue = (depth: number): unknown => {
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      if (depth >= maxDepth) {
        throw new CanonicalJsonError("ERR_CANON_TOO_DEEP", `nesting deeper than ${maxDepth} at offset ${i}`);
      }
      i++;
      return c === "{" ? parseObject(depth + 1) : parseArray(depth + 1);
    }
    if (c === '"') return parseString();
    if (c === "t") return expectWord("true", true);
    if (c === "f") return expectWord("false", false);
    if (c === "n") return expectWord("null", null);
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return parseNumber();
    return fail(c === undefined ? "unexpected end of input" : "unexpected token");
  };

  const parseArray = (depth: number): unknown[] => {
    const out: unknown[] = [];
    ws();
    if (text[i] === "]") {
      i++;
      return out;
    }
    for (;;) {
      out.push(parseValue(depth));
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === "]") {
        i++;
        return out;
      } else fail("expected , or ]");
    }
  };

  const parseObject = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    ws();
    if (text[i] === "}") {
      i++;
      return out;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') fail("expected string key");
      const keyAt = i;
      const key = parseString();
      if (FORBIDDEN_KEYS.has(key)) {
        throw new CanonicalJsonError("ERR_JSON_FORBIDDEN_KEY", `forbidden key "${key}" at offset ${keyAt}`);
      }
      if (seen.has(key)) {
        throw new CanonicalJsonError("ERR_JSON_DUPLICATE_KEY", `duplicate key at offset ${keyAt}`, {
          details: { key: key.slice(0, 64) },
        });
      }
      seen.add(key);
      ws();
      if (text[i] !== ":") fail("expected :");
      i++;
      out[key] = parseValue(depth);
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === "}") {
        i++;
        return out;
      } else fail("expected , or }");
    }
  };

  // A leading BOM is not JSON (RFC 8259 §8.1 says parsers MAY ignore it; we refuse).
  const value = parseValue(0);
  ws();
  if (i !== text.length) fail("trailing data");
  return value;
}
