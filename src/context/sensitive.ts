// Values of a secret class, recognised by their own structure rather than by the name of
// the field or tool that held them (flow control, src/gate/flow.ts): what may not leave a
// run unless the user's request itself holds the value.
//   payment card numbers  13 to 19 digits, optionally grouped by single spaces or dashes,
//                         starting with an issuer digit 2–6 (ISO/IEC 7812 major industry
//                         identifiers of card schemes) and passing the Luhn check (ISO/IEC
//                         7812-1 annex B), the rule PCI DSS scanners use. A longer digit run
//                         (an account number, an IBAN's digits) is not a card number.
// Personal identifiers without a checksum (passport or ID numbers) have no structure of
// their own: they are personal data only when a contract or annotation classifies the tool
// output that holds them (`personalData`, docs/agentdojo.md#classification).
import { normaliseForScan } from "./normalise.js";
import { collectLeaves } from "./provenance-text.js";

/** A run of 13–19 digits in groups joined by at most one space or dash, not inside a longer run. */
const CARD_RUN = /(?<![\d])(?<![\d][ -])[2-6](?:[ -]?\d){12,18}(?![ -]?\d)/g;
/** The longest text read per argument leaf. */
const MAX_LEAF = 100_000;

/** Whether a digit string passes the Luhn check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (d < 0 || d > 9) return false;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The payment card numbers a text holds, as digits (separators removed). */
export function paymentCards(text: string): string[] {
  const t = text.length > MAX_LEAF ? text.slice(0, MAX_LEAF) : text;
  const out: string[] = [];
  for (const m of t.matchAll(CARD_RUN)) {
    const digits = m[0].replace(/[ -]/g, "");
    // A single repeated digit passes Luhn for some lengths and is a placeholder, not a card.
    if (/^(\d)\1+$/.test(digits)) continue;
    if (luhnValid(digits)) out.push(digits);
  }
  return out;
}

/** The fewest digits a card number has: an issuer digit and 12 more (CARD_RUN). */
const CARD_MIN_DIGITS = 13;

/**
 * Whether `text` holds no payment card number however it is normalised, told without
 * normalising it: ASCII text without `&` has no entity, no tag character and nothing to
 * fold, so normalise.ts only removes, moves or collapses its characters (markup, emphasis,
 * escaped breaks, white space) and adds none but spaces, brackets and role names — never a
 * digit. With fewer digits than a card has, such a text cannot hold one. Equivalent to
 * `paymentCards(normaliseForScan(text)).length === 0` whenever it returns true (a property
 * test holds it to that); most argument leaves (names, URLs, ids) are such texts.
 */
export function cannotHoldCard(text: string): boolean {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 || c === 0x26) return false;
    if (c >= 0x30 && c <= 0x39 && ++digits >= CARD_MIN_DIGITS) return false;
  }
  return true;
}

/** The card numbers of one argument leaf, normalised as the screening normalises text. */
function leafCards(text: string): string[] {
  return cannotHoldCard(text) ? [] : paymentCards(normaliseForScan(text, MAX_LEAF));
}

/**
 * The arguments (top-level names) of `params` holding a payment card number that the user's
 * request does not (`inRequest`): a secret the run read somewhere and the user did not hand
 * over. Text is normalised as the screening normalises it first (normalise.ts: NFKC and
 * look-alike digits, HTML entities such as `&#52;`, markup, zero-widths between digits).
 */
export function cardArguments(
  params: Record<string, unknown>,
  inRequest: (digits: string) => boolean,
): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    const { leaves } = collectLeaves(value, MAX_LEAF, false);
    const cards = leaves.flatMap((l) => leafCards(l.text));
    if (cards.some((c) => !inRequest(c))) out.push(name);
  }
  return out;
}
