// The first gate every string argument passes: bound its size, NFKC-normalise it so
// look-alikes (full-width `；`, `＄`, one-dot leaders) become the characters they imitate,
// then refuse shell metacharacters and invisible or bidirectional control characters.
// Later checks and the invocation only ever see the normalised value.

/** Characters no string argument may contain after normalisation. */
export const SHELL_METACHARACTERS: readonly string[] = [
  ";",
  "|",
  "&",
  "$",
  "`",
  "(",
  ")",
  "{",
  "}",
  "[",
  "]",
  "<",
  ">",
  "!",
  "\n",
  "\r",
  "\0",
];

const METACHAR_RE = /[;|&$`(){}[\]<>!\n\r\0]/;

// Controls (Cc), format characters (Cf: zero-width, bidi embeddings/isolates, soft hyphen,
// BOM, tags), line/paragraph separators, private use, plus invisible letters and marks
// that are not in those categories: Hangul fillers, combining grapheme joiner, variation
// selectors, braille blank.
/** The invisible/control characters above, as a regex source (flag `u`) for other screens and renderers. */
export const INVISIBLE_CHARS_SOURCE =
  "[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Co}\\u115f\\u1160\\u17b4\\u17b5\\u2800\\u3164\\uffa0]|\\u034f|[\\u180b-\\u180f]|[\\ufe00-\\ufe0f]|[\\u{e0100}-\\u{e01ef}]";
const INVISIBLE_RE = new RegExp(INVISIBLE_CHARS_SOURCE, "u");

const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type TextRule = "too-long" | "metachar" | "invisible" | "malformed";

export type TextCheck = { ok: true; value: string } | { ok: false; rule: TextRule; message: string };

export interface ScreenOptions {
  /**
   * Whether the shell metacharacter rule applies (default true). Only strings that reach
   * an [mcp] call, which is structured JSON and never a shell line, are screened without it;
   * there a line feed and a tab are text (a file's lines, a note), while every other
   * control character (carriage return, NUL, escape, …) and invisible/bidi characters stay
   * refused.
   */
  metachars?: boolean;
}

/** Normalises and screens one string. `maxLength` bounds the input before and after NFKC. */
export function screenText(raw: string, maxLength: number, options: ScreenOptions = {}): TextCheck {
  // Bound the work before normalising: NFKC can expand a character up to 18-fold.
  if (raw.length > maxLength) {
    return { ok: false, rule: "too-long", message: `longer than ${maxLength} characters` };
  }
  if (LONE_SURROGATE_RE.test(raw)) {
    return { ok: false, rule: "malformed", message: "contains a lone surrogate" };
  }
  const value = raw.normalize("NFKC");
  if (value.length > maxLength) {
    return {
      ok: false,
      rule: "too-long",
      message: `longer than ${maxLength} characters after normalisation`,
    };
  }
  const meta = options.metachars === false ? null : METACHAR_RE.exec(value);
  if (meta) {
    return { ok: false, rule: "metachar", message: `contains the shell metacharacter ${describe(meta[0])}` };
  }
  // Structured (non-shell) text may hold line feeds and tabs; nothing else invisible.
  const hidden = INVISIBLE_RE.exec(options.metachars === false ? value.replace(/[\n\t]/g, "") : value);
  if (hidden) {
    return {
      ok: false,
      rule: "invisible",
      message: `contains the invisible or control character ${describe(hidden[0])}`,
    };
  }
  return { ok: true, value };
}

/** True when `s` contains any shell metacharacter (used by tests and the output side). */
export function hasShellMetacharacter(s: string): boolean {
  return METACHAR_RE.test(s);
}

function describe(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  return cp > 0x20 && cp < 0x7f ? `'${ch}' (${hex})` : hex;
}
