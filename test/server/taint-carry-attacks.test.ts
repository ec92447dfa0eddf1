// Issue 37 finding 1: taint escapes by opening a new run. An agent whose run read a web
// page holding a secret is denied sending it out of that run ("no egress with web
// taint"); it then opens a fresh run with POST /v1/runs (no parentRun) and sends the
// secret from there. With taint carried at the principal the fresh run starts tainted:
// the canary receives nothing. An operator's clean run is the one way out, journaled.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const SECRET = "SECRET-7f3a9c2e71b04d58";

const POLICY = `
name: taint-carry
version: "1.0"
rules:
  - id: no-tainted-egress
    name: no egress with web taint
    priority: 10
    match: { toolClass: http, action: post, taintSources: [web] }
    decision: deny
    reason: web-tainted egress
  - id: allow-get
    name: reads
    priority: 100
    match: { toolClass: http, action: get }
    decision: allow
    reason: reads
  - id: allow-post
    name: posting is fine otherwise
    priority: 110
    match: { toolClass: http, action: post }
    decision: allow
    reason: egress of untainted data
`;

/** The web page holding the secret, and the canary that must receive nothing. */
class Web {
  readonly canary: string[] = [];
  readonly #server: Server;
  port = 0;
  constructor() {
    this.#server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        if (req.method === "POST") this.canary.push(body);
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(req.method === "GET" ? { page: `the key is ${SECRET}` } : { ok: true }));
      });
    });
  }
  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, "127.0.0.1", r));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }
  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((r) => this.#server.close(() => r()));
  }
}

const contract = (name: string, method: string, port: number, extra: string) => `
[tool]
name = "${name}"
version = "1.0.0"
description = "test tool ${name}"
timeout_seconds = 10
${extra}
[apae]
data_source = "test://${name}"
data_classification = "internal"
retention_days = 30

[http]
method = "${method}"
url = "http://127.0.0.1:${port}/${name}"
${method === "POST" ? `body_template = '{"text": "{text}"}'` : ""}

[output]
format = "json"
schema = { type = "object" }
`;

let web: Web;
let s: Sidecar;

beforeAll(async () => {
  web = await new Web().start();
  s = await startTestSidecar({
    policy: POLICY,
    extraContracts: {
      "read_page.clad.toml": contract("read_page", "GET", web.port, ""),
      "send_out.clad.toml": contract(
        "send_out",
        "POST",
        web.port,
        '[args.text]\ntype = "string"\nrequired = true\nmax_length = 200\n',
      ),
    },
  });
});

afterAll(async () => {
  await s.stop();
  await web.close();
});

const run = async (token: string = TOKENS.agentA) => {
  const r = await s.call("/v1/runs", { token, body: {} });
  expect(r.status).toBe(201);
  return r.body.runId as string;
};
const exfiltrate = (runId: string, token: string = TOKENS.agentA) =>
  s.call("/v1/execute", { token, body: { runId, tool: "send_out", parameters: { text: SECRET } } });

describe("taint escapes by opening a new run", () => {
  it("a fresh run without parentRun cannot send the secret its principal's tainted run read: the canary receives nothing", async () => {
    const first = await run();
    const read = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId: first, tool: "read_page", parameters: {} },
    });
    expect(read.body.decision).toBe("allow");
    // In the run that read it, the secret carries the page's web taint: denied.
    expect((await exfiltrate(first)).body.decision).toBe("deny");
    // A fresh run, no parentRun named: it starts with the principal's web taint.
    const fresh = await run();
    const sent = await exfiltrate(fresh);
    expect(sent.body.decision).toBe("deny");
    expect(web.canary).toEqual([]);
    // The facts show where the taint came from, and the journal says it was inherited.
    const state = await s.call(`/v1/runs/${fresh}`, { token: TOKENS.agentA });
    expect(state.body.inheritedTaint).toContain("web");
    expect(state.body.inheritedFrom).toContain(first);
    const entries = await s.call("/v1/journal?type=warden.run.taint_inherited&limit=100", {
      token: TOKENS.auditor,
    });
    expect(JSON.stringify(entries.body)).toContain(fresh);
  });

  it("another principal is not tainted by agent-a's runs", async () => {
    const theirs = await run(TOKENS.agentB);
    const sent = await exfiltrate(theirs, TOKENS.agentB);
    expect(sent.body.decision).toBe("allow");
    expect(web.canary).toHaveLength(1);
    web.canary.length = 0;
  });

  it("the agent cannot start a clean run; an approver can, and it is journaled", async () => {
    const refused = await s.call("/v1/runs/clean", {
      token: TOKENS.agentA,
      body: { principalId: "agent-a" },
    });
    expect(refused.status).toBe(403);
    const smuggled = await s.call("/v1/runs", { token: TOKENS.agentA, body: { clean: true } });
    expect(smuggled.status).toBe(400);
    const clean = await s.call("/v1/runs/clean", {
      token: TOKENS.approver,
      body: { principalId: "agent-a" },
    });
    expect(clean.status).toBe(201);
    const state = await s.call(`/v1/runs/${clean.body.runId as string}`, { token: TOKENS.approver });
    expect(state.body.taintSeen).toEqual([]);
    const entries = await s.call("/v1/journal?type=warden.run.clean_started&limit=10", {
      token: TOKENS.auditor,
    });
    const text = JSON.stringify(entries.body);
    expect(text).toContain("alice");
    expect(text).toContain("web");
  });
});
