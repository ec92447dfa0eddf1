// A real gateway for tests: journal key, YAML policy, configuration with upstreams,
// listening on an ephemeral loopback port; clients are the official SDK's Client over
// Streamable HTTP with a bearer token. Upstream servers are real processes.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import {
  Gateway,
  type GatewayConfigInput,
  type GatewayHttp,
  type GatewayOptions,
  type McpUpstreamConfig,
  parseGatewayConfig,
  serveHttp,
} from "../../src/mcp-gateway/index.js";
import { hashToken } from "../../src/server/index.js";
import { REPO_ROOT } from "../helpers/repo.js";

export const TOKENS = {
  a: "gateway-token-agent-a-0123456789",
  b: "gateway-token-agent-b-0123456789",
} as const;

export const HOSTILE = join(REPO_ROOT, "test", "mcp-gateway", "hostile-server.mjs");
export const FIXTURE = join(REPO_ROOT, "test", "fixtures", "executors", "mcp-server.mjs");

/** A registry package's server entry point; a missing one fails the test with the fix. */
export function registryServer(pkg: "server-filesystem" | "server-memory"): string {
  const path = join(REPO_ROOT, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js");
  if (!existsSync(path)) {
    throw new Error(
      `cannot start @modelcontextprotocol/${pkg}: ${path} does not exist. ` +
        `Fix: run \`npm install\` in the repository (it is a devDependency), or \`npm install -D @modelcontextprotocol/${pkg}\`.`,
    );
  }
  return path;
}

export const node = (
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
): McpUpstreamConfig => ({
  command: process.execPath,
  args: [script, ...args],
  env,
  cwd: REPO_ROOT,
});

export interface GatewayHarness {
  dir: string;
  gw: Gateway;
  http: GatewayHttp;
  connect(token?: string): Promise<Client>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  policy: string;
  upstreams: Record<string, McpUpstreamConfig>;
  config?: Partial<GatewayConfigInput>;
  providers?: GatewayOptions["providers"];
  dir?: string;
  /**
   * `taint.carry: explicit`: a new session of a principal does not inherit its other
   * sessions' taint — for tests that isolate another mechanism (value provenance, taint kept
   * with a memory) and use a clean session as their control. Carry is tested on its own.
   */
  explicitCarry?: boolean;
}

export async function startGateway(o: HarnessOptions): Promise<GatewayHarness> {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), "warden-gw-"));
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), o.policy);
  const input: GatewayConfigInput = {
    policies: ["policy.yaml"],
    journal: { path: "journal.db", key: key.privatePem },
    gate: {
      tenant: "test",
      environment: "test",
      principals: [
        { id: "agent-a", roles: ["reader"] },
        { id: "agent-b", roles: ["writer"] },
      ],
      ...(o.explicitCarry ? { context: { taint: { carry: "explicit" as const } } } : {}),
    },
    upstreams: o.upstreams,
    pins: "pins.json",
    stdio: { principal: "agent-a" },
    http: {
      host: "127.0.0.1",
      port: 0,
      principals: [
        { id: "agent-a", tokenSha256: hashToken(TOKENS.a) },
        { id: "agent-b", tokenSha256: hashToken(TOKENS.b) },
      ],
    },
    ...o.config,
  };
  const gw = await Gateway.open(
    parseGatewayConfig(input, dir),
    o.providers ? { providers: o.providers } : {},
  );
  const http = await serveHttp(gw);
  const clients: Client[] = [];
  return {
    dir,
    gw,
    http,
    async connect(token = TOKENS.a) {
      const client = new Client({ name: "test-client", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(http.url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      return client;
    },
    async stop() {
      for (const c of clients) await c.close().catch(() => undefined);
      await http.close();
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The text of a tool result's first content item. */
export function text(r: unknown): string {
  const c = (r as { content?: { type: string; text?: string }[] }).content?.[0];
  return c?.text ?? "";
}

export function wardenMeta(r: unknown): Record<string, unknown> {
  return ((r as { _meta?: Record<string, unknown> })._meta ?? {}) as Record<string, unknown>;
}
