// Secret-class values recognised by structure (src/context/sensitive.ts): payment card numbers.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cardArguments, luhnValid, paymentCards } from "../../src/context/index.js";
import { normaliseForScan } from "../../src/context/normalise.js";
import { collectLeaves } from "../../src/context/provenance-text.js";
import { cannotHoldCard } from "../../src/context/sensitive.js";

describe("payment card numbers", () => {
  it("finds Luhn-valid 13–19 digit numbers, grouped by spaces or dashes", () => {
    expect(luhnValid("4237425274562574")).toBe(true);
    expect(paymentCards("card 4237-4252-7456-2574, exp 12/27")).toEqual(["4237425274562574"]);
    expect(paymentCards("Visa 4111 1111 1111 1111.")).toEqual(["4111111111111111"]);
    expect(paymentCards("amex 378282246310005")).toEqual(["378282246310005"]);
  });

  it("ignores what is no card: a failed check, an issuer digit 0/1/7–9, a longer run, repeated digits", () => {
    expect(paymentCards("ref 4237425274562575")).toEqual([]);
    expect(paymentCards("ts 1714560000000003")).toEqual([]);
    expect(paymentCards("IBAN US133000000121212121212")).toEqual([]);
    expect(paymentCards("DE89 3704 0044 0532 0130 00")).toEqual([]);
    expect(paymentCards("0000000000000000 2222222222222222")).toEqual([]);
    expect(paymentCards("call 0800 123 456 or +44 20 7946 0000")).toEqual([]);
  });

  it("names the arguments holding a card the request does not", () => {
    const params = { to: ["a@example.com"], body: "card ４２３７ ４２５２ ７４５６ ２５７４", n: 4 };
    expect(cardArguments(params, () => false)).toEqual(["body"]);
    expect(cardArguments(params, (d) => d === "4237425274562574")).toEqual([]);
    expect(cardArguments({ body: "&#52;237 4252\u200b 7456 2574" }, () => false)).toEqual(["body"]);
  });
});

// The leaf prefilter (cannotHoldCard) skips normalising a leaf that cannot hold a card: it
// must never skip one whose normalised text holds one (a card hidden by markup, entities,
// escapes or look-alike digits is still found).
describe("payment card prefilter: a card hidden in an argument is never skipped", () => {
  const reference = (params: Record<string, unknown>, inRequest: (d: string) => boolean) =>
    Object.entries(params)
      .filter(([, v]) =>
        collectLeaves(v, 100_000, false)
          .leaves.flatMap((l) => paymentCards(normaliseForScan(l.text, 100_000)))
          .some((c) => !inRequest(c)),
      )
      .map(([n]) => n);
  // Digits, separators, markup and escapes: the characters normalisation moves or removes.
  const pieces = fc.constantFrom(
    ..."0123456789".split(""),
    " ",
    "-",
    "*",
    "_",
    "~",
    "`",
    "\\n",
    '\\"',
    "<b>",
    "</b>",
    "<!--",
    "-->",
    "<system>",
    "&#52;",
    "&amp;",
    "&sup2;",
    "&frac34;",
    "&#x2074;",
    "４",
    "\u200b",
    "\udb40\udc34",
    "a",
    "Z",
    ".",
    "/",
    "4111 1111 1111 1111",
    "4237-4252-7456-2574",
  );
  const text = fc.oneof(
    fc.array(pieces, { maxLength: 40 }).map((p) => p.join("")),
    fc.string({ maxLength: 60 }),
    fc.string({ unit: "binary", maxLength: 40 }),
  );

  it("skips only texts whose normalised form holds no card (property)", () => {
    fc.assert(
      fc.property(text, (s) => {
        if (cannotHoldCard(s)) expect(paymentCards(normaliseForScan(s))).toEqual([]);
      }),
      { numRuns: 3000 },
    );
  });

  it("names the same arguments as normalising every leaf (property)", () => {
    const value = fc.oneof(
      text,
      fc.array(text, { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 4 }), text),
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 4 }),
        fc.boolean(),
        (params, known) => {
          const inRequest = (d: string) => known && d.startsWith("4");
          expect(cardArguments(params, inRequest)).toEqual(reference(params, inRequest));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("keeps finding cards hidden by markup, escapes and emphasis in ASCII text", () => {
    for (const body of [
      "4111*1111*1111*1111",
      "<b>4111</b> 1111 1111 1111",
      "4111\\n1111 1111 1111",
      "4111 1111 <!--x--> 1111 1111",
    ]) {
      expect(cannotHoldCard(body)).toBe(false);
      expect(cardArguments({ body }, () => false)).toEqual(["body"]);
    }
    // A text with an entity (or any non-ASCII character) is always normalised and scanned.
    const entities = "4&sup2;37 4&sup2;5&sup2; 7456 &sup2;574";
    expect(cannotHoldCard(entities)).toBe(false);
    expect(cardArguments({ body: entities }, () => false)).toEqual(["body"]);
    expect(cannotHoldCard("https://api.example.com/v1/items?page=123456")).toBe(true);
  });
});
