// Template text → tokens, once, at load time. A command `template` string is split into
// argv tokens on spaces outside quotes; quotes only group (no escapes, no expansion, no
// shell). `{name}` is a placeholder, `{{` and `}}` are literal braces. An `exec` array
// element is one token as written. Values are substituted per call into these tokens and
// never re-split, so an argument value can never become two argv elements.

export type Part = { lit: string } | { ref: string };

export interface Token {
  parts: Part[];
  /** Quoted tokens keep an empty value as an empty argv element; bare ones drop it. */
  quoted: boolean;
}

export type TemplateParse<T> = { ok: true; value: T } | { ok: false; message: string };

const REF_RE = /^(_?[A-Za-z][A-Za-z0-9_]{0,63}|_secret:[A-Za-z][A-Za-z0-9_]{0,63})$/;

/** Splits text with placeholders into literal and reference parts. */
export function parseParts(text: string): TemplateParse<Part[]> {
  const parts: Part[] = [];
  let lit = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "{") {
      if (text[i + 1] === "{") {
        lit += "{";
        i += 2;
        continue;
      }
      const end = text.indexOf("}", i + 1);
      if (end < 0) return { ok: false, message: `unclosed '{' at column ${i + 1}` };
      const name = text.slice(i + 1, end);
      if (!REF_RE.test(name)) return { ok: false, message: `invalid placeholder '{${name}}'` };
      if (lit !== "") parts.push({ lit });
      lit = "";
      parts.push({ ref: name });
      i = end + 1;
    } else if (c === "}") {
      if (text[i + 1] !== "}") return { ok: false, message: `unmatched '}' at column ${i + 1}` };
      lit += "}";
      i += 2;
    } else {
      lit += c;
      i++;
    }
  }
  if (lit !== "") parts.push({ lit });
  return { ok: true, value: parts };
}

/** Tokenises a command-line template: whitespace separates, quotes group. */
export function tokenizeTemplate(text: string): TemplateParse<Token[]> {
  const raw: { text: string; quoted: boolean }[] = [];
  let cur = "";
  let inToken = false;
  let quoted = false;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      quoted = true;
      inToken = true;
    } else if (c === " " || c === "\t") {
      if (inToken) raw.push({ text: cur, quoted });
      cur = "";
      inToken = false;
      quoted = false;
    } else if (c === "\n" || c === "\r") {
      return { ok: false, message: "line breaks are not allowed in a command template" };
    } else {
      cur += c;
      inToken = true;
    }
  }
  if (quote !== undefined) return { ok: false, message: `unterminated ${quote} quote` };
  if (inToken) raw.push({ text: cur, quoted });
  return tokensFrom(raw);
}

/** Tokens of an `exec` argv array: each element is exactly one token. */
export function tokenizeExec(elements: readonly string[]): TemplateParse<Token[]> {
  return tokensFrom(elements.map((text) => ({ text, quoted: false })));
}

function tokensFrom(raw: { text: string; quoted: boolean }[]): TemplateParse<Token[]> {
  const tokens: Token[] = [];
  for (const r of raw) {
    const parts = parseParts(r.text);
    if (!parts.ok) return parts;
    tokens.push({ parts: parts.value, quoted: r.quoted });
  }
  return { ok: true, value: tokens };
}

/** Placeholder names used anywhere in the tokens. */
export function tokenRefs(tokens: readonly Token[]): string[] {
  return tokens.flatMap((t) => t.parts.flatMap((p) => ("ref" in p ? [p.ref] : [])));
}

/**
 * Placeholders that may put a leading '-' at the start of an argv element before the
 * command has ended its options with a literal `--` token. `mayDash` says which
 * placeholders can (opted-in arguments); `nested` gives a conditional's own tokens, which
 * are checked where the conditional stands.
 */
export function unprotectedDashRefs(
  tokens: readonly Token[],
  mayDash: (ref: string) => boolean,
  nested: (ref: string) => readonly Token[] | undefined,
  ended = false,
): string[] {
  const found: string[] = [];
  let optionsEnded = ended;
  for (const t of tokens) {
    if (
      t.parts.length === 1 &&
      "lit" in (t.parts[0] as Part) &&
      (t.parts[0] as { lit: string }).lit === "--"
    ) {
      optionsEnded = true;
      continue;
    }
    for (const p of t.parts) {
      if ("lit" in p) {
        if (p.lit !== "") break;
        continue;
      }
      const inner = nested(p.ref);
      if (inner !== undefined) found.push(...unprotectedDashRefs(inner, mayDash, nested, optionsEnded));
      else if (!optionsEnded && mayDash(p.ref)) found.push(p.ref);
    }
  }
  return found;
}
