// Every byte the console sends to a browser is built here. `html` is a tagged template
// whose interpolations are escaped unless they are already `Html` (built by this module),
// so a page cannot put an agent-controlled string into markup by accident. Agent-
// controlled text is also made *visible*: invisible and bidirectional control characters
// become marked `U+XXXX` badges, a letter from another script inside an otherwise Latin
// word (a look-alike of an allowed domain) is marked, and very long strings are cut with
// their length shown. The browser never parses what the agent wrote as anything but text.
import { INVISIBLE_CHARS_SOURCE } from "../tools/index.js";

const BRAND: unique symbol = Symbol("warden.console.html");

/** Markup built by this module (escaped); the only thing a page may send. */
export interface Html {
  readonly [BRAND]: true;
  readonly value: string;
}

/** Longest agent string shown whole; longer ones are cut and marked with their length. */
export const MAX_SHOWN_CHARS = 4096;

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function mark(value: string): Html {
  return { [BRAND]: true, value };
}

/** Escapes text for element content and quoted attribute values. */
export function escapeText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

export function isHtml(v: unknown): v is Html {
  return typeof v === "object" && v !== null && (v as { [BRAND]?: unknown })[BRAND] === true;
}

/** Trusted markup written in this code base (never call with data). */
export function trusted(literal: string): Html {
  return mark(literal);
}

function part(v: unknown): string {
  if (isHtml(v)) return v.value;
  if (Array.isArray(v)) return v.map(part).join("");
  if (v === undefined || v === null || v === false) return "";
  return escapeText(String(v));
}

/** `html\`<p>${value}</p>\``: interpolations are escaped; arrays are joined; Html passes. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += part(values[i]) + (strings[i + 1] ?? "");
  return mark(out);
}

// Tab and line feed are shown as themselves (text is rendered pre-wrap); every other
// invisible or control character becomes a badge.
const INVISIBLE_G = new RegExp(`(?![\\t\\n])(?:${INVISIBLE_CHARS_SOURCE})`, "gu");
const WORD_G = /[^\s]+/gu;
const LATIN_LETTER = /[A-Za-z]/;
const NON_ASCII_LETTER_G = /[^\p{ASCII}\P{L}]/gu;

function codePoint(c: string): string {
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

function badge(kind: "invisible" | "confusable", c: string, shown: string): string {
  return `<mark class="${kind}" title="${kind} character ${codePoint(c)}">${shown}</mark>`;
}

function markWord(word: string): string {
  const mixed = LATIN_LETTER.test(word) && /[^\p{ASCII}]/u.test(word);
  if (!mixed) return escapeText(word);
  let out = "";
  let last = 0;
  for (const m of word.matchAll(NON_ASCII_LETTER_G)) {
    out += escapeText(word.slice(last, m.index)) + badge("confusable", m[0], escapeText(m[0]));
    last = m.index + m[0].length;
  }
  return out + escapeText(word.slice(last));
}

function markSegment(s: string): string {
  let out = "";
  let last = 0;
  for (const m of s.matchAll(WORD_G)) {
    out += escapeText(s.slice(last, m.index)) + markWord(m[0]);
    last = m.index + m[0].length;
  }
  return out + escapeText(s.slice(last));
}

/**
 * Agent-controlled text, made visible: escaped, invisible/bidi characters as `U+XXXX`
 * badges, non-ASCII letters inside Latin words marked as confusable, cut past
 * MAX_SHOWN_CHARS with the full length stated. Render it inside an element styled
 * `white-space: pre-wrap`.
 */
export function agentText(s: string): Html {
  const cut = s.length > MAX_SHOWN_CHARS;
  const shown = cut ? s.slice(0, MAX_SHOWN_CHARS) : s;
  let out = "";
  let last = 0;
  for (const m of shown.matchAll(INVISIBLE_G)) {
    out += markSegment(shown.slice(last, m.index)) + badge("invisible", m[0], codePoint(m[0]));
    last = m.index + m[0].length;
  }
  out += markSegment(shown.slice(last));
  if (cut) out += `<mark class="truncated">… cut: ${s.length.toLocaleString("en")} characters in all</mark>`;
  return mark(`<span class="agent-text">${out}</span>`);
}
