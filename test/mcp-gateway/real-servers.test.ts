// The gateway in front of real MCP servers from the npm registry that nobody here wrote
// (@modelcontextprotocol/server-filesystem and server-memory), driven by the official
// SDK's Client over Streamable HTTP: listing by what policy can ever allow, calls through
// the Gate and the journal, taint and provenance, credentials bound to sessions.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type GatewayHarness,
  node,
  registryServer,
  startGateway,
  TOKENS,
  text,
  wardenMeta,
} from "./harness.js";

const POLICY = `
name: gateway-real
version: "1.0"
rules:
  - id: no-secret-reads
    name: never read secrets
    priority: 5
    match: { toolClass: mcp, action: call, tool: fs__read_text_file, parameters: { path: { pattern: "secret" } } }
    decision: deny
    reason: secrets stay put
  - id: readers-do-not-write
    name: readers do not write
    priority: 10
    match: { toolClass: mcp, tool: [fs__write_file, fs__create_directory, fs__move_file], roles: reader }
    decision: deny
    reason: read only
  - id: reads
    name: reads
    priority: 20
    match: { toolClass: mcp, action: call, tool: [fs__read_text_file, fs__list_directory, fs__get_file_info, fs__list_allowed_directories] }
    decision: allow
    reason: reads are fine
  - id: writers-write
    name: writers write
    priority: 30
    match: { toolClass: mcp, action: call, roles: writer, tool: fs__write_file }
    decision: allow
    reason: writers write
  - id: memory-reads
    name: memory reads
    priority: 40
    match: { toolClass: mcp, action: call, tool: [memory__read_graph, memory__search_nodes] }
    decision: allow
    reason: reading memory is fine
`;

let dir: string;
let root: string;
let h: GatewayHarness;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "warden-gw-real-")));
  root = join(dir, "root");
  mkdirSync(root);
  writeFileSync(join(root, "hello.txt"), "hello from a real MCP server");
  writeFileSync(join(root, "secret.txt"), "TOP-SECRET");
  h = await startGateway({
    policy: POLICY,
    upstreams: {
      fs: node(registryServer("server-filesystem"), [root]),
      memory: node(registryServer("server-memory"), [], { MEMORY_FILE_PATH: join(dir, "memory.jsonl") }),
    },
  });
}, 60_000);

afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const names = async (token: string) =>
  (await (await h.connect(token)).listTools()).tools.map((t) => t.name).sort();

describe("tools/list through the gateway", () => {
  it("shows each principal only the tools its policy can ever allow", async () => {
    const a = await names(TOKENS.a);
    expect(a).toEqual([
      "fs__get_file_info",
      "fs__list_allowed_directories",
      "fs__list_directory",
      "fs__read_text_file",
      "memory__read_graph",
      "memory__search_nodes",
    ]);
    const b = await names(TOKENS.b);
    expect(b).toContain("fs__write_file");
    expect(a).not.toContain("fs__write_file");
  });

  it("pins every tool of both real servers on first sight and scans them without false alarms", async () => {
    const pins = JSON.parse(readFileSync(join(h.dir, "pins.json"), "utf8")) as {
      pins: Record<string, object>;
    };
    expect(Object.keys(pins.pins.fs ?? {})).toContain("read_text_file");
    expect(Object.keys(pins.pins.memory ?? {})).toContain("read_graph");
    const flagged = await h.gw.runtime.store.query({ type: "warden.executor.mcp_tool_flagged" });
    expect(flagged.map((e) => e.body)).toEqual([]);
  });

  it("serves the tools with required object/array arguments as json arguments under their pinned schemas", () => {
    // Before structured arguments these two were refused with ERR_EXEC_PARAMS_INVALID.
    expect(h.gw.refused).toEqual([]);
    expect(h.gw.tool("memory__create_entities")?.tool.args.get("entities")?.base).toBe("json");
    expect(h.gw.tool("fs__read_multiple_files")?.tool.args.get("paths")?.base).toBe("json");
    expect(h.gw.tool("fs__edit_file")?.tool.args.get("edits")?.base).toBe("json");
  });
});

describe("tools/call through the gateway", () => {
  it("reads a file through the filesystem server: decided, journaled, tainted mcp with provenance", async () => {
    const client = await h.connect(TOKENS.a);
    const r = await client.callTool({
      name: "fs__read_text_file",
      arguments: { path: join(root, "hello.txt") },
    });
    expect(r.isError).not.toBe(true);
    expect(text(r)).toBe("hello from a real MCP server");
    const meta = wardenMeta(r);
    expect(meta["warden/taint"]).toContainEqual(
      expect.objectContaining({ source: "mcp", origin: "fs/read_text_file" }),
    );
    const decisionId = meta["warden/decisionId"] as string;
    const decisions = await h.gw.runtime.store.query({ type: "warden.gate.decision" });
    expect(decisions.some((e) => (e.body as { decision_id?: string }).decision_id === decisionId)).toBe(true);
    const evidence = await h.gw.runtime.store.query({ type: "warden.executor.evidence" });
    expect(evidence.some((e) => (e.body as { decision_id?: string }).decision_id === decisionId)).toBe(true);
  });

  it("an agent asking for the secret file is denied before the upstream is called", async () => {
    const client = await h.connect(TOKENS.a);
    const before = (await h.gw.runtime.store.query({ type: "warden.executor.evidence" })).length;
    const r = await client.callTool({
      name: "fs__read_text_file",
      arguments: { path: join(root, "secret.txt") },
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^ERR_MCP_DENIED: deny/);
    expect(JSON.stringify(r)).not.toContain("TOP-SECRET");
    expect((await h.gw.runtime.store.query({ type: "warden.executor.evidence" })).length).toBe(before);
  });

  it("a reader calling a write tool it cannot see is refused and nothing is written", async () => {
    const client = await h.connect(TOKENS.a);
    const r = await client.callTool({
      name: "fs__write_file",
      arguments: { path: join(root, "pwned.txt"), content: "x" },
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^ERR_MCP_NOT_FOUND/);
    expect(() => readFileSync(join(root, "pwned.txt"))).toThrow();
    // The attempt is on the record: decided (deny) and journaled, though nothing ran.
    const decisionId = wardenMeta(r)["warden/decisionId"] as string;
    const decisions = await h.gw.runtime.store.query({ type: "warden.gate.decision" });
    const d = decisions.find((e) => (e.body as { decision_id?: string }).decision_id === decisionId);
    expect(d?.body).toMatchObject({ decision: "deny" });
  });

  it("a writer may write through the gateway", async () => {
    const client = await h.connect(TOKENS.b);
    const r = await client.callTool({
      name: "fs__write_file",
      arguments: { path: join(root, "w.txt"), content: "by b" },
    });
    expect(r.isError).not.toBe(true);
    expect(readFileSync(join(root, "w.txt"), "utf8")).toBe("by b");
  });

  it("arguments outside the derived contract are refused by the Gate", async () => {
    const client = await h.connect(TOKENS.a);
    const r = await client.callTool({
      name: "fs__read_text_file",
      arguments: { path: join(root, "hello.txt"), extra: 1 },
    });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^ERR_MCP_DENIED/);
  });

  it("reads the knowledge graph of the memory server", async () => {
    const client = await h.connect(TOKENS.b);
    const r = await client.callTool({ name: "memory__read_graph", arguments: {} });
    expect(r.isError).not.toBe(true);
    expect(JSON.parse(text(r))).toMatchObject({ entities: [], relations: [] });
  });
});

describe("Streamable HTTP credentials", () => {
  it("a client without a credential or with a wrong one cannot open a session", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const post = (headers: Record<string, string>) =>
      fetch(h.http.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(init),
      });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(await none.text()).toContain("ERR_MCP_AUTH");
    const wrong = await post({ authorization: "Bearer not-a-configured-token-000000" });
    expect(wrong.status).toBe(401);
  });

  it("an agent that presents its own token on another agent's session id is refused", async () => {
    const post = (token: string, body: unknown, sid?: string) =>
      fetch(h.http.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${token}`,
          "mcp-protocol-version": "2025-06-18",
          ...(sid !== undefined ? { "mcp-session-id": sid } : {}),
        },
        body: JSON.stringify(body),
      });
    const opened = await post(TOKENS.b, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "b", version: "1" } },
    });
    expect(opened.status).toBe(200);
    const sid = opened.headers.get("mcp-session-id") as string;
    const hijack = await post(TOKENS.a, { jsonrpc: "2.0", id: 2, method: "tools/list" }, sid);
    expect(hijack.status).toBe(403);
    expect(await hijack.text()).toContain("ERR_MCP_AUTH");
  });
});
