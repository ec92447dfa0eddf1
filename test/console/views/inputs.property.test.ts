// Property: whatever a browser sends as a page's path parameters and query (any keys, any
// Unicode, markup, URLs), every audit page answers with inert, bounded markup — a coded
// message for what it refuses — and never throws a non-coded error.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VIEW_ACTIONS, VIEW_PAGES } from "../../../src/console/views/index.js";
import { type Deployment, deployment, expectInert, HOSTILE_RUN, hostileRun, IMG, JS_URL } from "./fixture.js";

let d: Deployment;
beforeAll(async () => {
  d = await deployment();
  await hostileRun(d.rt, HOSTILE_RUN);
});
afterAll(async () => {
  await d.rt.close();
});

const hostile = fc.oneof(
  fc.string({ maxLength: 64, unit: "grapheme" }),
  fc.constantFrom(
    IMG,
    JS_URL,
    HOSTILE_RUN,
    "\u202E",
    "a\u200Bb",
    "<script>x</script>",
    "1",
    "2",
    "",
    "warden.gate.decision",
  ),
);
const keys = fc.constantFrom("page", "type", "run", "since", "until", "fromSeq", "toSeq", "id", "seq", "x");
const record = fc.dictionary(keys, hostile, { maxKeys: 4 });

describe("audit pages under arbitrary input", () => {
  it("every page renders any query and path parameters as inert, bounded markup", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...VIEW_PAGES), record, record, async (page, params, query) => {
        const out = (await page.render(d.ctx, { params, query })).value;
        expectInert(out);
        expect(out.length).toBeLessThan(300_000);
      }),
      { numRuns: 60 },
    );
  });

  it("the verify, export and what-if actions answer any form with a page or a download, never a throw", async () => {
    const forms = fc.dictionary(
      fc.constantFrom("csrf", "fromSeq", "toSeq", "format", "run", "since", "until", "policy", "x"),
      hostile,
      {
        maxKeys: 4,
      },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...VIEW_ACTIONS), forms, async (action, body) => {
        const r = await action.handle(d.ctx, body);
        if (r.kind === "page") expectInert(r.html.value);
        else
          expect(r.body.split("\n").every((l) => l === "" || typeof JSON.parse(l) === "object")).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});
