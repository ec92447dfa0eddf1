// The payload of an entry record is the entry's canonical JSON (docs/journal.md §8): the writer
// assembles it from the body's text and the entry's members without walking the entry again,
// writing plain members between quotes as they are. It must equal canonicalJson(entry) for any
// entry, including ids holding quotes or backslashes (a run id may).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contracts/index.js";
import { entryJson, entryLine, type JournalEntry } from "../../src/journal/index.js";

const printable = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 40,
});
const member = fc.oneof(printable, fc.string({ unit: "binary", maxLength: 20 }));
const hex = (n: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: n, maxLength: n });

const entry = fc.record({
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  time: fc.oneof(fc.constant("2026-12-05T23:28:15.837Z"), member),
  type: fc.oneof(fc.constant("warden.gate.decision"), member),
  run_id: fc.oneof(fc.constant(null), printable, member),
  trace_id: fc.oneof(fc.constant(null), hex(32), member),
  body: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  prev_hash: fc.oneof(
    hex(64).map((h) => `sha256:${h}`),
    member,
  ),
  hash: fc.oneof(
    hex(64).map((h) => `sha256:${h}`),
    member,
  ),
  key_id: fc.oneof(printable, member),
  signature: fc.oneof(printable, member),
});

describe("entry record payload (entryLine)", () => {
  it("equals the entry's canonical JSON, plain members or not (property)", () => {
    fc.assert(
      fc.property(entry, (raw) => {
        const e = raw as unknown as JournalEntry;
        let bodyJson: string;
        try {
          bodyJson = canonicalJson(e.body);
          canonicalJson(e);
        } catch {
          return; // not canonical JSON at all (a lone surrogate): no entry has it
        }
        expect(entryLine({ entry: e, bodyJson })).toBe(entryJson(e));
      }),
      { numRuns: 2000 },
    );
  });

  it("escapes a run id holding a quote or a backslash", () => {
    const e = {
      seq: 7,
      time: "2026-12-05T23:28:15.837Z",
      type: "warden.gate.decision",
      run_id: 'run-"x"\\y',
      trace_id: null,
      body: { a: 1 },
      prev_hash: `sha256:${"0".repeat(64)}`,
      hash: `sha256:${"1".repeat(64)}`,
      key_id: "k".repeat(43),
      signature: "s".repeat(86),
    } as JournalEntry;
    const line = entryLine({ entry: e, bodyJson: canonicalJson(e.body) });
    expect(line).toBe(entryJson(e));
    expect(JSON.parse(line).run_id).toBe('run-"x"\\y');
  });
});
