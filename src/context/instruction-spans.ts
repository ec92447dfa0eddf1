// Where in a text screening found instructions addressed to the agent: the spans of the
// ORIGINAL text (offsets into it) that hold the injected block, for flow control's vouching
// (provenance-vouch.ts): a value inside a flagged span is the attacker's and never vouches.
// The detector (instructions.ts) is used as it is, a black box over whole texts, so its
// normalisation (confusables, markup, entities, comments …) applies to every piece tried and
// no offset has to be mapped back through it:
//   1. the match   the shortest run of units (sentences, lines, markup tags) the detector
//                  still flags: the first unit boundary at which a prefix of the text is
//                  flagged, then the last unit start from which that prefix still is
//   2. the block   an injection's content follows its trigger, so the match is extended to
//                  its enclosing block: the innermost block-level markup element or HTML
//                  comment holding it (`<INFORMATION>…</INFORMATION>`, `<div>…</div>`), whole;
//                  outside any element, from the match's first sentence to the end of its
//                  paragraph (a blank line or the end of the text; the rest of a `TODO:` line
//                  is in it); an element the span cuts into is taken whole
//   3. repeat      from the end of the block, while the rest of the text is flagged
// Fail closed: a flagged text where no span can be located (the detector is not monotonic
// there), more than MAX_SPANS blocks, or a text over MAX_TEXT characters is one span, whole.
// Limit: text in front of the instruction's first sentence and outside its element is not
// in the span (an attacker who writes an unflagged sentence there is an attacker who forged
// the unflagged part of the document: docs/threat-model.md#flow-control).
import { instructionFindings } from "./instructions.js";
import { COMMENT, INLINE, TAG } from "./normalise.js";

export interface TextSpan {
  /** Offset of the first character (UTF-16 code units of the original text). */
  start: number;
  /** Offset past the last character. */
  end: number;
}

/** Whether the detector flags a text (the default: instructions.ts, every rule). */
export type FlagTest = (text: string) => boolean;

// Each located block costs about 2·log2(units) detector runs over at most MAX_TEXT characters.
const MAX_SPANS = 8;
const MAX_TEXT = 32_000;
/** Open elements remembered while pairing tags (deeper nesting: the outer ones are dropped). */
const MAX_OPEN = 64;

const defaultTest: FlagTest = (t) => instructionFindings(t).length > 0;

// Unit boundaries: after a sentence's end and its spaces, at a line break, before and after a tag.
const BOUNDARY = /[.!?]+["')\]]*\s+|\n|(?=<)|>/g;
const PARAGRAPH_END = /\n[^\S\n]*\n/g;

function boundaries(text: string): number[] {
  const out = new Set<number>([0, text.length]);
  for (const m of text.matchAll(BOUNDARY)) out.add((m.index ?? 0) + m[0].length);
  return [...out].sort((a, b) => a - b);
}

/** Block-level markup elements (matched open and close tags) and HTML comments, as spans. */
export function markupBlocks(text: string): TextSpan[] {
  const out: TextSpan[] = [];
  for (const m of text.matchAll(COMMENT))
    out.push({ start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
  const open: { name: string; start: number }[] = [];
  for (const m of text.matchAll(TAG)) {
    const name = (m[2] ?? "").toLowerCase();
    if (INLINE.has(name) || m[0].endsWith("/>")) continue;
    const at = m.index ?? 0;
    if (m[1] !== "/") {
      if (open.length >= MAX_OPEN) open.shift();
      open.push({ name, start: at });
      continue;
    }
    let i = open.length - 1;
    while (i >= 0 && open[i]!.name !== name) i--;
    if (i === -1) continue;
    out.push({ start: open[i]!.start, end: at + m[0].length });
    open.length = i;
  }
  return out;
}

/** The smallest `i` in [lo, hi] with `ok(i)` (assumed monotonic), or undefined. */
function firstTrue(lo: number, hi: number, ok: (i: number) => boolean): number | undefined {
  if (!ok(hi)) return undefined;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The match: the shortest unit run of text[from…] the detector flags, or undefined. */
function locate(text: string, b: readonly number[], from: number, test: FlagTest): TextSpan | undefined {
  const pts = [from, ...b.filter((x) => x > from)];
  const last = pts.length - 1;
  if (last < 1) return undefined;
  const e = firstTrue(1, last, (i) => test(text.slice(from, pts[i])));
  if (e === undefined) return undefined;
  const end = pts[e]!;
  // The last unit start from which [start, end) is still flagged: the first that is not, minus one.
  const cut = firstTrue(0, e, (i) => i === e || !test(text.slice(pts[i], end)));
  if (cut === undefined || cut === 0) return undefined;
  const start = pts[cut - 1]!;
  return test(text.slice(start, end)) ? { start, end } : undefined;
}

/** The match extended to its enclosing block (see the header, step 2). */
function enclose(text: string, match: TextSpan, blocks: readonly TextSpan[]): TextSpan {
  const holding = blocks
    .filter((r) => r.start <= match.start && r.end >= match.end)
    .sort((x, y) => x.end - x.start - (y.end - y.start))[0];
  let span: TextSpan;
  if (holding !== undefined) span = { ...holding };
  else {
    PARAGRAPH_END.lastIndex = Math.max(match.start, match.end - 1);
    const p = PARAGRAPH_END.exec(text);
    span = { start: match.start, end: p === null ? text.length : p.index };
  }
  // An element the span cuts into (overlaps without holding it or lying in it) is taken whole.
  for (let changed = true; changed; ) {
    changed = false;
    for (const r of blocks) {
      const overlaps = r.start < span.end && r.end > span.start;
      const holds = r.start <= span.start && r.end >= span.end;
      const inside = span.start <= r.start && span.end >= r.end;
      if (overlaps && !holds && !inside) {
        span = { start: Math.min(span.start, r.start), end: Math.max(span.end, r.end) };
        changed = true;
      }
    }
  }
  return span;
}

/**
 * The spans of `text` that hold instructions addressed to the agent (empty when the detector
 * flags none), each extended to its enclosing block; offsets into `text` itself.
 */
export function instructionSpans(text: string, test: FlagTest = defaultTest): TextSpan[] {
  if (!test(text)) return [];
  const whole = [{ start: 0, end: text.length }];
  if (text.length > MAX_TEXT) return whole;
  const b = boundaries(text);
  const blocks = markupBlocks(text);
  const spans: TextSpan[] = [];
  let from = 0;
  while (from < text.length && test(text.slice(from))) {
    if (spans.length >= MAX_SPANS) return whole;
    const match = locate(text, b, from, test);
    if (match === undefined) return whole;
    const span = enclose(text, match, blocks);
    spans.push(span);
    if (span.end <= from) return whole;
    from = span.end;
  }
  return spans;
}
