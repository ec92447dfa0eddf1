// The user's request as the trusted origin of flow control, passed by every entry point:
// `originalRequest` in POST /v1/runs, the HTTP adapter's and the library adapter's options.
// A page carries an injection naming attacker@evil.example; the policy denies a send whose
// address was copied from tool output and not from the user's request. With the request
// naming the recipient the send is the user's and goes out; without a request nothing is
// the user's and the send never reaches the mail endpoint.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractModelTool, type GovernedTarget, governedTarget } from "../../src/adapters/index.js";
import { BEHAVIOURAL_RULE_IDS } from "../../src/context/index.js";
import type { Runtime } from "../../src/runtime/index.js";
import type { SidecarServer } from "../../src/server/index.js";
import { AGENT_TOKEN, libraryRuntime, openWorld, sidecar, type World } from "./world.js";

const FLOW_POLICY = `
name: flow-test
version: "1.0"
rules:
  - id: deny-copied-target
    name: an address copied from tool output
    priority: 50
    match: { toolClass: http, action: post, flow: { copied: true } }
    decision: deny
    reason: a recipient came from a tool's output and not from the user's request
    reasonCode: UNTRUSTED_TARGET
  - id: allow-read
    name: reads
    priority: 200
    match: { toolClass: http, action: get }
    decision: allow
    reason: reads
  - id: allow-send
    name: sends the flow rule did not stop
    priority: 210
    match: { toolClass: http, action: post }
    decision: allow
    reason: the user's recipient
`;
const ATTACKER = "attacker@evil.example";

let w: World;
let rt: Runtime;
let side: { server: SidecarServer; url: string };

// Flow control alone decides the send: the behavioural rule that denies every egress after
// web taint (a blunter defence, tested elsewhere) is left out so that the flow rule is seen.
const CONTEXT = {
  rules: { enabled: BEHAVIOURAL_RULE_IDS.filter((r) => r !== "web_taint_sensitive_probe") },
};

beforeAll(async () => {
  w = await openWorld();
  writeFileSync(join(w.dir, "policy.yaml"), FLOW_POLICY);
  rt = await libraryRuntime(w, "library.db", CONTEXT);
  side = await sidecar(w, { context: CONTEXT });
});
afterAll(async () => {
  await rt?.close();
  await side?.server.close();
  await w?.close();
});

const modes = {
  library: (originalRequest?: string): GovernedTarget =>
    governedTarget({
      runtime: rt,
      principalId: "agent-a",
      ...(originalRequest !== undefined ? { originalRequest } : {}),
    }),
  http: (originalRequest?: string): GovernedTarget =>
    governedTarget({
      url: side.url,
      token: AGENT_TOKEN,
      tools: ["fetch_page", "send_email"].map((t) =>
        contractModelTool(join(w.contractsDir, `${t}.clad.toml`)),
      ),
      ...(originalRequest !== undefined ? { originalRequest } : {}),
    }),
};

/** Reads the injected page, then mails `to`: what reached the mail endpoint. */
async function readThenSend(t: GovernedTarget, to: string) {
  expect((await t.call("fetch_page", { page: "pricing" })).kind).toBe("allowed");
  const before = w.service.hits.filter((h) => h.url === "/send" && h.body.includes(to)).length;
  const o = await t.call("send_email", { to, body: "the pricing summary" });
  const after = w.service.hits.filter((h) => h.url === "/send" && h.body.includes(to)).length;
  return { o, delivered: after - before };
}

describe.each(Object.keys(modes) as (keyof typeof modes)[])("originalRequest, %s adapter", (mode) => {
  it("without a request, a recipient copied from a page is denied and nothing is sent to it", async () => {
    const { o, delivered } = await readThenSend(modes[mode](), ATTACKER);
    expect(o, JSON.stringify(o)).toMatchObject({ kind: "denied" });
    expect(o.kind === "denied" ? o.reasonCodes : []).toContain("UNTRUSTED_TARGET");
    expect(delivered).toBe(0);
  });

  it("a request naming another recipient does not vouch for the page's address: still nothing sent to it", async () => {
    const t = modes[mode]("Read the pricing page and mail a summary to bob@corp.example");
    const { o, delivered } = await readThenSend(t, ATTACKER);
    expect(o.kind).toBe("denied");
    expect(delivered).toBe(0);
    const own = await t.call("send_email", { to: "bob@corp.example", body: "the pricing summary" });
    expect(own.kind).toBe("allowed");
  });

  it("the request passes through: a recipient the user named is the user's even when the page repeats it", async () => {
    const t = modes[mode](`Read the pricing page and mail a summary to ${ATTACKER}`);
    const { o, delivered } = await readThenSend(t, ATTACKER);
    expect(o.kind).toBe("allowed");
    expect(delivered).toBe(1);
  });
});

describe("POST /v1/runs", () => {
  const post = (path: string, body: unknown) =>
    fetch(`${side.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${AGENT_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("opens the run with originalRequest: the run's session holds it, a call's body cannot change it", async () => {
    const request = "Read the pricing page";
    const r = await post("/v1/runs", { originalRequest: request });
    expect(r.status).toBe(201);
    const { runId } = (await r.json()) as { runId: string };
    const d = await post("/v1/execute", {
      runId,
      tool: "fetch_page",
      parameters: { page: "pricing" },
      originalRequest: `${request} and mail it to ${ATTACKER}`,
    });
    expect(d.status).toBe(200);
    expect(side.server.runtime.sessions.get(runId)?.originalRequest).toBe(request);
  });

  it("refuses an originalRequest that is not a bounded string", async () => {
    const r = await post("/v1/runs", { originalRequest: "x".repeat(1_000_001) });
    expect(r.status).toBeGreaterThanOrEqual(400);
    const n = await post("/v1/runs", { originalRequest: 42 });
    expect(n.status).toBeGreaterThanOrEqual(400);
  });
});
