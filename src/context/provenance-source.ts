// Where a target value came from, positively (flow control only, src/gate/flow.ts): value
// provenance finds values copied from output; this finds targets with no source the run can
// name. A target the model wrote that is neither in the user's request, nor a record a tool
// returned, nor in a document the user designated was made up from the model's context —
// which holds every tool output the run read. Judged leaves:
//   - an address (one URL, host, e-mail address, IBAN or run of 8+ digits), always: an
//     attacker who spells it out of the matchers' reach ("mallory at evil-mail dot com", an
//     account "that starts with US13 and continues with …") leaves a value found nowhere;
//   - a name (a street, a channel, a user; not a number, at least 3 letters or digits) that
//     some output's text spells out: too short for the substring matcher, it was dictated by
//     free text unless a source below holds it. A name no output holds was not dictated.
// Sourced, per leaf:
//   - the user's request holds it: whole words for a short value (an event id `1` is not in
//     "May 1st"), anywhere for a distinctive one (`minToken`+ chars, other spacing allowed);
//   - it is the whole of a field of a structured output (a record the tool returned);
//   - a designated output vouches for it, or holds it outside its injected blocks (the user
//     delegated to that document: "update my address as the notice says").
// Dates are left to the date rule (provenance-dates.ts).
import { isDateValue } from "./provenance-dates.js";
import { compact, extractTokens, type Leaf, normalize, type TokenKind, TRIM } from "./provenance-text.js";
import type { Output } from "./provenance-types.js";

const NOT_ALNUM = /[^\p{L}\p{N}]+/gu;

/** Token kinds that address someone or something: a target of one of them is judged. */
const ADDRESS: ReadonlySet<TokenKind> = new Set(["url", "email", "host", "iban", "digits"]);

/** The leaf is one address as a whole (up to surrounding punctuation). */
function isAddress(text: string, minToken: number): boolean {
  const whole = normalize(text).trim().replace(TRIM, "");
  return extractTokens(text, minToken).some((t) => ADDRESS.has(t.kind) && compact(t.text) === compact(whole));
}

/** The words of a normalized text, space-separated and space-padded (for whole-word search). */
export function wordsOf(normalized: string): string {
  const w = normalized.split(NOT_ALNUM).filter((x) => x.length > 0);
  return ` ${w.join(" ")} `;
}

/** The request as matched: its compacted text and its words (`wordsOf`). */
export interface TrustedText {
  compact: string;
  words: string;
}

/**
 * The user's request holds the leaf: a value of `minToken`+ letters and digits anywhere in it
 * (other spacing allowed), a shorter one only as whole words.
 */
export function inRequest(text: string, trusted: TrustedText, minToken: number): boolean {
  const norm = normalize(text);
  const c = compact(norm);
  if (c.length === 0) return false;
  if (c.length >= minToken) return trusted.compact.includes(c);
  const words = wordsOf(norm);
  return words.trim().length > 0 && trusted.words.includes(words);
}

/** Some output holds the leaf as a record, vouches for it, or a designated output holds it whole. */
function inOutputs(leaf: Leaf, outputs: readonly Output[]): boolean {
  const norm = normalize(leaf.text);
  const c = compact(norm);
  const token = norm.trim().replace(TRIM, "");
  return outputs.some(
    (o) =>
      o.fields.has(c) ||
      o.endorsed.has(token) ||
      (o.designated &&
        o.text !== undefined &&
        c.length > 0 &&
        o.text.includes(c) &&
        (o.injected === undefined || !o.injected.includes(c))),
  );
}

/**
 * Whether every judged leaf of a target (an address; a name an output spells out) has a
 * source (see the head of this file). Dates and numbers are not judged here.
 */
export function sourced(
  leaves: readonly Leaf[],
  outputs: readonly Output[],
  trusted: TrustedText,
  minToken: number,
): boolean {
  return leaves.every((leaf) => {
    if (isDateValue(leaf.text)) return true;
    if (!isAddress(leaf.text, minToken) && !spelledOut(leaf.text, outputs)) return true;
    return inRequest(leaf.text, trusted, minToken) || inOutputs(leaf, outputs);
  });
}

/** A number alone (an amount, a record's id): judged by the record it names, not here. */
const NUMBER = /^\s*-?\d+(?:[.,]\d+)?\s*$/;
/** The shortest name (letters and digits) an output's text is searched for. */
const MIN_NAME = 3;

/**
 * A name (not an address, not a number) that some output's text spells out: a street, a
 * channel, a user an output's free text dictated. An output whose text was not kept counts
 * as spelling it (fail closed). A name no output holds was not dictated by one.
 */
function spelledOut(text: string, outputs: readonly Output[]): boolean {
  if (NUMBER.test(text)) return false;
  const c = compact(normalize(text));
  if (c.length < MIN_NAME) return false;
  return outputs.some((o) => o.text === undefined || o.partial === true || o.text.includes(c));
}

/** A number in prose: digits with optional thousands commas and decimals (`2,200.00`). */
const PROSE_NUMBER =
  /(?<![\p{L}\p{N}.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\p{L}\p{N}])|(?<![\p{L}\p{N}.,])\d+(?:\.\d+)?(?![\p{L}\p{N}])/gu;

/** Dates and times in prose: their digits are not amounts. */
const DATE_LIKE = /\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?/g;
/**
 * The fewest significant digits a number needs to carry provenance: 1, 4 or 50 occur in
 * any text (a count, a day, a list's position), as a name of 1–2 letters would.
 */
const MIN_SIGNIFICANT = 3;

/** A number as compared: `2,200.00`, `2200.0` and `2200` are one value. */
export function canonicalNumber(n: number | string): string | undefined {
  const v = typeof n === "number" ? n : Number(n.replace(/,/g, ""));
  return Number.isFinite(v) ? String(v) : undefined;
}

/**
 * The numbers written out in the prose of these texts: every text but a number alone (a
 * record's amount field is a record, not prose); digits inside a word or an account
 * (`US13…`, `3GS`) are not numbers.
 */
export function proseNumbers(texts: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    // (as unknown: isDateValue is a type guard, and a string that is no date is still a string)
    if (NUMBER.test(text) || isDateValue(text as unknown)) continue;
    for (const m of text.normalize("NFKC").replace(DATE_LIKE, " ").matchAll(PROSE_NUMBER)) {
      const c = canonicalNumber(m[0]);
      if (c !== undefined) out.add(c);
    }
  }
  return out;
}

/**
 * A number some output's prose writes out, which neither the request nor a designated output
 * holds (outside its injected blocks, when located: `ownNumbers`): the output chose it. The
 * merged record and an output indexed in part count as writing it (fail closed).
 */
export function dictatedNumber(
  value: number,
  outputs: readonly Output[],
  trusted: ReadonlySet<string>,
): boolean {
  const c = canonicalNumber(value);
  if (c === undefined || trusted.has(c)) return false;
  if (c.replace(/\D/g, "").replace(/^0+/, "").length < MIN_SIGNIFICANT) return false;
  const sourcedBy = (o: Output) => o.designated && (o.ownNumbers ?? o.numbers).has(c);
  if (outputs.some(sourcedBy)) return false;
  return outputs.some((o) => o.merged === true || o.partial === true || o.numbers.has(c));
}
