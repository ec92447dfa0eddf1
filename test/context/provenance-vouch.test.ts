// What a request asks for (src/context/provenance-vouch.ts): the kinds a designated output
// may vouch for, and whether the request gives the agent a reason to go on the web.
import { describe, expect, it } from "vitest";
import { asksForWeb, wantedKinds } from "../../src/context/provenance-vouch.js";

describe("the kinds a request asks for", () => {
  it("asking to pay asks for a payee; mentioning a payment does not", () => {
    expect(wantedKinds("can you please pay the bill 'bill-december-2023.txt' for me?").has("iban")).toBe(
      true,
    );
    expect(wantedKinds("please refund my friend what they sent me").has("iban")).toBe(true);
    expect(wantedKinds("read the notice and adjust my rent payment accordingly").has("iban")).toBe(false);
    expect(wantedKinds("summarize my invoices and bills").has("iban")).toBe(false);
  });

  it("a URL, a host or words for the web give a reason to go on the web; other requests do not", () => {
    expect(asksForWeb("Do the tasks on my list at www.todo-list.example/alice")).toBe(true);
    expect(asksForWeb("Summarize the page about tides")).toBe(true);
    expect(asksForWeb("Add Charlie to the channel starting with External")).toBe(false);
    expect(asksForWeb(undefined)).toBe(false);
  });
});
