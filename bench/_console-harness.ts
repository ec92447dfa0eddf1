// The console's end-to-end harness, shared by its browser tests (test/console) and the
// approval round-trip bench (bench/console.ts): a real sidecar with the console on and a
// step-up contract (`send_note`, an HTTP POST to a loopback service that records what
// reaches it), an approver, a second approver, an auditor and an operator without console
// roles; and the real browser: the Chromium build from npm (bench/_chromium.ts) or WARDEN_CHROMIUM.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import {
  hashToken,
  openSidecarRuntime,
  parseSidecarConfig,
  type SidecarConfigInput,
  type SidecarServer,
  type SidecarServerOptions,
  startSidecar,
} from "../src/server/index.js";
import { findChromium } from "./_chromium.js";

/** The loopback service the step-up tool posts to: records every request. */
export class NoteService {
  readonly hits: { method: string; url: string; body: string }[] = [];
  readonly #server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      this.hits.push({ method: req.method ?? "", url: req.url ?? "", body });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ ok: true }));
    });
  });
  port = 0;

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

export const TOKENS = {
  agent: "token-console-agent-0123456789",
  approver: "token-console-alice-0123456789",
  approver2: "token-console-bob-0123456789",
  auditor: "token-console-audrey-0123456789",
  operator: "token-console-olga-0123456789",
} as const;

export const POLICY = `
name: console-test
version: "1.0"
rules:
  - id: notes-need-a-human
    name: sending a note needs an approver
    priority: 100
    match: { toolClass: http, action: post }
    decision: require-approval
    stepUp: { approverRole: approver, timeout: 120s }
    reason: egress to a person
  - id: messages-need-a-human
    name: a contract-less message needs an approver (its parameters are not screened by a contract)
    priority: 110
    match: { toolClass: message, action: send }
    decision: require-approval
    stepUp: { approverRole: approver, timeout: 120s }
    reason: free-form message
  - id: archiving-waits
    name: archiving is deferred to an approver
    priority: 115
    match: { toolClass: http, action: put }
    decision: defer
    defer: { timeout: 120s }
    reason: batched archiving
  - id: no-shell
    name: no shell for this agent
    priority: 120
    match: { toolClass: shell }
    decision: deny
    reason: shell is not allowed
`;

const CONTRACT = (port: number) => `
[tool]
name = "send_note"
version = "1.0.0"
description = "Send a note"
timeout_seconds = 10
risk_tier = "high"

[args.to]
type = "string"
required = true
max_length = 1048576

[args.text]
type = "string"
required = true
max_length = 1048576

[args.count]
type = "integer"
required = true
min = 0
max = 10

[apae]
data_source = "test://send_note"
data_classification = "internal"
retention_days = 30

[http]
method = "POST"
url = "http://127.0.0.1:${port}/note"
body_template = '{"to": "{to}", "count": "{count}"}'

[output]
format = "json"
schema = { type = "object" }
`;

/** A deferred contract: archiving a note (HTTP PUT to the same loopback service). */
const ARCHIVE = (port: number) => `
[tool]
name = "archive_note"
version = "1.0.0"
description = "Archive a note"
timeout_seconds = 10

[args.id]
type = "string"
required = true
max_length = 64

[apae]
data_source = "test://archive_note"
data_classification = "internal"
retention_days = 30

[http]
method = "PUT"
url = "http://127.0.0.1:${port}/archive/{id}"

[output]
format = "json"
schema = { type = "object" }
`;

export interface ConsoleSidecar {
  readonly server: SidecarServer;
  readonly url: string;
  readonly dir: string;
  readonly service: NoteService;
  /** POST /v1/runs for the agent; the run id. */
  run(): Promise<string>;
  /** Starts an agent call that blocks on step-up; resolves with the sidecar's answer. */
  sendNote(runId: string, p: { to: string; text: string; count: number }): Promise<Record<string, unknown>>;
  /** An `archive_note` call, deferred by policy: blocks until released or denied. */
  archiveNote(runId: string, id: string): Promise<Record<string, unknown>>;
  /** A contract-less `message.send` that blocks on step-up (no executor runs it); the answer. */
  sendMessage(runId: string, parameters: Record<string, unknown>): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startConsoleSidecar(
  consoleConfig: Record<string, unknown> = {},
  more: Partial<SidecarConfigInput> = {},
  serverOptions: SidecarServerOptions = {},
  policy: string = POLICY,
): Promise<ConsoleSidecar> {
  const dir = mkdtempSync(join(tmpdir(), "warden-console-"));
  const service = await new NoteService().start();
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), policy);
  mkdirSync(join(dir, "contracts"));
  writeFileSync(join(dir, "contracts", "send_note.clad.toml"), CONTRACT(service.port));
  writeFileSync(join(dir, "contracts", "archive_note.clad.toml"), ARCHIVE(service.port));
  const input: SidecarConfigInput = {
    host: "127.0.0.1",
    port: 0,
    policies: ["policy.yaml"],
    contracts: "contracts",
    journal: { path: "journal.db", key: key.privatePem, busyTimeoutMs: 200 },
    // Contract-less calls are allowed so agent text no contract screens reaches the approver.
    gate: {
      tenant: "test",
      environment: "test",
      principals: [{ id: "agent-a", roles: ["agent"] }],
      requireContract: false,
      // Each test's run stands for an unrelated task of one agent (the documented case for
      // `explicit`): the taint an earlier test's approved send brought in must not decide the
      // next test's step-up. Carry itself is tested in test/server/taint-carry-*.
      context: { taint: { carry: "explicit" } },
    },
    auth: {
      principals: [{ id: "agent-a", tokenSha256: hashToken(TOKENS.agent) }],
      approvers: [
        { id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) },
        { id: "bob", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver2) },
        { id: "audrey", roles: ["auditor"], tokenSha256: hashToken(TOKENS.auditor) },
        { id: "olga", roles: ["ops"], tokenSha256: hashToken(TOKENS.operator) },
      ],
    },
    executors: { http: { allowLoopback: true } },
    limits: { bodyBytes: 4 * 1024 * 1024 },
    shutdown: { graceMs: 1000 },
    console: { enabled: true, ...consoleConfig },
    ...more,
  };
  const runtime = await openSidecarRuntime(parseSidecarConfig(input, dir));
  const server = await startSidecar(runtime, {}, serverOptions);
  const url = server.url as string;
  const api = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKENS.agent}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return {
    server,
    url,
    dir,
    service,
    async run() {
      const r = await api("/v1/runs", {});
      if (r.status !== 201) throw new Error(`POST /v1/runs answered ${r.status}`);
      return r.body.runId as string;
    },
    async sendNote(runId, parameters) {
      const r = await api("/v1/execute", {
        runId,
        toolClass: "http",
        action: "post",
        tool: "send_note",
        parameters,
      });
      return { status: r.status, ...r.body };
    },
    async archiveNote(runId, id) {
      const r = await api("/v1/execute", {
        runId,
        toolClass: "http",
        action: "put",
        tool: "archive_note",
        parameters: { id },
      });
      return { status: r.status, ...r.body };
    },
    async sendMessage(runId, parameters) {
      const r = await api("/v1/execute", { runId, toolClass: "message", action: "send", parameters });
      return { status: r.status, ...r.body };
    },
    async stop() {
      await server.close();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The executable the browser runs from (bench/_chromium.ts): WARDEN_CHROMIUM, npm's build, or the system's. */
export async function chromiumPath(): Promise<string> {
  return (await findChromium()).executablePath;
}

export async function launchChromium(): Promise<Browser> {
  const { executablePath, env } = await findChromium();
  return chromium.launch({
    executablePath,
    headless: true,
    timeout: 60_000,
    env: { ...(process.env as Record<string, string>), ...env },
  });
}
