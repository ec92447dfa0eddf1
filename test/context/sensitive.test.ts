// Secret-class values recognised by structure (src/context/sensitive.ts): payment card numbers.
import { describe, expect, it } from "vitest";
import { cardArguments, luhnValid, paymentCards } from "../../src/context/index.js";

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
