// The runs pages as an attack surface: every string an agent controls (parameters, the run
// id it names, the policy reasons shown with them) arrives as visible, inert text.
import { describe, expect, it } from "vitest";
import { MAX_GRAPH_NODES } from "../../../src/console/views/common.js";
import { VIEW_PAGES } from "../../../src/console/views/index.js";
import {
  approvedPayment,
  call,
  type Deployment,
  deployments,
  expectInert,
  HOSTILE_RUN,
  hostileRun,
  IMG,
  JS_RUN,
  RTL,
} from "./fixture.js";

const page = (path: string) => {
  const p = VIEW_PAGES.find((x) => x.path === path);
  if (p === undefined) throw new Error(`no page ${path}`);
  return p;
};
const render = async (d: Deployment, path: string, params = {}, query = {}) =>
  (await page(path).render(d.ctx, { params, query })).value;

const fresh = deployments();

describe("runs list", () => {
  it("a run named <img/src=x/onerror=…> or javascript:… is listed as marked text with an encoded link", async () => {
    const d = await fresh();
    await hostileRun(d.rt, HOSTILE_RUN);
    await hostileRun(d.rt, JS_RUN);
    const out = await render(d, "/runs");
    expectInert(out);
    expect(out).toContain("&lt;img/src=x/onerror=alert(1)&gt;");
    expect(out).toContain(`href="/console/runs/${encodeURIComponent(HOSTILE_RUN)}"`);
    expect(out).toContain(`href="/console/runs/javascript%3Aalert(1)"`);
    // Counts: three decisions per run, one denial, one execution.
    expect(out).toMatch(/<td>3<\/td>\s*<td>1<\/td>\s*<td>1<\/td>\s*<td>0<\/td>/);
  });

  it("a run named .. links to itself, not to the page above (dot-segments encoded)", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "..");
    const out = await render(d, "/runs");
    expect(out).toContain('href="/console/runs/%2E%2E"');
    expect(out).not.toContain('href="/console/runs/.."');
  });

  it("an agent quarantined by denials shows as quarantined in the list", async () => {
    const d = await fresh({ denialThreshold: 2 });
    for (let i = 0; i < 2; i++)
      await call(d.rt, {
        runId: "run-q",
        toolClass: "mail",
        action: "send",
        parameters: { to: "a@b.example" },
      });
    const out = await render(d, "/runs");
    expect(out).toContain('class="quarantined"');
  });

  it("a page number that is not a number is a coded message, not a stack trace", async () => {
    const d = await fresh();
    const out = await render(d, "/runs", {}, { page: "<script>1</script>" });
    expectInert(out);
    expect(out).toContain("ERR_CONSOLE_VIEW_INPUT");
    expect(out).not.toMatch(/\bat .*\.ts:\d+/);
  });
});

describe("run page", () => {
  it("hostile parameters, reasons and run id render marked: img, javascript:, RTL, zero-width and look-alike domain", async () => {
    const d = await fresh();
    await hostileRun(d.rt, HOSTILE_RUN);
    const out = await render(d, "/runs/:id", { id: HOSTILE_RUN });
    expectInert(out);
    expect(out).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(out).toContain('title="invisible character U+202E"');
    expect(out).toContain('title="invisible character U+200B"');
    expect(out).toContain('title="confusable character U+043E"');
    // Policy reasons are shown as text too.
    expect(out).toContain("&lt;img src=x onerror=alert(2)&gt; denied");
    expect(out).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("a 1 MB parameter does not make a 1 MB page: it is elided and the page stays bounded", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-big");
    const out = await render(d, "/runs/:id", { id: "run-big" });
    expect(out.length).toBeLessThan(100_000);
    expect(out).toMatch(/parameters elided \(\d{7} bytes\)/);
  });

  it("the timeline lists decisions, the denial and the execution in journal order with their codes", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-t");
    const out = await render(d, "/runs/:id", { id: "run-t" });
    const kinds = [...out.matchAll(/<tr class="tl-([a-z]+)">/g)].map((m) => m[1]);
    expect(kinds.filter((k) => k !== "event")).toEqual(["decision", "execution", "denial", "decision"]);
    expect(out).toContain('<code><span class="agent-text">RULE:no-mail</span></code>');
  });

  it("a step-up approved with a hostile justification shows as an approval, signed, with the text marked", async () => {
    const d = await fresh();
    await approvedPayment(d, "run-pay", `ok ${IMG} ${RTL}`);
    const out = await render(d, "/runs/:id", { id: "run-pay" });
    expectInert(out);
    const kinds = [...out.matchAll(/<tr class="tl-([a-z]+)">/g)].map((m) => m[1]);
    expect(kinds.filter((k) => k !== "event")).toEqual(["decision", "approval", "approval"]);
    expect(out).toContain('<span class="decision decision-step_up">step_up</span>');
    expect(out).toContain(
      'signed <span class="agent-text">approve</span> by <span class="agent-text">alice</span>',
    );
    expect(out).toContain("ok &lt;img src=x onerror=alert(1)&gt;");
    const list = await render(d, "/runs");
    expect(list).toMatch(/<td>1<\/td>\s*<td>0<\/td>\s*<td>0<\/td>\s*<td>1<\/td>/);
  });

  it("the provenance graph ties the mailed value to the fetch output it came from", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-p");
    const out = await render(d, "/runs/:id", { id: "run-p" });
    const body = out.slice(out.indexOf('<li class="prov-param"><code><span class="agent-text">body</span>'));
    const item = body.slice(0, body.indexOf("</li></ul></li>"));
    expect(item).toMatch(
      /from <a href="\/console\/journal\/\d+">step 1<\/a> <span class="agent-text">web\.fetch<\/span> output/,
    );
    expect(item).toContain('<span class="prov-kind">url</span>');
    expect(out).toContain("taint: ");
  });

  it("a run the journal does not hold is ERR_CONSOLE_VIEW_NOT_FOUND, and a run id with a space is refused", async () => {
    const d = await fresh();
    expect(await render(d, "/runs/:id", { id: "nope" })).toContain("ERR_CONSOLE_VIEW_NOT_FOUND");
    const bad = await render(d, "/runs/:id", { id: `a ${"<script>"}` });
    expect(bad).toContain("ERR_CONSOLE_VIEW_INPUT");
    expectInert(bad);
  });

  it("without APAE the trust section says APAE off", async () => {
    const d = await fresh();
    await hostileRun(d.rt, "run-a");
    expect(await render(d, "/runs/:id", { id: "run-a" })).toContain("APAE off");
  });

  it("with APAE the trust section shows the agent's score and its history from the journal", async () => {
    const d = await fresh({ apae: { ectLevel: "L3" } });
    await hostileRun(d.rt, "run-apae");
    await d.rt.apae?.settled();
    const out = await render(d, "/runs/:id", { id: "run-apae" });
    expect(out).not.toContain("APAE off");
    const score = d.rt.apae?.viewOf("agent").score ?? -1;
    expect(out).toContain(`<dt>score</dt><dd>${score.toFixed(3)}`);
    expect(out).toMatch(/<td>task_success<\/td>/);
  });

  it("a run of more than MAX_GRAPH_NODES values has its graph cut and marked", async () => {
    const d = await fresh();
    const parameters = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`p${i}`, i]));
    for (let i = 0; i < 10; i++)
      await call(d.rt, { runId: "run-wide", toolClass: "web", action: "fetch", parameters });
    const out = await render(d, "/runs/:id", { id: "run-wide" });
    expect(out).toContain(`Graph cut at ${MAX_GRAPH_NODES} nodes`);
    expect(out.match(/class="prov-param"/g)?.length ?? 0).toBeLessThanOrEqual(MAX_GRAPH_NODES);
  });
});
