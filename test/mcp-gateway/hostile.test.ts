// The gateway against a hostile upstream (hostile-server.mjs): poisoned descriptions,
// shadowing of another server's tool, a rug pull in the middle of a session, oversized
// and slow results, resources and prompts that are governed reads; plus the extension
// point for local tools. Driven by the SDK's Client over Streamable HTTP.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpPinStore, mcpToolHash } from "../../src/executors/index.js";
import type { ExecutionTicket } from "../../src/gate/index.js";
import type { LocalToolProvider } from "../../src/mcp-gateway/index.js";
import { compileContract, ToolContractSchema } from "../../src/tools/index.js";
import {
  FIXTURE,
  type GatewayHarness,
  HOSTILE,
  node,
  startGateway,
  TOKENS,
  text,
  wardenMeta,
} from "./harness.js";

const POLICY = `
name: gateway-hostile
version: "1.0"
rules:
  - id: critical-tools
    name: never run flagged tools
    priority: 1
    match: { riskTier: critical }
    decision: deny
    reason: flagged by the description scan
  - id: no-secret-resources
    name: secret resources stay put
    priority: 5
    match: { toolClass: mcp, action: resource_read, parameters: { uri: { pattern: "secret" } } }
    decision: deny
    reason: secret
  - id: clock-for-readers
    name: readers may read the clock
    priority: 8
    match: { toolClass: clock, action: read, roles: reader }
    decision: allow
    reason: harmless
  - id: mcp
    name: everything else over MCP
    priority: 10
    match: { toolClass: mcp }
    decision: allow
    reason: test
`;

const executed: ExecutionTicket[] = [];
const clockContract = compileContract(
  ToolContractSchema.parse({
    tool: { name: "clock_now", version: "1", description: "the gateway's clock" },
    args: {},
    mcp: { server: "local", tool: "clock_now" },
    output: { format: "json", schema: { type: "object" } },
  }),
);
if (!clockContract.ok) throw new Error("clock contract");
const clock: LocalToolProvider = {
  name: "clock",
  tools: () => [{ tool: clockContract.tool, classification: { toolClass: "clock", action: "read" } }],
  async execute(ticket) {
    executed.push(ticket);
    return {
      ok: true,
      output: { now: "2026-01-01T00:00:00Z" },
      taint: [{ source: "tool-output", origin: "clock" }],
    };
  },
};

let h: GatewayHarness;
beforeAll(async () => {
  h = await startGateway({
    policy: POLICY,
    upstreams: { hostile: node(HOSTILE), test: node(FIXTURE) },
    config: { limits: { maxOutputBytes: 10_000, maxTimeoutMs: 1000 } },
    providers: [clock],
  });
}, 60_000);
afterAll(async () => h?.stop());

const flaggedEvents = async () =>
  (await h.gw.runtime.store.query({ type: "warden.executor.mcp_tool_flagged" })).map(
    (e) => e.body as { tool: string; refused: boolean; findings: { kind: string; detail: string }[] },
  );

describe("poisoned descriptions", () => {
  it("a tool hiding instructions in tag characters is not listed, not callable, and journaled", async () => {
    const client = await h.connect();
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain("hostile__notes");
    const r = await client.callTool({ name: "hostile__notes", arguments: { text: "hi" } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^ERR_MCP_NOT_FOUND/);
    const ev = (await flaggedEvents()).find((e) => e.tool === "notes");
    expect(ev?.refused).toBe(true);
    expect(ev?.findings.map((f) => f.kind)).toEqual(
      expect.arrayContaining(["tag_characters", "instruction"]),
    );
    expect(h.gw.refused).toContainEqual(
      expect.objectContaining({ tool: "notes", code: "ERR_EXEC_MCP_TOOL_FLAGGED" }),
    );
  });

  it("a description that steers another server's tool is flagged as shadowing", async () => {
    const ev = (await flaggedEvents()).find((e) => e.tool === "helper");
    expect(ev?.findings).toContainEqual(
      expect.objectContaining({ kind: "shadowing", detail: expect.stringContaining("add") }),
    );
    const names = (await (await h.connect()).listTools()).tools.map((t) => t.name);
    expect(names).not.toContain("hostile__helper");
    expect(names).toContain("test__add");
  });

  it("an operator's approval admits a flagged tool as it is now", async () => {
    await h.gw.executor.approve("hostile", "helper");
    const client = await h.connect();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("hostile__helper");
    const r = await client.callTool({ name: "hostile__helper", arguments: { text: "ok" } });
    expect(text(r)).toBe("ok");
  });
});

describe("approvals from another process", () => {
  it("a pin written by another process (warden mcp approve) is seen by the running gateway", async () => {
    const conn = await h.gw.executor.upstreams.get("hostile");
    const notes = (await conn.listTools()).find((t) => t.name === "notes");
    if (notes === undefined) throw new Error("the hostile server has no notes tool");
    new McpPinStore(join(h.dir, "pins.json")).set("hostile", "notes", mcpToolHash(notes));
    const client = await h.connect();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("hostile__notes");
    const pins = JSON.parse(readFileSync(join(h.dir, "pins.json"), "utf8")) as {
      pins: Record<string, object>;
    };
    expect(Object.keys(pins.pins.hostile ?? {})).toEqual(expect.arrayContaining(["notes", "weather", "big"]));
  });
});

describe("a rug pull in the middle of a session", () => {
  it("the changed tool is refused at its next call, dropped from the list, and back only after approval", async () => {
    const client = await h.connect();
    const first = await client.callTool({ name: "hostile__weather", arguments: { city: "Oslo" } });
    expect(text(first)).toBe("sunny in Oslo");
    // The upstream rewrote the description during that call; the next call is refused.
    const second = await client.callTool({ name: "hostile__weather", arguments: { city: "Oslo" } });
    expect(second.isError).toBe(true);
    expect(text(second)).toMatch(/^ERR_EXEC_MCP_TOOL_CHANGED/);
    const changed = await h.gw.runtime.store.query({ type: "warden.executor.mcp_tool_changed" });
    expect(changed.some((e) => (e.body as { tool: string }).tool === "weather")).toBe(true);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("hostile__weather");
    await h.gw.executor.approve("hostile", "weather");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("hostile__weather");
  });
});

describe("bounded results", () => {
  it("an oversized result is refused with a code, and nothing of it reaches the client", async () => {
    const client = await h.connect();
    const r = await client.callTool({ name: "hostile__big", arguments: { n: 50_000 } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^ERR_EXEC_OUTPUT_TOO_LARGE/);
    expect(JSON.stringify(r)).not.toContain("zzzzzzzzzz");
    const small = await client.callTool({ name: "hostile__big", arguments: { n: 10 } });
    expect(text(small)).toBe("z".repeat(10));
  });

  it("a slow result times out with a code and the gateway keeps serving", async () => {
    const client = await h.connect();
    const r = await client.callTool({ name: "hostile__slow", arguments: { ms: 10_000 } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^ERR_EXEC_TIMEOUT/);
    const after = await client.callTool({ name: "test__add", arguments: { a: 1, b: 2 } });
    expect(text(after)).toBe("3");
  });
});

describe("resources and prompts are governed reads", () => {
  it("reads an allowed resource with mcp taint naming the resource", async () => {
    const client = await h.connect();
    const list = (await client.listResources()).resources.map((r) => r.uri);
    expect(list).toEqual(expect.arrayContaining(["hostile://greeting", "hostile://secret"]));
    const r = await client.readResource({ uri: "hostile://greeting" });
    expect(r.contents[0]).toMatchObject({ text: "hello from a resource" });
    expect(wardenMeta(r)["warden/taint"]).toContainEqual(
      expect.objectContaining({ source: "mcp", origin: "hostile:hostile://greeting" }),
    );
  });

  it("a resource read the policy denies is a coded error and the body never leaves the upstream", async () => {
    const client = await h.connect();
    const err = await client.readResource({ uri: "hostile://secret" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).message).toContain("ERR_MCP_DENIED");
    expect(JSON.stringify(err)).not.toContain("SECRET-RESOURCE-BODY");
    const evidence = await h.gw.runtime.store.query({ type: "warden.executor.evidence" });
    expect(JSON.stringify(evidence.map((e) => e.body))).not.toContain("hostile://secret");
  });

  it("gets a prompt through the Gate", async () => {
    const client = await h.connect();
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toContain("hostile__prompt_summarize");
    const r = await client.getPrompt({ name: "hostile__prompt_summarize", arguments: { topic: "tides" } });
    expect(r.messages[0]?.content).toMatchObject({ type: "text", text: "Summarize tides" });
    expect(typeof wardenMeta(r)["warden/decisionId"]).toBe("string");
  });
});

describe("local tool providers", () => {
  it("serves a provider's tool through the Gate to the principals allowed it, and only them", async () => {
    const a = await h.connect(TOKENS.a);
    expect((await a.listTools()).tools.map((t) => t.name)).toContain("clock_now");
    const r = await a.callTool({ name: "clock_now", arguments: {} });
    expect(r.structuredContent).toEqual({ now: "2026-01-01T00:00:00Z" });
    expect(executed.at(-1)).toMatchObject({ principalId: "agent-a", toolClass: "clock", action: "read" });
    const b = await h.connect(TOKENS.b);
    expect((await b.listTools()).tools.map((t) => t.name)).not.toContain("clock_now");
    const denied = await b.callTool({ name: "clock_now", arguments: {} });
    expect(text(denied)).toMatch(/^ERR_MCP_NOT_FOUND/);
    expect(executed.filter((t) => t.principalId === "agent-b")).toEqual([]);
  });
});

describe("sessions and runs", () => {
  it("a session whose run was evicted continues in a new run of the same principal", async () => {
    const session = await h.gw.session("agent-a");
    const first = session.runId;
    h.gw.runtime.sessions.end(first);
    const r = await session.callTool("test__add", { a: 1, b: 1 }, new AbortController().signal);
    expect(r).toMatchObject({ ok: true, output: { content: [{ type: "text", text: "2" }] } });
    expect(session.runId).not.toBe(first);
    expect(h.gw.runtime.sessions.get(session.runId)?.principalId).toBe("agent-a");
  });
});

describe("flagged: policy", () => {
  it("serves a flagged tool at risk tier critical, so a riskTier rule hides and denies it", async () => {
    const p = await startGateway({
      policy: POLICY,
      upstreams: { hostile: node(HOSTILE) },
      config: { flagged: "policy" },
    });
    try {
      expect(p.gw.tool("hostile__notes")?.tool.contract.tool.risk_tier).toBe("critical");
      expect(p.gw.tool("hostile__weather")?.tool.contract.tool.risk_tier).toBe("low");
      const client = await p.connect();
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("hostile__notes");
      const events = await p.gw.runtime.store.query({ type: "warden.executor.mcp_tool_flagged" });
      expect(events.map((e) => (e.body as { refused: boolean }).refused)).not.toContain(true);
    } finally {
      await p.stop();
    }
  });
});
