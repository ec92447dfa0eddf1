// The journal pages and actions: the filter and entry detail render hostile values as
// marked text; verify names the first tampered row by its seq after the SQLite file is
// edited behind the runtime's back; exports are the real GATE / OCSF records, and a
// journal that does not verify exports nothing.
import { describe, expect, it } from "vitest";
import { MAX_SHOWN_CHARS } from "../../../src/console/html.js";
import type { ConsoleActionResult } from "../../../src/console/page.js";
import { PAGE_ROWS } from "../../../src/console/views/common.js";
import { VIEW_ACTIONS, VIEW_PAGES } from "../../../src/console/views/index.js";
import { GATE_DECISION, parseGateRecord } from "../../../src/contracts/index.js";
import { entryJson } from "../../../src/journal/index.js";
import { gateKindOf } from "../../evidence/kinds.js";
import { tamperSegmentEntry } from "../../helpers/tamper-segments.js";
import { call, type Deployment, deployments, expectInert, HOSTILE_RUN, hostileRun, IMG } from "./fixture.js";

const fresh = deployments();
const render = async (d: Deployment, path: string, params = {}, query = {}) => {
  const p = VIEW_PAGES.find((x) => x.path === path);
  if (p === undefined) throw new Error(`no page ${path}`);
  return (await p.render(d.ctx, { params, query })).value;
};
const act = async (
  d: Deployment,
  path: string,
  body: Record<string, string>,
): Promise<ConsoleActionResult> => {
  const a = VIEW_ACTIONS.find((x) => x.path === path);
  if (a === undefined) throw new Error(`no action ${path}`);
  return a.handle(d.ctx, { csrf: d.ctx.csrfToken, ...body });
};
const pageOf = (r: ConsoleActionResult): string => {
  if (r.kind !== "page") throw new Error(`expected a page, got a ${r.kind}`);
  return r.html.value;
};

/** Edits the journal file through a second connection, as an attacker with file access would. */
function tamper(d: Deployment, seq: number): void {
  const edited = tamperSegmentEntry(
    d.db,
    "fetch",
    "fetcH",
    (t) => (JSON.parse(t) as { seq: number }).seq === seq,
  );
  expect(edited).toBe(seq);
}

async function firstDecisionSeq(d: Deployment): Promise<number> {
  const [e] = await d.rt.store.query({ type: GATE_DECISION, limit: 1 });
  return e?.seq ?? -1;
}

describe("journal list and entry", () => {
  it("filtering by a hostile run id shows its entries as marked text with encoded links", async () => {
    const d = await fresh();
    await hostileRun(d.rt, HOSTILE_RUN);
    await hostileRun(d.rt, "other-run");
    const out = await render(d, "/journal", {}, { run: HOSTILE_RUN, type: "", page: "" });
    expectInert(out);
    expect(out.match(/<tr><td><a href="\/console\/journal\/\d+">/g)?.length).toBe(4);
    expect(out).not.toContain("other-run");
    // The filter form echoes the run id escaped inside its value attribute.
    expect(out).toContain('value="&lt;img/src=x/onerror=alert(1)&gt;"');
  });

  it("a hostile event type or time in the filter is a coded message", async () => {
    const d = await fresh();
    const bad = await render(d, "/journal", {}, { type: "<script>alert(1)</script>" });
    expect(bad).toContain("ERR_CONSOLE_VIEW_INPUT");
    expectInert(bad);
    expect(await render(d, "/journal", {}, { since: "javascript:alert(1)" })).toContain(
      "ERR_CONSOLE_VIEW_INPUT",
    );
    expect(await render(d, "/journal", {}, { extra: "1" })).toContain("ERR_CONSOLE_VIEW_INPUT");
  });

  it("pages are bounded: a seq range and type filter returns at most PAGE_ROWS rows with a next link", async () => {
    const d = await fresh();
    for (let i = 0; i < PAGE_ROWS + 5; i++)
      await call(d.rt, { runId: "run-many", toolClass: "mail", action: "send", parameters: { i } });
    const total = await d.rt.store.count();
    const out = await render(d, "/journal", {}, { type: GATE_DECISION, fromSeq: "1", toSeq: String(total) });
    expect(out.match(/<tr><td><a href="\/console\/journal\/\d+">/g)?.length).toBe(PAGE_ROWS);
    expect(out).toContain('rel="next"');
    const second = await render(d, "/journal", {}, { type: GATE_DECISION, page: "2" });
    expect(second.match(/<tr><td><a href="\/console\/journal\/\d+">/g)?.length).toBe(5);
  });

  it("an entry's canonical JSON is shown as agent text: escaped, marked, cut with its full length", async () => {
    const d = await fresh();
    await hostileRun(d.rt, HOSTILE_RUN);
    // Under the Gate's 4 KiB journal limit, so the entry carries it whole.
    await call(d.rt, {
      runId: "run-long",
      toolClass: "web",
      action: "fetch",
      parameters: { note: IMG, pad: "B".repeat(3000) },
    });
    const [e] = await d.rt.store.query({ type: GATE_DECISION, run_id: "run-long", limit: 1 });
    const out = await render(d, "/journal/:seq", { seq: String(e?.seq) });
    expectInert(out);
    expect(out).toContain("&quot;note&quot;:&quot;&lt;img src=x onerror=alert(1)&gt;&quot;");
    const canonical = entryJson(e!);
    expect(canonical.length).toBeGreaterThan(MAX_SHOWN_CHARS);
    expect(out).toContain(`cut: ${canonical.length.toLocaleString("en")} characters in all`);
  });

  it("an entry that does not exist is ERR_CONSOLE_VIEW_NOT_FOUND", async () => {
    const d = await fresh();
    expect(await render(d, "/journal/:seq", { seq: "999999" })).toContain("ERR_CONSOLE_VIEW_NOT_FOUND");
    expect(await render(d, "/journal/:seq", { seq: "1;drop" })).toContain("ERR_CONSOLE_VIEW_INPUT");
  });
});

describe("verify", () => {
  it("an intact chain verifies whole and by range", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-v");
    expect(pageOf(await act(d, "/journal/verify", {}))).toContain('class="verify-ok"');
    const r = await act(d, "/journal/verify", { fromSeq: "2", toSeq: "3" });
    expect(pageOf(r)).toContain("OK: seq 2..3 verifies");
    expect(r.audit).toMatchObject({ ok: true, range: "seq 2..3" });
  });

  it("a row edited in the SQLite file is found: the page names its seq and the reason", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-tamper");
    const seq = await firstDecisionSeq(d);
    tamper(d, seq);
    const r = await act(d, "/journal/verify", {});
    const out = pageOf(r);
    expect(out).toContain(`seq <strong class="bad-seq">${seq}</strong>`);
    expect(out).toContain("<code>hash_mismatch</code>");
    expect(r.audit).toMatchObject({ ok: false, failedSeq: seq, reason: "hash_mismatch" });
    // A range that ends before the edited row still verifies; one that covers it does not.
    expect(pageOf(await act(d, "/journal/verify", { toSeq: String(seq - 1) }))).toContain(
      'class="verify-ok"',
    );
    expect(pageOf(await act(d, "/journal/verify", { fromSeq: String(seq), toSeq: String(seq) }))).toContain(
      'class="bad-seq"',
    );
  });

  it("a reversed or non-numeric range is a coded message", async () => {
    const d = await fresh();
    expect(pageOf(await act(d, "/journal/verify", { fromSeq: "5", toSeq: "2" }))).toContain(
      "ERR_CONSOLE_VIEW_INPUT",
    );
    expect(pageOf(await act(d, "/journal/verify", { fromSeq: "<img src=x>" }))).toContain(
      "ERR_CONSOLE_VIEW_INPUT",
    );
  });
});

describe("export", () => {
  it("GATE export is a download of canonical GATE records, one per line, for the run", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-x");
    const r = await act(d, "/journal/export", { format: "gate", run: "run-x" });
    if (r.kind !== "download") throw new Error(pageOf(r));
    const records = r.body
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const x of records) expect(parseGateRecord(gateKindOf(x), x).ok, gateKindOf(x)).toBe(true);
    expect(records.filter((x) => gateKindOf(x) === "policy_decision")).toHaveLength(3);
    expect(records.filter((x) => gateKindOf(x) === "replay_trace")).toHaveLength(1);
    expect(r.audit).toMatchObject({ ok: true, records: records.length, format: "gate" });
  });

  it("OCSF export is a download of OCSF events, one JSON object per line", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-o");
    const r = await act(d, "/journal/export", { format: "ocsf" });
    if (r.kind !== "download") throw new Error(pageOf(r));
    const events = r.body
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { class_uid: number; metadata: { version: string } });
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.every((e) => typeof e.class_uid === "number" && e.metadata.version === "1.3.0")).toBe(true);
  });

  it("a tampered journal exports nothing: the page says ERR_EVIDENCE_JOURNAL_INVALID", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-bad");
    tamper(d, await firstDecisionSeq(d));
    for (const format of ["gate", "ocsf"]) {
      const r = await act(d, "/journal/export", { format });
      expect(r.kind).toBe("page");
      expect(pageOf(r)).toContain("ERR_EVIDENCE_JOURNAL_INVALID");
      expect(r.audit).toMatchObject({ ok: false, code: "ERR_EVIDENCE_JOURNAL_INVALID" });
    }
  });

  it("an unknown format or a hostile run id is refused before anything is read", async () => {
    const d = await fresh();
    const r = await act(d, "/journal/export", { format: "<script>", run: "a b" });
    expect(pageOf(r)).toContain("ERR_CONSOLE_VIEW_INPUT");
    expectInert(pageOf(r));
  });
});
