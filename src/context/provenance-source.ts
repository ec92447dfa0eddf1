// Where a target value came from, positively (flow control only, src/gate/flow.ts): value
// provenance finds values copied from output; this finds values that came from nowhere the
// run can name. A target the model wrote that is neither in the user's request, nor a record
// a tool returned, nor vouched for by a document the user designated was made up from the
// model's context — which holds every tool output the run read. An attacker who spells an
// address out of reach of the matchers ("mallory at evil-mail dot com", an account "that
// starts with US13 and continues with …", a street too short to fingerprint) gets exactly such
// a value. Only addresses are judged — a leaf that is one URL, host, e-mail address, IBAN or
// run of 8+ digits (an account, a phone number): what reaches someone or is paid. A short
// name or an id the model wrote is left to the other rules (a record, a value named by a
// flagged output). Sourced, per address leaf:
//   - the user's request holds it: whole words for a short value (an event id `1` is not in
//     "May 1st"; `eve` is not in "every"), anywhere for a distinctive one (`minToken`+ chars,
//     written with other spacing or punctuation);
//   - it is the whole of a field of a structured output (a record the tool returned), unless
//     that record carried the flagged instructions (provenance-record.ts);
//   - a designated output vouches for it, or holds it whole outside its injected blocks (the
//     user delegated to that document: "update my address as the notice says").
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
 * Whether every address leaf of a target has a source (see the head of this file). A leaf
 * that is not one address (a name, an id, a date) is not judged here.
 */
export function sourced(
  leaves: readonly Leaf[],
  outputs: readonly Output[],
  trusted: TrustedText,
  minToken: number,
): boolean {
  return leaves.every((leaf) => {
    if (isDateValue(leaf.text) || !isAddress(leaf.text, minToken)) return true;
    return inRequest(leaf.text, trusted, minToken) || inOutputs(leaf, outputs);
  });
}
