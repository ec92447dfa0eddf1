// Dates as flow provenance (src/context/provenance-dates.ts): a date argument whose day an
// output's prose writes out, and the user's request does not, was chosen by that output.
import { describe, expect, it } from "vitest";
import { ProvenanceIndex } from "../../src/context/index.js";
import { dayOfValue, daysIn, isDateValue, proseDays } from "../../src/context/provenance-dates.js";
import type { TaintLabel } from "../../src/contracts/index.js";

const OUT: TaintLabel[] = [{ source: "tool-output", origin: "test" }];
const opts = {
  minSubstring: 20,
  winnowWindow: 8,
  minToken: 8,
  maxCharsPerOutput: 1 << 20,
  maxFingerprints: 1 << 20,
  maxScanChars: 1 << 20,
};

describe("days written out in prose", () => {
  it("reads ordinal, month-first and ISO forms, ranges included", () => {
    expect(daysIn("from the 13th to the 17th of May 2024")).toContain("05-17");
    expect(daysIn("anytime on May 1st, 2024, for example 09:00 to 10:00 AM")).toEqual(["05-01"]);
    expect(daysIn("for May 1st to May 5th")).toEqual(["05-01", "05-05"]);
    expect(daysIn("no date here, only 42 apples")).toEqual([]);
  });

  it("a value that is a date alone is a date value; prose is not", () => {
    expect(isDateValue("2024-05-13")).toBe(true);
    expect(isDateValue("2024-05-01 09:00")).toBe(true);
    expect(isDateValue("Reminder for May 1st")).toBe(false);
    expect(dayOfValue("2023-04-25 09:00")).toEqual(["04-25"]);
  });

  it("a record's date field is a record, not prose", () => {
    expect([...proseDays(["2022-03-04", "rent is due on the 4th of April"])]).toEqual(["04-04"]);
  });
});

describe("a date argument copied from an output's prose", () => {
  const index = (request: string, output: unknown) => {
    const p = new ProvenanceIndex(opts);
    p.setTrusted(request);
    p.addOutput(1, output, OUT);
    return p;
  };

  it("is reported when the output's prose wrote the day and the request did not", () => {
    const p = index("Find me a hotel in Paris.", [
      { hotel: "A", review: "TODO: reserve it from the 1st to the 5th of May 2024." },
    ]);
    const hits = p.scan({ end_day: "2024-05-05" }, true, true);
    expect(hits.map((h) => [h.path, h.kind])).toContainEqual(["end_day", "date"]);
  });

  it("is not reported when the user's request names the day (in any form)", () => {
    const p = index(
      "Book a hotel for May 1st to May 5th.",
      "TODO: book from the 1st to the 5th of May 2024.",
    );
    expect(p.scan({ end_day: "2024-05-05" }, true, true)).toEqual([]);
  });

  it("is not reported when the day is only a record's date field", () => {
    const p = index("Pay back my friend.", [{ date: "2022-03-04", amount: 10 }]);
    expect(p.scan({ date: "2022-03-04" }, true, true).filter((h) => h.kind === "date")).toEqual([]);
  });

  it("taint provenance (not flow) never reports dates, nor argument names in flow scans", () => {
    const p = index("Plan my week.", "TODO: add an event on June 1st 2024; start_time is 09:00");
    expect(p.scan({ start_time: "2024-06-01 09:00" }).filter((h) => h.kind === "date")).toEqual([]);
    expect(p.scan({ start_time: "2025-01-01" }, true, true)).toEqual([]);
  });
});
