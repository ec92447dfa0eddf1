// A real sidecar for tests: key file, YAML policy, tool contracts (an exec echo and
// HTTP tools pointing at a local service that counts what reaches it), SQLite journal,
// hashed credentials, started on an ephemeral loopback port.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import {
  hashToken,
  type LoadedSidecarConfig,
  openSidecarRuntime,
  parseSidecarConfig,
  type RuntimeOverrides,
  type SidecarConfigInput,
  type SidecarServer,
  startSidecar,
} from "../../src/server/index.js";

export const TOKENS = {
  agentA: "token-agent-a-0123456789",
  agentB: "token-agent-b-0123456789",
  approver: "token-approver-0123456789",
  auditor: "token-auditor-0123456789",
} as const;

export const POLICY = `
name: sidecar-test
version: "1.0"
rules:
  - id: deny-rm
    name: no rm
    priority: 100
    match: { toolClass: shell, parameters: { msg: { pattern: "^rm" } } }
    decision: deny
    reason: destructive
  - id: allow-echo
    name: echo is fine
    priority: 200
    match: { toolClass: shell, action: exec }
    decision: allow
    reason: harmless
  - id: allow-get
    name: reads
    priority: 210
    match: { toolClass: http, action: get }
    decision: allow
    reason: reads are fine
  - id: approve-post
    name: publishing needs a human
    priority: 220
    match: { toolClass: http, action: post }
    decision: require-approval
    stepUp: { approverRole: approver, timeout: 20s }
    reason: egress
  - id: approve-put-quickly
    name: a short approval window
    priority: 230
    match: { toolClass: http, action: put }
    decision: require-approval
    stepUp: { approverRole: approver, timeout: 300ms }
    reason: egress
  - id: defer-delete
    name: deletes wait
    priority: 240
    match: { toolClass: file, action: delete }
    decision: defer
    defer: { timeout: 20s }
    reason: batched
`;

/** The local service the HTTP tools call: counts requests, can be slow. */
export class ToolService {
  readonly hits: { method: string; url: string; body: string }[] = [];
  readonly #server: Server;
  #onHit: (() => void)[] = [];
  port = 0;

  constructor() {
    this.#server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString("utf8");
      });
      req.on("end", () => {
        this.hits.push({ method: req.method ?? "", url: req.url ?? "", body });
        for (const f of this.#onHit.splice(0)) f();
        const ms = Number(new URL(req.url ?? "/", "http://x").searchParams.get("ms") ?? "0");
        setTimeout(() => {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ ok: true, method: req.method, got: body.length }));
        }, ms);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, "127.0.0.1", r));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  /** Resolves at the next request the service receives. */
  nextHit(): Promise<void> {
    return new Promise((r) => this.#onHit.push(r));
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((r) => this.#server.close(() => r()));
  }
}

function contracts(port: number): Record<string, string> {
  const http = (name: string, method: string, path: string, args: string, body?: string) => `
[tool]
name = "${name}"
version = "1.0.0"
description = "test tool ${name}"
timeout_seconds = 10
${args}
[apae]
data_source = "test://${name}"
data_classification = "internal"
retention_days = 30

[http]
method = "${method}"
url = "http://127.0.0.1:${port}${path}"
${body !== undefined ? `body_template = '${body}'` : ""}

[output]
format = "json"
schema = { type = "object" }
`;
  return {
    "echo_tool.clad.toml": `
[tool]
name = "echo_tool"
version = "1.0.0"
description = "Echo a message"

[args.msg]
type = "string"
required = true
position = 1

[apae]
data_source = "test://echo_tool"
data_classification = "internal"
retention_days = 30

[command]
exec = ["echo", "{msg}"]

[output]
format = "text"
schema = { type = "object", required = ["raw_output"] }
`,
    "slow_fetch.clad.toml": http(
      "slow_fetch",
      "GET",
      "/slow?ms={ms}",
      `
[args.ms]
type = "integer"
required = true
min = 0
max = 5000
`,
    ),
    "publish.clad.toml": http(
      "publish",
      "POST",
      "/publish",
      `
[args.text]
type = "string"
required = true
max_length = 200
`,
      '{"text": "{text}"}',
    ),
    "quick_put.clad.toml": http(
      "quick_put",
      "PUT",
      "/put",
      `
[args.text]
type = "string"
required = true
`,
      '{"text": "{text}"}',
    ),
  };
}

export interface Sidecar {
  server: SidecarServer;
  url: string;
  dir: string;
  loaded: LoadedSidecarConfig;
  service: ToolService;
  /** fetch against the sidecar with a credential. */
  call(
    path: string,
    init?: {
      method?: string;
      token?: string;
      body?: unknown;
      raw?: string;
      headers?: Record<string, string>;
    },
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  /**
   * The id of the run named `label` in this test, created through POST /v1/runs for the
   * token's principal on first use (runs are created by the runtime, never named by the
   * caller). The same label always answers the same run.
   */
  run(label: string, token?: string): Promise<string>;
  stop(): Promise<void>;
}

export interface SidecarOptions {
  config?: Partial<SidecarConfigInput>;
  /** Merged into the journal section (its path and key are the harness's own). */
  journal?: Partial<Omit<SidecarConfigInput["journal"], "path" | "key">>;
  overrides?: RuntimeOverrides;
  policy?: string;
  /** gate.requireContract; unset keeps the sidecar's default (true). */
  requireContract?: boolean;
  /** More contract files (name → TOML), written beside the harness's own. */
  extraContracts?: Record<string, string>;
  /** gate.context (the session context's configuration). */
  context?: Record<string, unknown>;
}

export async function startTestSidecar(o: SidecarOptions = {}): Promise<Sidecar> {
  const dir = mkdtempSync(join(tmpdir(), "warden-sidecar-"));
  const service = await new ToolService().start();
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), o.policy ?? POLICY);
  mkdirSync(join(dir, "contracts"));
  for (const [name, text] of Object.entries({ ...contracts(service.port), ...o.extraContracts })) {
    writeFileSync(join(dir, "contracts", name), text);
  }
  mkdirSync(join(dir, "work"));
  const input: SidecarConfigInput = {
    host: "127.0.0.1",
    port: 0,
    policies: ["policy.yaml"],
    contracts: "contracts",
    journal: { path: "journal.db", key: key.privatePem, busyTimeoutMs: 50, ...o.journal },
    gate: {
      tenant: "test",
      environment: "test",
      principals: [
        { id: "agent-a", roles: ["agent"] },
        { id: "agent-b", roles: ["agent"] },
      ],
      ...(o.requireContract !== undefined ? { requireContract: o.requireContract } : {}),
      ...(o.context !== undefined ? { context: o.context } : {}),
    },
    auth: {
      principals: [
        { id: "agent-a", tokenSha256: hashToken(TOKENS.agentA) },
        { id: "agent-b", tokenSha256: hashToken(TOKENS.agentB) },
      ],
      approvers: [
        { id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) },
        { id: "audrey", roles: ["auditor"], tokenSha256: hashToken(TOKENS.auditor) },
      ],
    },
    executors: {
      http: { allowLoopback: true },
      process: { workDir: "work" },
    },
    shutdown: { graceMs: 2000 },
    ...o.config,
  };
  const loaded = parseSidecarConfig(input, dir);
  const runtime = await openSidecarRuntime(loaded, o.overrides ?? {});
  const server = await startSidecar(runtime);
  const url = server.url as string;
  const runs = new Map<string, Promise<string>>();
  const sidecar: Sidecar = {
    server,
    url,
    dir,
    loaded,
    service,
    async call(path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
      let body: string | undefined = init.raw;
      if (init.body !== undefined) body = JSON.stringify(init.body);
      if (body !== undefined && headers["content-type"] === undefined)
        headers["content-type"] = "application/json";
      const res = await fetch(`${url}${path}`, {
        method: init.method ?? (body !== undefined ? "POST" : "GET"),
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      const text = await res.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        parsed = { text };
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    run(label, token = TOKENS.agentA) {
      let id = runs.get(label);
      if (id === undefined) {
        id = sidecar.call("/v1/runs", { token, body: {} }).then((r) => {
          if (r.status !== 201 || typeof r.body.runId !== "string")
            throw new Error(`POST /v1/runs answered ${r.status}: ${JSON.stringify(r.body)}`);
          return r.body.runId;
        });
        runs.set(label, id);
      }
      return id;
    },
    async stop() {
      await server.close();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return sidecar;
}

/** An echo call for agent-a. */
export const echo = (msg: string, over: Record<string, unknown> = {}) => ({
  runId: "run-a",
  toolClass: "shell",
  action: "exec",
  tool: "echo_tool",
  parameters: { msg },
  ...over,
});

export { until } from "../helpers/until.js";
