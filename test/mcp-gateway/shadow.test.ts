// Shadow mode in the MCP gateway, in front of a real MCP server from the npm registry
// (@modelcontextprotocol/server-memory): the candidate bundle would deny reading the graph;
// in shadow the call still goes through to the server and answers, and the disagreement is
// in the gateway's journal for `warden shadow report`.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shadowReport } from "../../src/evidence/index.js";
import { type GatewayHarness, node, registryServer, startGateway } from "./harness.js";

const POLICY = `
name: gateway-shadow
version: "1.0"
rules:
  - { id: memory-reads, name: memory reads, priority: 40, match: { toolClass: mcp, action: call, tool: [memory__read_graph] }, decision: allow, reason: fine }
`;
const CANDIDATE = `
name: gateway-candidate
version: "1.0"
rules:
  - { id: no-graph-dumps, name: no whole-graph reads, priority: 10, match: { toolClass: mcp, action: call, tool: memory__read_graph }, decision: deny, reason: too broad }
`;

let h: GatewayHarness;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "warden-gw-shadow-"));
  writeFileSync(join(dir, "candidate.yaml"), CANDIDATE);
  h = await startGateway({
    dir,
    policy: POLICY,
    upstreams: {
      memory: node(registryServer("server-memory"), [], { MEMORY_FILE_PATH: join(dir, "memory.json") }),
    },
    config: { shadow: { policies: ["candidate.yaml"] } },
  });
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

describe("shadow policies in the MCP gateway", () => {
  it("the read the candidate would deny reaches the real server and answers; the report names the candidate's rule", async () => {
    const client = await h.connect();
    const r = (await client.callTool({ name: "memory__read_graph", arguments: {} })) as { isError?: boolean };
    expect(r.isError ?? false).toBe(false);
    await h.gw.runtime.shadow?.settle();
    const store = h.gw.runtime.store;
    const report = await shadowReport(() => store.entries());
    expect(report.diffs).toBe(1);
    expect(report.groups[0]).toMatchObject({
      change: "allow→deny",
      shadow_rules: ["no-graph-dumps"],
      tool: "memory__read_graph",
    });
  });
});
